/**
 * The composition-instance lifecycle as data: which states a command passes through, how long
 * each holds, and which states accept which command. The pure functions below turn a table
 * into an absolute schedule; nothing here reads the clock or touches a store.
 */
import type { Step } from '../core/lifecycle.js';
import type { InstanceCommand, InstanceDurations, InstanceState, PlayOutcome } from './schemas.js';

/** `play` is the run's own length (play time), the rest are the service's. */
export type DurationName = keyof Required<InstanceDurations> | 'play';

export interface Row {
  state: InstanceState;
  /** The duration this state holds; absent on the last row, which lasts until a command. */
  holds?: DurationName;
}

/** Defaults (ms at TIME_SCALE=1) for what a composition's fixture leaves out. */
export const DEFAULT_INSTANCE_DURATIONS: Required<InstanceDurations> = {
  loading: 20_000,
  starting: 10_000,
  pausing: 2_000,
  resuming: 2_000,
  stopping: 5_000,
  aborting: 2_000,
  closing: 5_000,
  writing: 10_000,
  settle: 10_000,
};

/** Every table a command or an outcome follows. A run's end always unloads, as a poller waiting for Unloaded expects. */
export const INSTANCE_TABLES = {
  load: [{ state: 'Loading', holds: 'loading' }, { state: 'Loaded' }],
  start: [{ state: 'Starting', holds: 'starting' }, { state: 'Playing', holds: 'play' }],
  resume: [{ state: 'Resuming', holds: 'resuming' }, { state: 'Playing', holds: 'play' }],
  pause: [{ state: 'Pausing', holds: 'pausing' }, { state: 'Paused' }],
  Completed: [{ state: 'Closing', holds: 'closing' }, { state: 'Writing', holds: 'writing' }, { state: 'Completed', holds: 'settle' }, { state: 'Unloaded' }],
  Stopped: [{ state: 'Stopping', holds: 'stopping' }, { state: 'Writing', holds: 'writing' }, { state: 'Stopped', holds: 'settle' }, { state: 'Unloaded' }],
  Failed: [{ state: 'Failed', holds: 'settle' }, { state: 'Unloaded' }],
  abort: [{ state: 'Aborting', holds: 'aborting' }, { state: 'Aborted', holds: 'settle' }, { state: 'Unloaded' }],
  unload: [{ state: 'Unloaded' }],
} as const satisfies Record<string, readonly Row[]>;

/** The states each command is accepted in (the reference: a stopped or aborted run cannot be resumed). */
export const ACCEPTED_IN: Readonly<Record<InstanceCommand, readonly InstanceState[]>> = {
  // A play sent while the composition still loads starts once it has loaded.
  play: ['Loading', 'Loaded'],
  pause: ['Playing'],
  resume: ['Paused'],
  stop: ['Starting', 'Playing', 'Pausing', 'Paused', 'Resuming'],
  abort: ['Loading', 'Starting', 'Playing', 'Pausing', 'Paused', 'Resuming', 'Stopping', 'Closing', 'Writing'],
  unload: ['Loading', 'Loaded', 'Completed', 'Failed', 'Stopped', 'Aborted'],
};

/**
 * The colour families of instance states that are not in progress: the dashboard reads them
 * from the server (paths.json) with ACCEPTED_IN, so it keeps no copy of either.
 */
export const INSTANCE_FAMILIES = {
  ready: ['Loaded', 'Playing', 'Paused', 'Completed'],
  failed: ['Failed', 'Aborted'],
  terminated: ['Stopped', 'Unloaded'],
} as const satisfies Record<string, readonly InstanceState[]>;

/** States in which the instance holds its load servers (all but Unloaded). */
export const HOLDS_SERVERS = (state: InstanceState) => state !== 'Unloaded';

/** States a run may end in; the grid going down while in any other state fails the instance. */
export const RUN_ENDED = new Set<InstanceState>(['Completed', 'Failed', 'Stopped', 'Aborted', 'Unloaded']);

/** States in which the instance is loaded but not yet played. */
export const BEFORE_PLAY = new Set<InstanceState>(['Loading', 'Loaded']);

/** States in which virtual users send traffic. */
export const SENDING: InstanceState = 'Playing';

/**
 * Absolute steps from `from` for a sequence of tables. `durations` are scaled by `scale`
 * (TIME_SCALE) except `play`, which is the test's own length, not the cloud's.
 */
export function plan(
  tables: ReadonlyArray<readonly Row[]>,
  durations: Readonly<Record<DurationName, number>>,
  from: number,
  scale: number,
): Step<InstanceState>[] {
  const steps: Step<InstanceState>[] = [];
  let at = from;
  for (const table of tables) {
    for (const row of table) {
      steps.push({ state: row.state, at });
      if (row.holds !== undefined) at += row.holds === 'play' ? durations.play : Math.round(durations[row.holds] * scale);
    }
  }
  // A zero-length state (a play of no time left) is passed over by stateAt, which takes the
  // last step begun.
  return steps;
}

/** The tables of a play from `Starting` or `Resuming` on: the play, then how it ends. */
export function playTables(first: 'start' | 'resume', outcome: PlayOutcome): ReadonlyArray<readonly Row[]> {
  return [INSTANCE_TABLES[first], INSTANCE_TABLES[outcome]];
}

/** Play time (ms in Playing) of a schedule up to `now`. */
export function playedMs(steps: readonly Step<InstanceState>[], now: number): number {
  let total = 0;
  for (let i = 0; i < steps.length; i++) {
    if (steps[i].state !== SENDING || steps[i].at >= now) continue;
    const end = i + 1 < steps.length ? Math.min(steps[i + 1].at, now) : now;
    total += end - steps[i].at;
  }
  return total;
}

/** When play time reached `ms` (the wall instant), if it did by `now`. */
export function wallAtPlayed(steps: readonly Step<InstanceState>[], ms: number): number | undefined {
  let total = 0;
  for (let i = 0; i < steps.length; i++) {
    if (steps[i].state !== SENDING) continue;
    const end = i + 1 < steps.length ? steps[i + 1].at : Number.POSITIVE_INFINITY;
    if (total + (end - steps[i].at) >= ms) return steps[i].at + (ms - total);
    total += end - steps[i].at;
  }
  return undefined;
}
