import type { Clock } from '../core/clock.js';
import { invalid } from '../core/errors.js';
import { planFrom, reschedule } from '../core/lifecycle.js';
import { hostFor } from './hosts.js';
import {
  DEFAULT_ENVIRONMENT_DURATIONS,
  ENVIRONMENT_CANCEL_TABLE,
  ENVIRONMENT_START_TABLES,
  ENVIRONMENT_TERMINATE_TABLES,
} from './lifecycles.js';
import { isOneOf, nextStartOf, ResourceStore, SEED_USER, startOutcomeOf } from './resources.js';
import {
  ENVIRONMENT_START_OUTCOMES,
  FINAL_ENVIRONMENT_STATES,
  NO_TEARDOWN_STATES,
  type Environment,
  type EnvironmentDurations,
  type EnvironmentSeed,
  type EnvironmentStartOutcome,
  type EnvironmentState,
} from './schemas.js';
import { environmentState, environmentView } from './views.js';

/** Test environment instances have no region of their own; their host names use this one. */
export const ENVIRONMENT_REGION = 'us-east-1';

// Terminating these is a no-op answered 202, so that test teardown never fails.
const NO_TEARDOWN: ReadonlySet<EnvironmentState> = new Set(NO_TEARDOWN_STATES);

/** Test environments: each one stands alone, with a database and a main instance of its own. */
export class EnvironmentStore extends ResourceStore<EnvironmentSeed, EnvironmentState, EnvironmentDurations> {
  constructor(environments: EnvironmentSeed[], clock: Clock, timeScale: number, loadedAt: number) {
    super(
      {
        kind: 'environment',
        what: 'test environment',
        defaults: DEFAULT_ENVIRONMENT_DURATIONS,
        stepsOf: (e) => e.launch?.steps,
        settled: FINAL_ENVIRONMENT_STATES,
        nextStart: nextStartOf,
        startOutcome: (_, steps, durations) => startOutcomeOf(ENVIRONMENT_START_TABLES, steps, durations, timeScale),
      },
      environments,
      clock,
      timeScale,
      loadedAt,
    );
    this.startSeeded(environments, loadedAt, (env) => env.lastLaunchedBy ?? SEED_USER);
  }

  get(id: number): Environment {
    return environmentView(this.record(id), this.clock.now(), 'read');
  }

  /** GET's view at `at` (the event stream's); undefined when there is none. */
  viewAt(id: number, at: number): Environment | undefined {
    const env = this.byId.get(id);
    return env && environmentView(env, at, 'read');
  }

  start(id: number, user: string): Environment {
    const env = this.record(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (!FINAL_ENVIRONMENT_STATES.has(state)) {
      throw invalid(`test environment ${id} is ${state}: it cannot be started until it reaches a final state`);
    }
    if (state === 'RUNNING') throw invalid(`test environment ${id} is already RUNNING: terminate it before starting it again`);
    this.launch(env, now, user);
    return environmentView(env, now, 'start');
  }

  /** Terminate when launched (or failed), cancel while launching, nothing when already down. */
  terminate(id: number): Environment {
    const env = this.record(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (env.launch && !NO_TEARDOWN.has(state)) {
      const table = FINAL_ENVIRONMENT_STATES.has(state) ? ENVIRONMENT_TERMINATE_TABLES[env.terminateOutcome] : ENVIRONMENT_CANCEL_TABLE;
      env.launch.steps = reschedule(env.launch.steps, now, planFrom(table, this.durations(env), now, this.timeScale));
      env.lastStoppedAt = now;
    }
    return environmentView(env, now, 'action');
  }

  /** Control API: a RUNNING environment's instance is terminated by someone else, now. */
  externallyTerminate(id: number): Environment {
    const env = this.record(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (!env.launch || state !== 'RUNNING') {
      throw invalid(`test environment ${id} is ${state}: only a RUNNING environment can be terminated externally`);
    }
    env.launch.steps = reschedule(env.launch.steps, now, [{ state: 'EXTERNALLY_TERMINATED', at: now }]);
    return environmentView(env, now, 'read');
  }

  /** Chooses how the next start ends (consumed by that start); null clears it. */
  setNextStartOutcome(id: number, outcome: string | null): void {
    const env = this.record(id);
    if (outcome === null) delete env.nextStartOutcome;
    else if (isOneOf(ENVIRONMENT_START_OUTCOMES, outcome)) env.nextStartOutcome = outcome;
    else throw invalid(`unknown start outcome '${outcome}' for a test environment: use ${ENVIRONMENT_START_OUTCOMES.join(', ')}`);
  }

  protected launch(env: EnvironmentSeed, at: number, user: string): void {
    const outcome: EnvironmentStartOutcome = env.nextStartOutcome ?? env.startOutcome;
    delete env.nextStartOutcome;
    env.launch = {
      steps: planFrom(ENVIRONMENT_START_TABLES[outcome], this.durations(env), at, this.timeScale),
      database: hostFor(env.databaseInstance.cloudType, ENVIRONMENT_REGION, [env.id, at, 1]),
      main: hostFor(env.mainInstance.cloudType, ENVIRONMENT_REGION, [env.id, at, 2]),
    };
    env.lastLaunchedAt = at;
    env.lastLaunchedBy = user;
  }
}

/**
 * The store's own copy of a seed test environment (seed records are shared and must not
 * change): a start sets its launch and who launched it when, a stop rewrites the launch's
 * steps and sets lastStoppedAt, the control API sets the next outcome; the rest is only read.
 */
export function ownEnvironment(env: EnvironmentSeed): EnvironmentSeed {
  return env.launch ? { ...env, launch: { ...env.launch } } : { ...env };
}
