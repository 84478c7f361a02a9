// The cloud-emulator dashboard: plain ES modules, no framework, no build step. It is a
// client like any other: it reads and steers the emulator only through the public control
// API and the three emulated interfaces, which is also what it demonstrates.
//
// api.js talks to the emulator, paths.js knows where (from the server) and which world (the
// default one, or the sandbox the page was loaded under), model.js holds what was read,
// refresh.js polls, sandboxes.js is the picker, and each panel has its module.
import { auth, showUser } from './api.js';
import { fillStartTime, resetAnnotationForm, wireAnnotations } from './annotations.js';
import { wireClock } from './clock.js';
import { validateOnceTouched } from './dom.js';
import { wireFaults } from './faults.js';
import { wireJournal } from './journal.js';
import { reloadObjects, wireObjects } from './objects.js';
import { poll } from './poll.js';
import { startPolling } from './refresh.js';
import { wireRum } from './rum.js';
import { wireSandboxes } from './sandboxes.js';
import { wireSession } from './session.js';

validateOnceTouched();
wireSandboxes();
wireClock();
wireAnnotations();
wireFaults();
wireJournal();
wireObjects();
wireRum();
wireSession();
resetAnnotationForm();
if (auth.token) showUser();
await startPolling(poll);
fillStartTime();
// Once the first poll has a session: objects are read when asked, and this is the first ask.
reloadObjects().catch(() => undefined);
