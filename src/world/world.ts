import type { Config } from '../config.js';
import { EmulatorClock, type ControllableClock } from '../core/clock.js';
import { AuthStore } from '../repository/store.js';
import { ProvisioningStore } from '../provisioning/store.js';
import { AnnotationStore } from '../annotations/store.js';
import { AlertStore } from '../alerts/store.js';
import { QueryStore } from '../query/store.js';
import { domainApiKey } from '../annotations/schemas.js';
import { FaultStore } from './faults.js';
import { Journal } from './journal.js';
import type { SectionName, State } from './state.js';
import type { StateSnapshot } from './export-stream.js';

export interface Stores {
  auth: AuthStore;
  provisioning: ProvisioningStore;
  annotations: AnnotationStore;
  alerts: AlertStore;
  query: QueryStore;
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
    this.journal = new Journal(config.journalSize, config.journalBodyLimitBytes, name);
    const { scale, frozen } = clock.status();
    this.startClock = { scale, frozen };
  }

  get stores(): Stores {
    return this.current;
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
    const { auth, provisioning, annotations, alerts, query } = this.current;
    return structuredClone({
      users: auth.exportUsers(),
      tokens: auth.exportTokens(),
      ...provisioning.export(),
      ...annotations.export(),
      ...alerts.export(),
      ...query.export(),
    });
  }

  /**
   * The whole state as it is now, cheaply (no deep copy): what exportState() would answer,
   * for writing out in slices while requests go on (export-stream.ts). Sections in the
   * order of exportState().
   */
  snapshot(): StateSnapshot {
    const { auth, provisioning, annotations, alerts, query } = this.current;
    const { sections, release } = provisioning.snapshot();
    return { sections: { ...auth.snapshot(), ...sections, ...annotations.snapshot(), ...alerts.snapshot(), ...query.snapshot() }, release };
  }

  /** How many entries each section of exportState() holds, read from the stores without copying. */
  counts(): Record<SectionName, number> {
    const { auth, provisioning, annotations, alerts, query } = this.current;
    return { ...auth.counts(), ...provisioning.counts(), ...annotations.counts(), ...alerts.counts(), ...query.counts() };
  }

  /**
   * Fresh stores from a state, which they only read: every store copies what it changes, so
   * the seed is shared, not copied, by each reset and each sandbox forked from this world.
   */
  private build(state: State): Stores {
    const { clock, config } = this;
    const annotations = new AnnotationStore(state, clock);
    return {
      auth: new AuthStore(state.users, state.tokens, clock, config.tokenIdleTimeoutMs),
      provisioning: new ProvisioningStore(state, clock, config.timeScale),
      annotations,
      alerts: new AlertStore(state, clock),
      // The Query API reaches the domains (and their app keys) through this port only.
      query: new QueryStore(state, clock, { domains: () => queryDomains(annotations.domains()) }),
    };
  }
}

/** The domains as the Query API sees them: with their app keys, worked out once per catalogue. */
const domainViews = new WeakMap<object, Array<{ id: number; name: string; apiKey: string }>>();
function queryDomains(domains: ReadonlyArray<{ id: number; name: string; apiKey?: string }>) {
  let views = domainViews.get(domains);
  if (!views) domainViews.set(domains, (views = domains.map((d) => ({ id: d.id, name: d.name, apiKey: domainApiKey(d) }))));
  return views;
}

/** The name the world had before sandboxes; kept while the routes move to World. */
export { World as Emulator };
