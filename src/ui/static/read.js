// What the page reads, and when: everything at once (at start, after the user's own action,
// after a reset or an import), or, for each batch of events of the world's stream, only the
// panels those events changed. live.js decides when; this module what.
import { ApiFailure, api } from './api.js';
import { renderAlerts } from './alerts.js';
import { followClock, reloadAnnotations, renderDomainChoices } from './annotations.js';
import { readClock, renderClock } from './clock.js';
import { notifyOnce } from './dom.js';
import { renderFaults } from './faults.js';
import { journalQuery, journalVisible, renderJournal } from './journal.js';
import { polling } from './live.js';
import { readSeed } from './seed.js';
import { applyClockEvent, emulatedNow, forgetEverything, model, noteNow, onForget } from './model.js';
import { reloadObjects } from './objects.js';
import { PATHS } from './paths.js';
import { acceptTransition, readChangedResources, renderResources } from './resources.js';
import { readCompositions, renderCompositions } from './compositions.js';
import { maybeReadSandboxes, sandboxesChanged } from './sandboxes.js';
import { followRum, renderRumChoices } from './rum.js';
import { readTimeline, renderTimeline } from './timeline.js';

const RETRY_MS = 10_000;
let catalogRetryAt = 0;

/** Newest journal id of an annotation change the page has read (-1: none; undefined: not looked yet). */
let annotationMark;

onForget(() => {
  model.catalogNeeded = true;
  catalogRetryAt = 0;
  annotationMark = undefined;
});

/**
 * Without an event stream, annotations changed by others are seen in the request journal: they
 * are read again when it shows a change the page has not read yet (the page reads its own
 * changes at once, and the journal leaves its requests out).
 */
async function reloadAnnotationsIfJournaled() {
  const marks = await api('GET', control('/journal'), { query: { pathPrefix: PATHS.annotations, limit: 20 } });
  const newest = marks.entries.find((e) => e.method !== 'GET' && e.status < 400)?.id ?? -1;
  const first = annotationMark === undefined;
  if (newest === annotationMark) return;
  annotationMark = newest;
  if (!first) await reloadAnnotations();
}

const control = (path) => `${PATHS.control}${path}`;

const readLifecycles = async () => {
  model.lifecycles = await api('GET', control('/lifecycles'));
  // The lifecycles' answer says when the next transition is: the clock's countdown follows it.
  if (model.clock) model.clock = { ...model.clock, nextTransitionAt: model.lifecycles.nextTransitionAt };
};
const readJournal = async () => {
  model.journal = await api('GET', control('/journal'), { query: journalQuery() });
};
const readFaults = async () => {
  model.faults = await api('GET', control('/faults'));
};
const readAlerts = async () => {
  const [alerts, outbox] = await Promise.all([api('GET', control('/alerts')), api('GET', control('/deliveries'), { query: { limit: 10 } })]);
  model.alerts = alerts;
  model.deliveries = outbox.deliveries;
};

/**
 * Runs reads of the interfaces (a fault rule may well hit this page too): a failure is
 * reported and the rest of the page goes on.
 */
async function attemptAll(reads) {
  const results = await Promise.allSettled(reads.map((read) => read()));
  for (const r of results) {
    if (r.status !== 'rejected') continue;
    if (!(r.reason instanceof ApiFailure)) throw r.reason;
    notifyOnce(`could not read: ${r.reason.describe()}`);
  }
}

/**
 * Reads everything the page shows, and draws every panel. The annotations are read with the
 * catalogue (at first, after a reset or an import); then on their events, or, without a
 * stream, when the journal shows them changed.
 */
export async function readAll() {
  // The seed's problems first, and without a session: a folder that had problems at start
  // leaves a world with no user to sign in as, and the banner says why while the page asks.
  const seed = readSeed();
  seed.catch(() => undefined);
  await Promise.all([readClock(), readLifecycles(), readJournal(), readFaults(), readAlerts()]);
  if (model.catalogNeeded && performance.now() >= catalogRetryAt) await attemptAll([readCatalog]);
  await attemptAll([
    readChangedResources,
    readCompositions,
    ...(polling() ? [reloadAnnotationsIfJournaled] : []),
    maybeReadSandboxes,
    readTimeline,
    () => seed,
    () => followRum(),
  ]);
  renderClock();
  renderResources();
  renderCompositions();
  renderAlerts();
  renderFaults();
  renderJournal();
  renderTimeline();
  followClock();
}

/** The kinds of the event stream that the lifecycles answer knows by another name. */
const KIND_OF_EVENT = { server: 'cloudServer' };

/**
 * A batch of events of the world's stream: each refreshes what it changed (a transition its
 * resource's card, then the lifecycles once; an alert event the alerts; ...). A reset, an
 * import or a reloaded seed changes everything: then everything is read again.
 */
export async function onEvents(events) {
  const due = new Set();
  let changed = false;
  for (const event of events) {
    if (typeof event.at === 'number') noteNow(event.at, true);
    const type = String(event.type ?? '');
    if (type === 'heartbeat') continue;
    changed = true;
    // stream.reset: events were missed (a resume from beyond what the stream could replay), so nothing read is sure.
    if (type === 'world.reset' || type === 'world.imported' || type === 'world.reloaded' || type === 'stream.reset') {
      forgetEverything();
      return readAll();
    }
    if (type === 'clock.changed') {
      if (!applyClockEvent(event)) due.add('clock');
      due.add('clock-moved');
    } else if (type === 'transition') {
      const kind = KIND_OF_EVENT[event.kind] ?? event.kind;
      if (kind === 'instance') due.add('compositions');
      else if (acceptTransition(kind, event)) due.add('lifecycles');
    } else if (type.startsWith('annotation.')) due.add('annotations');
    else if (type.startsWith('alert.') || type.startsWith('delivery.')) due.add('alerts');
    else if (type.startsWith('object.')) due.add('objects');
    else if (type.startsWith('fault.')) due.add('faults');
    else if (type.startsWith('sandbox.')) sandboxesChanged();
    else if (type.startsWith('timeline.')) due.add('timeline');
    else if (type === 'seed.refused') due.add('seed');
  }
  // Drawn at once from the events themselves; the reads below complete the picture.
  if (due.has('lifecycles')) renderResources();
  if (due.has('clock-moved')) {
    renderClock();
    followClock();
  }
  const reads = [];
  if (due.has('clock')) reads.push(readClock);
  if (due.has('lifecycles')) reads.push(async () => {
    await readLifecycles();
    await readChangedResources();
  });
  // A threshold rule's value follows the clock, a minute at a time: its alert is read again once
  // the clock has moved past the end of the next minute it will evaluate.
  if (due.has('clock-moved') && model.alerts.some((a) => a.ruleStatus && emulatedNow() >= a.ruleStatus.evaluatedAt + 60_000)) due.add('alerts');
  if (due.has('alerts')) reads.push(readAlerts);
  if (due.has('faults')) reads.push(readFaults);
  if (due.has('seed')) reads.push(readSeed);
  if (due.has('compositions') || due.has('clock-moved')) reads.push(readCompositions);
  if (due.has('annotations')) reads.push(reloadAnnotations);
  if (due.has('objects')) reads.push(reloadObjects);
  if (due.has('timeline')) reads.push(readTimeline);
  if (due.has('annotations') || due.has('clock-moved')) reads.push(() => followRum(due.has('annotations')));
  reads.push(maybeReadSandboxes);
  // The journal has no events of its own: while it is on screen, it is read after any change.
  if (changed && journalVisible()) reads.push(readJournal);
  await attemptAll(reads);
  if (due.has('clock') || due.has('lifecycles')) renderClock();
  if (due.has('lifecycles')) renderResources();
  if (due.has('compositions') || due.has('clock-moved')) renderCompositions();
  if (due.has('alerts')) renderAlerts();
  if (due.has('faults')) renderFaults();
  if (due.has('timeline')) renderTimeline();
  if (changed && journalVisible()) renderJournal();
}

/** Names of the grids, environments and RSDBs, from the Repository service, and the domains. */
async function readCatalog() {
  try {
    const [grids, environments, rsdbs, domains] = await Promise.all(
      ['grid', 'testenvironment', 'rsdb', 'domain'].map((type) => api('GET', `${PATHS.repository}/Objects/${type}`)),
    );
    model.names.grid = new Map(grids.objects.map((o) => [o.id, o.name]));
    model.names.environment = new Map(environments.objects.map((o) => [o.id, o.name]));
    model.names.rsdb = new Map(rsdbs.objects.map((o) => [o.id, o.name]));
    model.domains = domains.objects;
    renderDomainChoices();
    renderRumChoices();
    model.catalogNeeded = false;
    await reloadAnnotations();
  } catch (err) {
    catalogRetryAt = performance.now() + RETRY_MS;
    throw err;
  }
}
