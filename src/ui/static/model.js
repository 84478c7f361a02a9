// What the page knows of the emulator, shared by the panels; and the emulated now.

export const KINDS = ['grid', 'environment', 'rsdb'];

export const model = {
  clock: null,
  /** performance.now() when the clock was read, to let it run on between reads. */
  clockReadAt: 0,
  /** Numbers the clock requests in the order they are sent, so that an older answer never overwrites a newer one. */
  clockAsked: 0,
  clockShown: 0,
  lifecycles: null,
  /** "kind:id" -> the lifecycle entry of every resource. */
  positions: new Map(),
  /** "kind:id" -> what the resource looked like when it was last read. */
  seen: new Map(),
  names: { grid: new Map(), environment: new Map(), rsdb: new Map() },
  views: { grid: new Map(), environment: new Map(), rsdb: new Map() },
  /** cloud server id -> the grid it belongs to. */
  serverGrid: new Map(),
  alerts: [],
  /** The latest deliveries of the outbox, newest first. */
  deliveries: [],
  faults: [],
  journal: { size: 0, total: 0, entries: [] },
  domains: [],
  annotations: [],
  /** Set when the names of the resources (or the domains) must be read again. */
  catalogNeeded: true,
};

export const positionKey = (kind, id) => `${kind}:${id}`;

/** Call right before asking the emulator for its clock; pass the number to applyClock. */
export const clockRequest = () => ++model.clockAsked;

/**
 * Takes a clock answer (GET or PUT /clock, POST /clock/advance) for request number
 * `request`. An answer to a request sent before the one shown is older than what the page
 * shows (a read under way while the clock is frozen), and is dropped.
 */
export function applyClock(status, request, readAt = performance.now()) {
  if (request <= model.clockShown) return false;
  model.clock = status;
  model.clockReadAt = readAt;
  model.clockShown = request;
  return true;
}

/**
 * An emulated time the emulator stated (an answer's X-Emulator-Now, an event's `at`): the
 * clock runs on from it. An answer's time only moves the clock forward (an answer may have
 * been under way while a newer one was taken in); `exact` (an event, in the world's order)
 * sets it as it is.
 */
export function noteNow(now, exact = false) {
  const c = model.clock;
  if (!c || (!exact && now <= emulatedNow())) return;
  model.clock = { ...c, now };
  model.clockReadAt = performance.now();
}

/** A clock.changed event: the time, speed and freeze it reports, and the next transition when it says. */
export function applyClockEvent(data) {
  if (!model.clock) return false;
  const scale = data.rate ?? data.scale;
  model.clock = {
    ...model.clock,
    now: data.now ?? data.at ?? model.clock.now,
    ...(typeof scale === 'number' ? { scale } : {}),
    ...(typeof data.frozen === 'boolean' ? { frozen: data.frozen } : {}),
    ...('nextTransitionAt' in data ? { nextTransitionAt: data.nextTransitionAt ?? undefined } : {}),
  };
  model.clockReadAt = performance.now();
  // Any clock answer still under way predates this event.
  model.clockShown = model.clockAsked;
  return true;
}

/** Emulated now, running on between reads at the clock's speed; standing still while it is frozen. */
export function emulatedNow() {
  const c = model.clock;
  if (!c) return 0;
  return c.frozen ? c.now : c.now + (performance.now() - model.clockReadAt) * c.scale;
}

const forgetters = [];
/** What a panel drops after a reset or an import, when everything it read may be gone. */
export function onForget(fn) {
  forgetters.push(fn);
}

export function forgetEverything() {
  model.seen.clear();
  model.serverGrid.clear();
  for (const kind of KINDS) model.views[kind].clear();
  for (const fn of forgetters) fn();
}
