// What the page knows of the emulator, shared by the panels; and the emulated now.

export const KINDS = ['grid', 'environment', 'rsdb'];

export const model = {
  clock: null,
  /** performance.now() when the clock was read, to let it run on between polls. */
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
  faults: [],
  journal: { size: 0, total: 0, entries: [] },
  domains: [],
  annotations: [],
  /** Newest journal id of an annotation change this page has already read (-1: none; undefined: not looked yet). */
  annotationMark: undefined,
  annotationsReadAt: 0,
  annotationsRetryAt: 0,
  /** Set when the names of the resources (or the domains) must be read again. */
  catalogNeeded: true,
};

export const positionKey = (kind, id) => `${kind}:${id}`;

/** Call right before asking the emulator for its clock; pass the number to applyClock. */
export const clockRequest = () => ++model.clockAsked;

/**
 * Takes a clock answer (GET or PUT /clock, POST /clock/advance) for request number
 * `request`. An answer to a request sent before the one shown is older than what the page
 * shows (a poll under way while the clock is frozen), and is dropped.
 */
export function applyClock(status, request, readAt = performance.now()) {
  if (request <= model.clockShown) return false;
  model.clock = status;
  model.clockReadAt = readAt;
  model.clockShown = request;
  return true;
}

/** Emulated now, running on between polls at the clock's speed; standing still while it is frozen. */
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
  model.annotationMark = undefined;
  for (const fn of forgetters) fn();
}
