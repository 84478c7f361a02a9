/**
 * Lazy timed state machines. An action does not start timers: it writes a schedule of
 * future states with the absolute time each one begins. Reading a resource works out its
 * state from the clock, so advancing the clock moves every lifecycle at once and each step
 * lands exactly on its boundary, however late it is read.
 */

/** A state a resource is in from `at` (epoch ms) until the next step begins. */
export interface Step<S extends string = string> {
  state: S;
  at: number;
}

/** One row of a lifecycle table: a state and the duration (by name) it lasts. */
export interface TableStep<S extends string = string, D extends string = string> {
  state: S;
  /** Name of the duration this state lasts; absent on the last row, which lasts. */
  holds?: D;
}

export type Table<S extends string = string, D extends string = string> = readonly TableStep<S, D>[];

export interface Position<S extends string> {
  state: S;
  /** When the current state began. */
  since: number;
  /** The next scheduled step, if any. */
  next?: Step<S>;
}

/** The state of a schedule at `now`. The schedule must be sorted and non-empty. */
export function positionAt<S extends string>(steps: readonly Step<S>[], now: number): Position<S> {
  let i = 0;
  while (i + 1 < steps.length && steps[i + 1].at <= now) i++;
  return { state: steps[i].state, since: steps[i].at, next: steps[i + 1] };
}

/** The state alone; read on every request, so it allocates nothing. */
export function stateAt<S extends string>(steps: readonly Step<S>[], now: number): S {
  let i = 0;
  while (i + 1 < steps.length && steps[i + 1].at <= now) i++;
  return steps[i].state;
}

/** When `state` was (or will be) first entered in this schedule, if at all. */
export function enteredAt<S extends string>(steps: readonly Step<S>[], state: S): number | undefined {
  return steps.find((s) => s.state === state)?.at;
}

/**
 * Turns a table into absolute steps starting at `from`. `scale` multiplies every duration
 * (TIME_SCALE); with 0 every step lands at `from`, so the last state is reached at once.
 */
export function planFrom<S extends string, D extends string>(
  table: Table<S, D>,
  durations: Readonly<Record<D, number>>,
  from: number,
  scale: number,
): Step<S>[] {
  const steps: Step<S>[] = [];
  let at = from;
  for (const row of table) {
    steps.push({ state: row.state, at });
    if (row.holds !== undefined) at += Math.round((durations[row.holds] ?? 0) * scale);
  }
  return steps;
}

/**
 * Replaces the future of a schedule: the steps already begun by `now` stay (they are
 * history), the ones not yet begun are dropped, and `plan` follows.
 */
export function reschedule<S extends string>(
  steps: readonly Step<S>[],
  now: number,
  plan: readonly Step<S>[],
): Step<S>[] {
  return [...steps.filter((s) => s.at <= now), ...plan];
}

/**
 * A timed entry that becomes visible once its time has come (journal lines and the like).
 * Filtering by `now` also drops what a rescheduled lifecycle will no longer do.
 */
export interface Timed {
  at: number;
}

export function visibleAt<T extends Timed>(entries: readonly T[], now: number): T[] {
  return entries.filter((e) => e.at <= now);
}


/**
 * Calls `visit` for each step of a schedule that begins in [from, to], leaving out a step that
 * the next one replaces at the same instant (no read ever shows it). What the event stream
 * sends, from the schedules alone.
 */
export function stepsBetween<S extends string>(steps: readonly Step<S>[], from: number, to: number, visit: (state: S, at: number) => void): void {
  // From the end back to the first step not before `from`: a long history is not walked.
  let first = steps.length;
  while (first > 0 && steps[first - 1].at >= from) first--;
  for (let i = first; i < steps.length; i++) {
    const { state, at } = steps[i];
    if (at > to) return;
    if (i + 1 < steps.length && steps[i + 1].at === at) continue;
    visit(state, at);
  }
}
