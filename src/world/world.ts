import type { Config } from '../config.js';
import { EmulatorClock, type ControllableClock } from '../core/clock.js';
import { AuthStore } from '../repository/store.js';
import { ProvisioningStore } from '../provisioning/store.js';
import { AnnotationStore } from '../annotations/store.js';
import { AlertStore } from '../alerts/store.js';
import { ObjectStore } from '../repository/objects.js';
import { alertViews, annotationViews, provisioningViews, userViews } from './repository-views.js';
import { FaultStore } from './faults.js';
import { Journal, journalBudgetOf } from './journal.js';
import type { SectionName, State } from './state.js';
import type { StateSnapshot } from './export-stream.js';

export interface Stores {
  auth: AuthStore;
  provisioning: ProvisioningStore;
  annotations: AnnotationStore;
  alerts: AlertStore;
  /** The repository's objects: its own, and views of the stores above. */
  objects: ObjectStore;
}

/**
 * The emulated world, with no HTTP in it: every store, its clock, fault rules, journal, alert
 * history and id sequences. The default world and each sandbox are one World each. Routes
 * reach data through `stores`, never through a store captured at registration, so reset and
 * import can swap every store at once.
 */
export class World {
  private current: Stores;
  /** Fault-injection rules of the control API; they outlive an import, not a reset. */
  readonly faults: FaultStore;
  /** The last requests served; bounded by JOURNAL_SIZE. */
  readonly journal: Journal;
  /** The clock settings the process started with, which reset restores. */
  private readonly startClock: { scale: number; frozen: boolean };
  /** The state the stores were last built from (the seed, a loaded or posted state). */
  private builtFrom!: State;
  /** Whether anything may have changed the stores since they were built. */
  private touched = false;
  private changeCount = 0;

  /** Neither `seed` nor `initial` is ever changed: the stores copy what they change. */
  constructor(
    private readonly seed: State,
    readonly clock: ControllableClock,
    readonly config: Config,
    /** What the world holds at first, when not the seed (a state file, a sandbox's posted state). */
    initial: State = seed,
    /** The sandbox this world is; none for the default world. */
    readonly name?: string,
  ) {
    this.current = this.build(initial);
    this.faults = new FaultStore(clock);
    this.journal = new Journal(
      config.journalSize,
      {
        bodyLimit: config.journalBodyLimitBytes,
        headerLimit: config.journalHeaderLimitBytes,
        maxBytes: config.journalWorldMaxBytes,
        budget: journalBudgetOf(config),
      },
      name,
    );
    const { scale, frozen } = clock.status();
    this.startClock = { scale, frozen };
  }

  get stores(): Stores {
    return this.current;
  }

  /**
   * Goes up on every change the state file must keep: a request that may change the world
   * (`touch`, from the persistence hook), a reset, an import. The state file is written only
   * when some world's count moved since the last write.
   */
  get changes(): number {
    return this.changeCount;
  }

  /** Something is about to change the stores, or may (a request other than a read, before its handler). */
  touch(): void {
    this.touched = true;
    this.changeCount++;
  }

  /** Something may have changed the stores (that request, once answered): counted, without marking them touched again. */
  countChange(): void {
    this.changeCount++;
  }

  /** The state the stores were built from, while nothing has changed them since; else undefined. */
  untouchedFrom(): State | undefined {
    return this.touched ? undefined : this.builtFrom;
  }

  /** The seed this world resets to (the fixtures). */
  get seedState(): State {
    return this.seed;
  }

  /**
   * Back to the seed the process started with: every store (with the rate-limit counters
   * they own), token, fault rule and journal entry, and the clock's scale and frozen
   * setting. The clock's time is not moved back, because emulated time never goes
   * backwards: lifecycles re-seeded by a reset start from the current time.
   */
  reset(): void {
    this.current = this.build(this.seed);
    this.clock.setScale(this.startClock.scale);
    this.clock.setFrozen(this.startClock.frozen);
    this.faults.clear();
    this.journal.clear();
  }

  /**
   * A new world beside this one, as a sandbox starts: its own stores, built from the seed this
   * world started from (or from `state`), which it shares without changing it, and its own
   * clock, starting at this world's current time with the clock settings the process started with.
   */
  fork(name: string, state?: State): World {
    const clock = new EmulatorClock({ start: this.clock.now(), scale: this.startClock.scale, frozen: this.startClock.frozen });
    return new World(this.seed, clock, this.config, state, name);
  }

  /** Replaces the whole state (already validated; kept, and never changed). */
  replace(state: State): void {
    this.current = this.build(state);
  }

  /** The whole state in the fixture format. */
  exportState(): State {
    const { auth, provisioning, annotations, alerts, objects } = this.current;
    return structuredClone({
      users: auth.exportUsers(),
      tokens: auth.exportTokens(),
      ...objects.export(),
      ...provisioning.export(),
      ...annotations.export(),
      ...alerts.export(),
    });
  }

  /**
   * The whole state as it is now, cheaply (no deep copy): what exportState() would answer,
   * for writing out in slices while requests go on (export-stream.ts). Sections in the
   * order of exportState().
   */
  snapshot(): StateSnapshot {
    const { auth, provisioning, annotations, alerts, objects } = this.current;
    const { sections, release } = provisioning.snapshot();
    return { sections: { ...auth.snapshot(), ...objects.snapshot(), ...sections, ...annotations.snapshot(), ...alerts.snapshot() }, release };
  }

  /** How many entries each section of exportState() holds, read from the stores without copying. */
  counts(): Record<SectionName, number> {
    const { auth, provisioning, annotations, alerts, objects } = this.current;
    return { ...auth.counts(), ...objects.counts(), ...provisioning.counts(), ...annotations.counts(), ...alerts.counts() };
  }

  /**
   * Fresh stores from a state, which they only read: every store copies what it changes, so
   * the seed is shared, not copied, by each reset and each sandbox forked from this world.
   */
  private build(state: State): Stores {
    const { clock, config } = this;
    this.builtFrom = state;
    this.touched = false;
    this.changeCount++;
    const auth = new AuthStore(state.users, state.tokens, clock, config.tokenIdleTimeoutMs);
    const provisioning = new ProvisioningStore(state, clock, config.timeScale);
    const annotations = new AnnotationStore(state, clock);
    const alerts = new AlertStore(state, clock);
    // The repository reads the other stores through these ports only (world/repository-views.ts).
    const views = {
      ...provisioningViews(() => provisioning),
      ...annotationViews(() => annotations),
      ...alertViews(() => alerts),
      ...userViews(() => auth.exportUsers()),
    };
    const objects = new ObjectStore(state.objects, views, clock, config.repositoryMaxBytes);
    return { auth, provisioning, annotations, alerts, objects };
  }
}

/** The name the world had before sandboxes; kept while the routes move to World. */
export { World as Emulator };
