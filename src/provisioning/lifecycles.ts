/**
 * The provisioning lifecycles as data: one table per resource and outcome (state -> the
 * duration it holds), plus the pure functions that turn a table into an absolute schedule
 * for a grid and its cloud servers. Nothing here reads the clock or touches a store.
 */
import { planFrom, type Step, type Table, type TableStep } from '../core/lifecycle.js';
import type {
  EnvironmentDurations,
  EnvironmentStartOutcome,
  EnvironmentState,
  GridDurations,
  GridStartOutcome,
  GridState,
  RsdbSeed,
  RsdbState,
  ServerState,
  TerminateOutcome,
} from './schemas.js';

export type GridDurationName = keyof GridDurations;
export type RsdbDurations = Required<RsdbSeed['durations']>;
export type RsdbDurationName = keyof RsdbDurations;
export type EnvironmentDurationName = keyof EnvironmentDurations;

/** A grid table row; `monitorsOnly` rows are skipped for a grid without monitors. */
export interface GridTableStep extends TableStep<GridState, GridDurationName> {
  monitorsOnly?: true;
}

// ---------------------------------------------------------------------------------------
// Default durations (ms at TIME_SCALE=1) for whatever a fixture leaves out. They are in the
// range a real cloud takes, so an unconfigured resource behaves believably, not instantly.
// ---------------------------------------------------------------------------------------

export const DEFAULT_GRID_DURATIONS: GridDurations = {
  allocating: 60_000,
  allocated: 5_000,
  startingMonitors: 15_000,
  checking: 30_000,
  pendingServers: 30_000,
  terminating: 30_000,
  cancelling: 15_000,
  serverShutdown: 20_000,
};

export const DEFAULT_RSDB_DURATIONS: RsdbDurations = {
  allocating: 120_000,
  terminating: 30_000,
};

export const DEFAULT_ENVIRONMENT_DURATIONS: EnvironmentDurations = {
  allocatingDatabase: 60_000,
  allocatedDatabase: 10_000,
  checkedDatabase: 5_000,
  volumeNotAvailable: 30_000,
  allocatingMain: 60_000,
  allocatedMain: 10_000,
  checkedMain: 5_000,
  running: 600_000,
  terminating: 30_000,
  cancelling: 15_000,
};

// ---------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------

const checkedPrefix: readonly GridTableStep[] = [
  { state: 'ALLOCATING', holds: 'allocating' },
  { state: 'ALLOCATED', holds: 'allocated' },
  { state: 'STARTING_MONITORS', holds: 'startingMonitors', monitorsOnly: true },
  { state: 'CHECKING', holds: 'checking' },
];
// Some servers are still pending when checking ends, so allocation never "finished without
// failures": these outcomes skip ALLOCATED.
const latePrefix: readonly GridTableStep[] = checkedPrefix.filter((row) => row.state !== 'ALLOCATED');

/** Every start of a grid follows one of these, chosen by its outcome. */
export const GRID_START_TABLES: Readonly<Record<GridStartOutcome, readonly GridTableStep[]>> = {
  CHECKED: [...checkedPrefix, { state: 'CHECKED' }],
  ALLOCATE_FAILED: [{ state: 'ALLOCATING', holds: 'allocating' }, { state: 'ALLOCATE_FAILED' }],
  ALLOCATED_WITH_FAILURES: [{ state: 'ALLOCATING', holds: 'allocating' }, { state: 'ALLOCATED_WITH_FAILURES' }],
  CHECKED_WITH_FAILURES: [...checkedPrefix, { state: 'CHECKED_WITH_FAILURES' }],
  CHECKED_AND_DEPLOYING: [...latePrefix, { state: 'CHECKED_AND_DEPLOYING', holds: 'pendingServers' }, { state: 'CHECKED' }],
  CHECKED_AND_TERMINATING: [...latePrefix, { state: 'CHECKED_AND_TERMINATING', holds: 'pendingServers' }, { state: 'CHECKED' }],
};

/** Terminate of a grid that finished deploying. */
export const GRID_TERMINATE_TABLES: Readonly<Record<TerminateOutcome, Table<GridState, GridDurationName>>> = {
  TERMINATED: [{ state: 'TERMINATING', holds: 'terminating' }, { state: 'TERMINATED' }],
  TERMINATED_WITH_FAILURES: [{ state: 'TERMINATING', holds: 'terminating' }, { state: 'TERMINATED_WITH_FAILURES' }],
};

/** Terminate of a grid still deploying. */
export const GRID_CANCEL_TABLE: Table<GridState, GridDurationName> = [
  { state: 'CANCELLING', holds: 'cancelling' },
  { state: 'CANCELLED' },
];

/**
 * Cloud servers. Allocation is staggered: server i of n reaches RUNNING (or FAILED) after
 * allocating * (i + 1) / n, so the last one lands exactly when the grid leaves ALLOCATING.
 */
export const SERVER_TABLES = {
  allocate: [{ state: 'PENDING', holds: 'allocating' }, { state: 'RUNNING' }],
  allocateFailed: [{ state: 'PENDING', holds: 'allocating' }, { state: 'FAILED' }],
  restart: [{ state: 'RUNNING' }],
  terminate: [{ state: 'SHUTTING_DOWN', holds: 'serverShutdown' }, { state: 'TERMINATED' }],
} as const satisfies Record<string, Table<ServerState, GridDurationName>>;

export const RSDB_TABLES = {
  start: [{ state: 'ALLOCATING_DATABASE', holds: 'allocating' }, { state: 'ALLOCATED_DATABASE' }],
  terminate: [{ state: 'TERMINATING', holds: 'terminating' }, { state: 'TERMINATED' }],
} as const satisfies Record<string, Table<RsdbState, RsdbDurationName>>;

type EnvRow = TableStep<EnvironmentState, EnvironmentDurationName>;
const envDatabase: readonly EnvRow[] = [
  { state: 'ALLOCATING_DATABASE', holds: 'allocatingDatabase' },
  { state: 'ALLOCATED_DATABASE', holds: 'allocatedDatabase' },
];
const envMain: readonly EnvRow[] = [
  { state: 'CHECKED_DATABASE', holds: 'checkedDatabase' },
  { state: 'ALLOCATING_MAIN', holds: 'allocatingMain' },
  { state: 'ALLOCATED_MAIN', holds: 'allocatedMain' },
];
const envLaunch: readonly EnvRow[] = [...envDatabase, ...envMain, { state: 'CHECKED_MAIN', holds: 'checkedMain' }];

/** Every start of a test environment follows one of these, chosen by its outcome. */
export const ENVIRONMENT_START_TABLES: Readonly<Record<EnvironmentStartOutcome, Table<EnvironmentState, EnvironmentDurationName>>> = {
  RUNNING: [...envLaunch, { state: 'RUNNING' }],
  VOLUME_NOT_FORMATTED: [...envDatabase, { state: 'VOLUME_NOT_FORMATTED' }],
  // The volume comes back after a while and the launch carries on.
  VOLUME_NOT_AVAILABLE: [
    { state: 'ALLOCATING_DATABASE', holds: 'allocatingDatabase' },
    { state: 'VOLUME_NOT_AVAILABLE', holds: 'volumeNotAvailable' },
    ...envLaunch.slice(1),
    { state: 'RUNNING' },
  ],
  ERROR_BUILD_MISMATCH: [...envDatabase, ...envMain, { state: 'ERROR_BUILD_MISMATCH' }],
  PROCESS_FAILED: [...envLaunch, { state: 'PROCESS_FAILED' }],
  EXTERNALLY_TERMINATED: [...envLaunch, { state: 'RUNNING', holds: 'running' }, { state: 'EXTERNALLY_TERMINATED' }],
};

export const ENVIRONMENT_TERMINATE_TABLES: Readonly<Record<TerminateOutcome, Table<EnvironmentState, EnvironmentDurationName>>> = {
  TERMINATED: [{ state: 'TERMINATING', holds: 'terminating' }, { state: 'TERMINATED' }],
  TERMINATED_WITH_FAILURES: [{ state: 'TERMINATING', holds: 'terminating' }, { state: 'TERMINATED_WITH_FAILURES' }],
};

export const ENVIRONMENT_CANCEL_TABLE: Table<EnvironmentState, EnvironmentDurationName> = [
  { state: 'CANCELLING', holds: 'cancelling' },
  { state: 'CANCELLED' },
];

/** Every table, for the control API's lifecycle listing. */
export const LIFECYCLE_TABLES = {
  grid: { start: GRID_START_TABLES, terminate: GRID_TERMINATE_TABLES, cancel: GRID_CANCEL_TABLE },
  cloudServer: SERVER_TABLES,
  rsdb: RSDB_TABLES,
  environment: { start: ENVIRONMENT_START_TABLES, terminate: ENVIRONMENT_TERMINATE_TABLES, cancel: ENVIRONMENT_CANCEL_TABLE },
};

// ---------------------------------------------------------------------------------------
// Grid planning
// ---------------------------------------------------------------------------------------

export interface JournalLine {
  at: number;
  text: string;
  type: 'INFO' | 'ERROR';
}

export interface ServerToPlan {
  name: string;
  publicHostName: string;
}

export interface ServerPlan {
  steps: Step<ServerState>[];
  /** When the server passes its health check, if it ever does in this plan. */
  checkedAt?: number;
}

export interface GridStartPlan {
  steps: Step<GridState>[];
  servers: ServerPlan[];
  journal: JournalLine[];
}

export interface GridStartInput {
  outcome: GridStartOutcome;
  monitors: boolean;
  durations: GridDurations;
  from: number;
  scale: number;
  /** How many servers (the last ones) fail, or are late, in the outcomes that have such. */
  failingServers: number;
  servers: ServerToPlan[];
}

/** Orders journal lines by time; lines of the same instant keep the order they were written. */
function chronological(lines: JournalLine[]): JournalLine[] {
  return lines.map((line, i) => ({ line, i })).sort((a, b) => a.line.at - b.line.at || a.i - b.i).map(({ line }) => line);
}

/**
 * What becomes of one cloud server in a grid start:
 * - `checked`: allocated in turn, then passes the grid's health check;
 * - `running`: allocated in turn, never health-checked (allocation ended the deployment);
 * - `allocation-failed`: FAILED when its turn to be allocated comes;
 * - `check-failed`: allocated in turn, FAILED when the health checks end;
 * - `deployed-late`: still pending when the checks end, RUNNING later in the window the grid
 *   waits for it, and checked when that window ends;
 * - `terminated-pending`: still pending when the checks end, shut down and TERMINATED.
 */
export type ServerFate = 'checked' | 'running' | 'allocation-failed' | 'check-failed' | 'deployed-late' | 'terminated-pending';

/** The fates that leave a server pending past the checks: the others are allocated in turn. */
const LATE_FATES: ReadonlySet<ServerFate> = new Set<ServerFate>(['deployed-late', 'terminated-pending']);

/**
 * Every start outcome of a grid, as what becomes of its servers: `odd` says which servers take
 * `oddFate` (none, the last `failingServers` of them, or all); the others take `fate`.
 */
export const GRID_START_SERVER_FATES: Readonly<Record<GridStartOutcome, { odd: 'none' | 'last' | 'all'; fate: ServerFate; oddFate: ServerFate }>> = {
  CHECKED: { odd: 'none', fate: 'checked', oddFate: 'checked' },
  ALLOCATE_FAILED: { odd: 'all', fate: 'allocation-failed', oddFate: 'allocation-failed' },
  ALLOCATED_WITH_FAILURES: { odd: 'last', fate: 'running', oddFate: 'allocation-failed' },
  CHECKED_WITH_FAILURES: { odd: 'last', fate: 'checked', oddFate: 'check-failed' },
  CHECKED_AND_DEPLOYING: { odd: 'last', fate: 'checked', oddFate: 'deployed-late' },
  CHECKED_AND_TERMINATING: { odd: 'last', fate: 'checked', oddFate: 'terminated-pending' },
};

/** What the journal lines of a grid start are written from. */
interface GridStartFacts {
  /** Servers in all, odd ones (of the outcome's table above), and those on time. */
  n: number;
  k: number;
  onTime: number;
  /** The grid's state before the one entered. */
  previous: GridState;
  /** The odd servers, with their plans. */
  odd: Array<{ server: ServerToPlan; plan: ServerPlan }>;
}

/** A journal line; written at the instant the grid enters the state, unless `at` says otherwise. */
type GridStartLine = { text: string; type?: JournalLine['type']; at?: number };

const allocatedLine = (server: ServerToPlan) => `Server ${server.name} allocated: ${server.publicHostName}.`;

/** The journal lines the grid writes as it enters each state of a start. */
export const GRID_START_JOURNAL: Readonly<Partial<Record<GridState, (facts: GridStartFacts) => GridStartLine[]>>> = {
  ALLOCATED: ({ n }) => [{ text: `All ${n} server(s) allocated.` }],
  ALLOCATE_FAILED: () => [{ text: 'Grid deployment failed: no server could be allocated.', type: 'ERROR' }],
  ALLOCATED_WITH_FAILURES: ({ n, k }) => [{ text: `Grid deployment finished with failures: ${k} of ${n} server(s) could not be allocated.`, type: 'ERROR' }],
  STARTING_MONITORS: ({ onTime }) => [{ text: `Starting monitors on ${onTime} server(s).` }],
  CHECKING: ({ onTime }) => [{ text: `Health checks started on ${onTime} server(s).` }],
  CHECKED_WITH_FAILURES: ({ n, k, odd }) => [
    ...odd.map(({ server }) => ({ text: `Server ${server.name} failed its health check.`, type: 'ERROR' as const })),
    { text: `Health checks finished: ${n - k} server(s) passed, ${k} failed.` },
    { text: 'Grid deployment finished with failures.', type: 'ERROR' },
  ],
  CHECKED_AND_DEPLOYING: ({ onTime, k, odd }) => [
    { text: `Health checks finished: ${onTime} server(s) passed; ${k} server(s) still deploying.` },
    ...odd.map(({ server, plan }) => ({ text: allocatedLine(server), at: plan.steps[1].at })),
  ],
  CHECKED_AND_TERMINATING: ({ onTime, k }) => [{ text: `Health checks finished: ${onTime} server(s) passed; terminating ${k} pending server(s).` }],
  CHECKED: ({ n, k, previous, odd }) => [
    ...(previous === 'CHECKED_AND_DEPLOYING'
      ? [{ text: `Health checks finished on the ${k} late server(s).` }]
      : previous === 'CHECKED_AND_TERMINATING'
        ? odd.map(({ server }) => ({ text: `Server ${server.name} terminated while pending.` }))
        : [{ text: `Health checks finished: ${n} server(s) passed.` }]),
    { text: 'Grid deployment complete.' },
  ],
};

/**
 * The whole deployment a start sets off: the grid's steps, each server's steps and health
 * check, and the journal lines, all as absolute times from `from`. What happens is read from
 * the tables above; this only puts times to it.
 */
export function planGridStart(input: GridStartInput): GridStartPlan {
  const { outcome, from, servers } = input;
  const table = GRID_START_TABLES[outcome].filter((row) => input.monitors || !row.monitorsOnly);
  const steps = planFrom(table, input.durations, from, input.scale);
  const { odd, fate, oddFate } = GRID_START_SERVER_FATES[outcome];
  const n = servers.length;
  const end = steps[steps.length - 1].at;
  const allocating = steps[1].at - from;
  const checkingIndex = steps.findIndex((s) => s.state === 'CHECKING');
  const checkEnd = checkingIndex < 0 ? undefined : steps[checkingIndex + 1].at;
  const late = LATE_FATES.has(oddFate);
  const lateAt = (late ? steps.find((s) => s.state === outcome) : undefined)?.at ?? end;
  // The last k servers are the odd ones; all of them when the grid has fewer.
  const k = odd === 'all' ? n : odd === 'last' ? Math.min(input.failingServers, n) : 0;
  // Late servers are not allocated in turn: the others share the allocation time.
  const onTime = late ? n - k : n;
  const isOdd = (i: number) => i >= n - k;
  const allocatedAt = (i: number) => from + Math.round((allocating * (i + 1)) / onTime);

  const plans: ServerPlan[] = servers.map((_, i) => {
    const pending: Step<ServerState> = { state: 'PENDING', at: from };
    const running = (): Step<ServerState> => ({ state: 'RUNNING', at: allocatedAt(i) });
    switch (isOdd(i) ? oddFate : fate) {
      case 'deployed-late':
        return { steps: [pending, { state: 'RUNNING', at: lateAt + Math.round(((end - lateAt) * (i - onTime + 1)) / (k + 1)) }], checkedAt: end };
      case 'terminated-pending':
        return { steps: [pending, { state: 'SHUTTING_DOWN', at: lateAt }, { state: 'TERMINATED', at: end }] };
      case 'allocation-failed':
        return { steps: [pending, { state: 'FAILED', at: allocatedAt(i) }] };
      case 'running':
        return { steps: [pending, running()] };
      case 'check-failed':
        return { steps: [pending, running(), { state: 'FAILED', at: checkEnd! }] };
      case 'checked':
        return { steps: [pending, running()], checkedAt: checkEnd };
    }
  });

  // Written phase by phase, so that lines of the same instant (TIME_SCALE=0) read in order.
  const journal: JournalLine[] = [{ at: from, text: `Starting grid deployment (${n} server(s)).`, type: 'INFO' }];
  plans.forEach((plan, i) => {
    if (late && isOdd(i)) return;
    const result = plan.steps[1];
    if (result.state === 'RUNNING') journal.push({ at: result.at, text: allocatedLine(servers[i]), type: 'INFO' });
    else journal.push({ at: result.at, text: `Server ${servers[i].name} could not be allocated.`, type: 'ERROR' });
  });
  const oddOnes = plans.flatMap((plan, i) => (isOdd(i) ? [{ server: servers[i], plan }] : []));
  for (let s = 1; s < steps.length; s++) {
    const { state, at } = steps[s];
    const lines = GRID_START_JOURNAL[state]?.({ n, k, onTime, previous: steps[s - 1].state, odd: oddOnes }) ?? [];
    for (const line of lines) journal.push({ at: line.at ?? at, text: line.text, type: line.type ?? 'INFO' });
  }
  return { steps, servers: plans, journal: chronological(journal) };
}

export interface GridStopPlan {
  steps: Step<GridState>[];
  /** Steps for each server being shut down, in the order given. */
  servers: Step<ServerState>[][];
  journal: JournalLine[];
}

/**
 * Terminate (or, while deploying, cancel) a grid. The given servers shut down at once and
 * are TERMINATED when the grid's terminate ends; with TERMINATED_WITH_FAILURES the last one
 * ends FAILED instead.
 */
export function planGridStop(input: {
  cancel: boolean;
  outcome: TerminateOutcome;
  durations: GridDurations;
  from: number;
  scale: number;
  servers: ServerToPlan[];
}): GridStopPlan {
  const { cancel, from, servers } = input;
  const steps = planFrom(cancel ? GRID_CANCEL_TABLE : GRID_TERMINATE_TABLES[input.outcome], input.durations, from, input.scale);
  const end = steps[steps.length - 1].at;
  const withFailures = !cancel && input.outcome === 'TERMINATED_WITH_FAILURES';
  const failing = withFailures ? servers.length - 1 : -1;
  const journal: JournalLine[] = [];
  const log = (at: number, text: string, type: JournalLine['type'] = 'INFO') => journal.push({ at, text, type });
  if (cancel) {
    log(from, `Cancelling grid deployment (${servers.length} server(s) shutting down).`);
    log(end, 'Grid deployment cancelled.');
  } else {
    log(from, `Terminating grid (${servers.length} server(s) shutting down).`);
    if (failing >= 0) log(end, `Server ${servers[failing].name} could not be terminated.`, 'ERROR');
    if (withFailures) log(end, 'Grid terminated with failures.', 'ERROR');
    else log(end, 'Grid terminated.');
  }
  return {
    steps,
    servers: servers.map((_, i) => [
      { state: 'SHUTTING_DOWN', at: from },
      { state: i === failing ? 'FAILED' : 'TERMINATED', at: end },
    ]),
    journal,
  };
}
