/**
 * What the per-resource stores (grids.ts, rsdbs.ts, environments.ts) share: the 404 lookup,
 * and how the control API reads where a resource is in its lifecycle.
 */
import type { Clock } from '../core/clock.js';
import { missing } from '../core/errors.js';
import { positionAt, stepsBetween, type Step, type TableStep } from '../core/lifecycle.js';

import type { ResourceKind, ResourceLifecycle } from './schemas.js';

export type { ResourceKind, ResourceLifecycle };

/** How a resource's next start will end (the lifecycle's `nextStart`). */
export type NextStart = NonNullable<ResourceLifecycle['nextStart']>;

/** The start a resource is on (the lifecycle's `currentStart`). */
export type CurrentStart = NonNullable<ResourceLifecycle['currentStart']>;

/** Who "started" a resource that a fixture starts at load time (`startedAgoMs`). */
export const SEED_USER = 'system';

/** The record with this id, or a 404 naming what was asked for. */
export function existing<T>(records: ReadonlyMap<number, T>, id: number, what: string): T {
  const record = records.get(id);
  if (record === undefined) throw missing(`${what} ${id} does not exist`);
  return record;
}

/** The next start of a grid or environment: the outcome chosen for it alone, else the one every start follows. */
export function nextStartOf(record: { startOutcome: string; nextStartOutcome?: string }): NextStart {
  return record.nextStartOutcome !== undefined ? { outcome: record.nextStartOutcome, once: true } : { outcome: record.startOutcome, once: false };
}

/**
 * The outcome whose start table `steps` follow exactly: every state of the table (but the rows
 * `skips` leaves out) in order, each at the time a start at the first step's time plans it
 * (planFrom with these durations and scale), and nothing more. Undefined when no start planned
 * this schedule as it is: a terminate, a cancel or an external termination changed it, or an
 * imported state holds a schedule of its own. Allocates nothing (it runs for every resource
 * of a lifecycle listing).
 */
export function startOutcomeOf<O extends string, D extends string, Row extends TableStep<string, D>>(
  tables: Readonly<Record<O, readonly Row[]>>,
  steps: readonly Step<string>[],
  durations: Readonly<Record<D, number>>,
  scale: number,
  skips?: (row: Row) => boolean,
): O | undefined {
  if (steps.length === 0) return undefined;
  for (const outcome in tables) {
    let at = steps[0].at;
    let i = 0;
    let follows = true;
    for (const row of tables[outcome]) {
      if (skips?.(row)) continue;
      if (i >= steps.length || steps[i].state !== row.state || steps[i].at !== at) {
        follows = false;
        break;
      }
      i++;
      if (row.holds !== undefined) at += Math.round((durations[row.holds] ?? 0) * scale);
    }
    if (follows && i === steps.length) return outcome;
  }
  return undefined;
}

export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** Where the resources of one kind are in their lifecycles, whatever their record type. */
export interface ScheduleReader {
  /** Where every resource of this kind is at `now`, in the state's order. */
  list(now: number): ResourceLifecycle[];
  /** Where the resource with this id is at `now`; undefined when there is none. */
  position(id: number, now: number): ResourceLifecycle | undefined;
  /**
   * When the resource's current schedule reaches its last step: null when it has no schedule
   * (never started), undefined when there is no such resource.
   */
  settlesAt(id: number): number | null | undefined;
  /** The earliest scheduled change after `now` of any resource of this kind, if any. */
  nextTransitionAfter(now: number): number | undefined;
  /** Every step of any resource of this kind that begins in [from, to] (core/lifecycle.ts stepsBetween). */
  stepsBetween(from: number, to: number, visit: (id: number, state: string, at: number) => void): void;
}

/**
 * The schedules of one kind of resource, as the control API reads them. It holds the store's
 * own collections (not copies), so it always sees the records as they are now.
 */
export class Schedules<R extends { id: number; name: string }, S extends string> implements ScheduleReader {
  constructor(
    readonly kind: ResourceKind,
    /** In the state's own order, which the listing keeps. */
    private readonly records: readonly R[],
    private readonly byId: ReadonlyMap<number, R>,
    /** The current schedule; undefined for a resource never started. */
    private readonly stepsOf: (record: R) => readonly Step<S>[] | undefined,
    /** States counted as final (or, for kinds without a final column, resting). */
    private readonly settled: ReadonlySet<S>,
    /** The "since" of a resource never started. */
    private readonly loadedAt: number,
    /** How the resource's next start will end, for the kinds that can be started. */
    private readonly nextStartOf?: (record: R) => NextStart,
    /** The start the resource is on (its schedule is that start's plan), for the kinds that can be started. */
    private readonly currentStartOf?: (record: R, steps: readonly Step<S>[]) => CurrentStart | undefined,
    /** The states of its start tables the resource never takes (a grid without monitors). */
    private readonly skipsOf?: (record: R) => readonly string[],
  ) {}

  list(now: number): ResourceLifecycle[] {
    return this.records.map((record) => this.describe(record, now));
  }

  position(id: number, now: number): ResourceLifecycle | undefined {
    const record = this.byId.get(id);
    return record === undefined ? undefined : this.describe(record, now);
  }

  settlesAt(id: number): number | null | undefined {
    const record = this.byId.get(id);
    if (record === undefined) return undefined;
    const steps = this.stepsOf(record);
    return steps ? steps[steps.length - 1].at : null;
  }

  nextTransitionAfter(now: number): number | undefined {
    let earliest: number | undefined;
    for (const record of this.records) {
      const next = this.stepsOf(record)?.find((s) => s.at > now);
      if (next && (earliest === undefined || next.at < earliest)) earliest = next.at;
    }
    return earliest;
  }

  stepsBetween(from: number, to: number, visit: (id: number, state: string, at: number) => void): void {
    for (const record of this.records) {
      const steps = this.stepsOf(record);
      if (steps) stepsBetween(steps, from, to, (state, at) => visit(record.id, state, at));
    }
  }

  private describe(record: R, now: number): ResourceLifecycle {
    const { kind, loadedAt } = this;
    const { id, name } = record;
    const steps = this.stepsOf(record);
    const skipped = this.skipsOf?.(record);
    const nextStart = { ...(this.nextStartOf ? { nextStart: this.nextStartOf(record) } : {}), ...(skipped?.length ? { skips: [...skipped] } : {}) };
    if (!steps) return { kind, id, name, state: 'LOADED', isFinal: true, since: loadedAt, ...nextStart };
    const { state, since, next } = positionAt(steps, now);
    const currentStart = this.currentStartOf?.(record, steps);
    return {
      kind,
      id,
      name,
      state,
      isFinal: this.settled.has(state),
      since,
      ...(next ? { next } : {}),
      settlesAt: steps[steps.length - 1].at,
      ...nextStart,
      ...(currentStart ? { currentStart } : {}),
    };
  }
}

/**
 * The skeleton the stores of grids, RSDBs and test environments share: records by id, their
 * schedules for the control API, the lookup that answers 404, durations over the defaults,
 * and the seeds that ask to be started at load time (`startedAgoMs`).
 */
export abstract class ResourceStore<R extends { id: number; name: string; startedAgoMs?: number; durations?: object }, S extends string, D extends object> {
  protected readonly byId = new Map<number, R>();
  readonly schedules: Schedules<R, S>;

  constructor(
    private readonly spec: {
      kind: ResourceKind;
      /** How a 404 names one. */
      what: string;
      defaults: D;
      /** The current schedule; undefined for a resource never started. */
      stepsOf: (record: R) => readonly Step<S>[] | undefined;
      /** States counted as final (or, for kinds without a final column, resting). */
      settled: ReadonlySet<S>;
      /** How the record's next start will end. */
      nextStart: (record: R) => NextStart;
      /** The outcome of the start whose plan the schedule `steps` is, if it is one (startOutcomeOf). */
      startOutcome: (record: R, steps: readonly Step<S>[], durations: D) => string | undefined;
      /** The states of its start tables a record never takes (the lifecycle's `skips`). */
      skips?: (record: R) => readonly string[];
    },
    records: readonly R[],
    protected readonly clock: Clock,
    protected readonly timeScale: number,
    loadedAt: number,
  ) {
    for (const record of records) this.byId.set(record.id, record);
    this.schedules = new Schedules(spec.kind, records, this.byId, spec.stepsOf, spec.settled, loadedAt, spec.nextStart, (record, steps) => {
      const outcome = spec.startOutcome(record, steps, this.durations(record));
      return outcome === undefined ? undefined : { outcome, startedAt: steps[0].at };
    }, spec.skips);
  }

  /** Starts the resource: plans its schedule from `at`. */
  protected abstract launch(record: R, at: number, user: string): void;

  /** The record with this id, or a 404 naming what was asked for. */
  protected record(id: number): R {
    return existing(this.byId, id, this.spec.what);
  }

  /** The record's own durations over the defaults. */
  protected durations(record: R | undefined): D {
    return { ...this.spec.defaults, ...record?.durations } as D;
  }

  /**
   * Starts every seed that asks for it, as if `startedAgoMs` before `loadedAt`. An export
   * carries the launch itself, so a re-import does not start it again. Each store calls it
   * once its own fields are set.
   */
  protected startSeeded(records: readonly R[], loadedAt: number, user: (record: R) => string): void {
    for (const record of records) {
      if (this.startsOnLoad(record)) this.asSeedStart(record, () => this.launch(record, loadedAt - record.startedAgoMs!, user(record)));
    }
  }

  /** Whether the seed asks to be started at load time and its export does not carry that start already. */
  protected startsOnLoad(record: R): boolean {
    return record.startedAgoMs !== undefined && !this.spec.stepsOf(record);
  }

  /**
   * Makes a seed's own start with `start`: it follows the resource's startOutcome, and an
   * outcome chosen for the next start only (a scenario) is kept for the next start someone makes.
   */
  protected asSeedStart(record: R, start: () => void): void {
    const own = record as { nextStartOutcome?: string };
    const chosen = own.nextStartOutcome;
    delete own.nextStartOutcome;
    start();
    if (chosen !== undefined) own.nextStartOutcome = chosen;
  }
}
