// The cloud-emulator dashboard: plain ES modules, no framework, no build step. It is a
// client like any other: it reads and steers the emulator only through the public control
// API and the three emulated interfaces, which is also what it demonstrates.
//
// api.js talks to the emulator, paths.js knows where (from the server) and which world (the
// default one, or the sandbox the page was loaded under), model.js holds what was read,
// live.js follows the world's event stream, read.js reads what the events changed,
// sandboxes.js is the picker, presenter.js the presenter view, timeline.js the timeline
// scrubber, and each panel has its module.
import { auth, showUser } from './api.js';
import { fillStartTime, resetAnnotationForm, wireAnnotations } from './annotations.js';
import { wireClock } from './clock.js';
import { validateOnceTouched } from './dom.js';
import { wireFaults } from './faults.js';
import { wireJournal } from './journal.js';
import { reloadObjects, wireObjects } from './objects.js';
import { startLive } from './live.js';
import { wirePresenter } from './presenter.js';
import { onEvents, readAll } from './read.js';
import { wireRum } from './rum.js';
import { wireSandboxes } from './sandboxes.js';
import { wireSession } from './session.js';
import { wireTimeline } from './timeline.js';

validateOnceTouched();
wireSandboxes();
wirePresenter();
wireClock();
wireAnnotations();
wireFaults();
wireJournal();
wireObjects();
wireRum();
wireSession();
wireTimeline();
resetAnnotationForm();
if (auth.token) showUser();
await startLive({ readAll, onEvents });
fillStartTime();
// Once the first read has a session: objects are read when asked, and this is the first ask.
reloadObjects().catch(() => undefined);
