import type { Clock } from '../core/clock.js';
import { invalid } from '../core/errors.js';
import { planFrom, reschedule } from '../core/lifecycle.js';
import { hostFor } from './hosts.js';
import { DEFAULT_RSDB_DURATIONS, RSDB_TABLES, type RsdbDurations } from './lifecycles.js';
import { isOneOf, ResourceStore, SEED_USER, startOutcomeOf } from './resources.js';
import { RSDB_START_OUTCOMES, type Rsdb, type RsdbSeed, type RsdbState } from './schemas.js';
import { rsdbState, rsdbView } from './views.js';

/** RSDBs have no "final" column in the spec: these are their resting states. */
const RSDB_SETTLED = new Set<RsdbState>(['LOADED', 'ALLOCATED_DATABASE', 'TERMINATED']);

/** The start table of an RSDB's only outcome, by that outcome. */
const RSDB_START = { [RSDB_START_OUTCOMES[0]]: RSDB_TABLES.start };

/** Results databases: each one stands alone, with a single way its start can end. */
export class RsdbStore extends ResourceStore<RsdbSeed, RsdbState, RsdbDurations> {
  constructor(rsdbs: RsdbSeed[], clock: Clock, timeScale: number, loadedAt: number) {
    super(
      {
        kind: 'rsdb',
        what: 'RSDB',
        defaults: DEFAULT_RSDB_DURATIONS,
        stepsOf: (r) => r.launch?.steps,
        settled: RSDB_SETTLED,
        nextStart: () => ({ outcome: RSDB_START_OUTCOMES[0], once: false }),
        // Its only outcome, and the one start table.
        startOutcome: (_, steps, durations) => startOutcomeOf(RSDB_START, steps, durations, timeScale),
      },
      rsdbs,
      clock,
      timeScale,
      loadedAt,
    );
    this.startSeeded(rsdbs, loadedAt, () => SEED_USER);
  }

  get(id: number): Rsdb {
    return rsdbView(this.record(id), this.clock.now());
  }

  /** GET's view at `at` (the event stream's); undefined when there is none. */
  viewAt(id: number, at: number): Rsdb | undefined {
    const rsdb = this.byId.get(id);
    return rsdb && rsdbView(rsdb, at);
  }

  start(id: number): Rsdb {
    const rsdb = this.record(id);
    const now = this.clock.now();
    const state = rsdbState(rsdb, now);
    if (state !== 'LOADED' && state !== 'TERMINATED') {
      throw invalid(`RSDB ${id} is ${state}: only a LOADED or TERMINATED results database can be started`);
    }
    this.launch(rsdb, now);
    return rsdbView(rsdb, now);
  }

  terminate(id: number): Rsdb {
    const rsdb = this.record(id);
    const now = this.clock.now();
    const state = rsdbState(rsdb, now);
    if (rsdb.launch && (state === 'ALLOCATING_DATABASE' || state === 'ALLOCATED_DATABASE')) {
      const plan = planFrom(RSDB_TABLES.terminate, this.durations(rsdb), now, this.timeScale);
      rsdb.launch.steps = reschedule(rsdb.launch.steps, now, plan);
    }
    return rsdbView(rsdb, now);
  }

  /** An RSDB has a single outcome, so only ALLOCATED_DATABASE is accepted (null clears). */
  setNextStartOutcome(id: number, outcome: string | null): void {
    this.record(id);
    if (outcome !== null && !isOneOf(RSDB_START_OUTCOMES, outcome)) {
      throw invalid(`unknown start outcome '${outcome}' for an RSDB: the only one is ${RSDB_START_OUTCOMES.join(', ')}`);
    }
  }

  protected launch(rsdb: RsdbSeed, at: number): void {
    rsdb.launch = {
      steps: planFrom(RSDB_TABLES.start, this.durations(rsdb), at, this.timeScale),
      // Every launch is a new instance: new id and host names.
      host: hostFor(rsdb.cloudType, rsdb.region, [rsdb.id, at]),
    };
  }
}

/**
 * The store's own copy of a seed RSDB (seed records are shared and must not change): a start
 * sets its launch, a stop rewrites the launch's steps; the rest is only read.
 */
export function ownRsdb(rsdb: RsdbSeed): RsdbSeed {
  return rsdb.launch ? { ...rsdb, launch: { ...rsdb.launch } } : { ...rsdb };
}
