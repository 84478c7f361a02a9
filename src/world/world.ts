import type { Config } from '../config.js';
import { EmulatorClock, type ControllableClock } from '../core/clock.js';
import type { AnyInterfaceModel, StoresOf } from '../core/interface.js';
import { FaultStore } from './faults.js';
import { Journal, journalBudgetOf } from './journal.js';
import type { SectionName, State as AnyState, StateOfList } from './state.js';
import type { StateSnapshot } from './export-stream.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import type { ObjectViews } from '../core/objects.js';
import { WorldEvents, type ViewOf } from './events.js';

/**
 * The emulated world, with no HTTP in it: every store, its clock, fault rules, journal, alert
 * history and id sequences. The default world and each sandbox are one World each. Routes
 * reach data through `stores`, never through a store captured at registration, so reset and
 * import can swap every store at once.
 *
 * The world knows no interface by name: it is given the list of them (src/interfaces.ts) and
 * builds, exports, counts and snapshots each through its contract (core/interface.ts).
 */
export class World<L extends readonly AnyInterfaceModel[] = readonly AnyInterfaceModel[], State = StateOfList<L>> {
  private current: StoresOf<L>;
  /** Fault-injection rules of the control API; they outlive an import, not a reset. */
  readonly faults: FaultStore;
  /** The last requests served; bounded by JOURNAL_SIZE. */
  readonly journal: Journal;
  /** Its changes, for the event stream: idle (no timer, no work) while nobody listens. */
  readonly events: WorldEvents;
  /** The clock settings the process started with, which reset restores. */
  private readonly startClock: { scale: number; frozen: boolean };
  /** The state the stores were last built from (the seed, a loaded or posted state). */
  private builtFrom!: State;
  /** Whether anything may have changed the stores since they were built. */
  private touched = false;
  private changeCount = 0;

  /** Neither `seed` nor `initial` is ever changed: the stores copy what they change. */
  constructor(
    /** The emulated interfaces, in the order of the state's sections. */
    readonly interfaces: L,
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
    this.events = new WorldEvents(
      {
        clock,
        transitions: (from, to, visit) => this.transitions(from, to, visit),
        nextTransitionAt: () => this.nextTransitionAt(),
      },
      { bufferSize: config.eventsBufferSize, bufferMaxBytes: config.eventsBufferMaxBytes },
    );
  }

  get stores(): StoresOf<L> {
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
    this.events.beforeReplace();
    this.current = this.build(this.seed);
    this.events.replaced('world.reset');
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
  fork(name: string, state?: AnyState): World<L, State> {
    const clock = new EmulatorClock({ start: this.clock.now(), scale: this.startClock.scale, frozen: this.startClock.frozen });
    return new World<L, State>(this.interfaces, this.seed, clock, this.config, state as State | undefined, name);
  }

  /** Replaces the whole state (already validated; kept, and never changed). */
  replace(state: State, why: 'world.imported' | 'world.reloaded' = 'world.imported'): void {
    this.events.beforeReplace();
    this.current = this.build(state);
    this.events.replaced(why);
  }

  /** The whole state in the fixture format. */
  exportState(): State {
    const state: Record<string, unknown> = {};
    for (const i of this.interfaces) Object.assign(state, i.state.export(this.storeOf(i)));
    return structuredClone(state) as State;
  }

  /**
   * The whole state as it is now, cheaply (no deep copy): what exportState() would answer,
   * for writing out in slices while requests go on (export-stream.ts). Sections in the
   * order of exportState().
   */
  snapshot(): StateSnapshot {
    const sections: Record<string, SectionSnapshot> = {};
    const releases: Array<() => void> = [];
    for (const i of this.interfaces) {
      const taken = i.state.snapshot(this.storeOf(i));
      Object.assign(sections, taken.sections);
      if (taken.release) releases.push(taken.release);
    }
    return { sections: sections as StateSnapshot['sections'], release: () => releases.forEach((release) => release()) };
  }

  /** How many entries each section of exportState() holds, read from the stores without copying. */
  counts(): Record<SectionName, number> {
    const counts: Record<string, number> = {};
    for (const i of this.interfaces) Object.assign(counts, i.state.counts(this.storeOf(i)));
    return counts as Record<SectionName, number>;
  }

  /**
   * The earliest instant after now at which a lifecycle of any interface changes on its own;
   * undefined when none will.
   */
  nextTransitionAt(): number | undefined {
    let earliest: number | undefined;
    for (const i of this.interfaces) {
      const next = i.timed?.nextTransitionAt(this.storeOf(i));
      if (next !== undefined && (earliest === undefined || next < earliest)) earliest = next;
    }
    return earliest;
  }

  /**
   * When one resource's lifecycle settles, from the interface whose `kind` it is: undefined
   * when there is no such resource, null when it never started.
   */
  settlesAt(kind: string, id: number | string): number | null | undefined {
    for (const i of this.interfaces) if (i.timed?.kinds.includes(kind)) return i.timed.settlesAt(this.storeOf(i), kind, id);
    return undefined;
  }

  /** Every step of every lifecycle that begins in [from, to], with how to read the resource's view then. */
  private transitions(from: number, to: number, visit: (kind: string, id: string | number, state: string, at: number, viewOf: ViewOf) => void): void {
    for (const i of this.interfaces) {
      const timed = i.timed;
      if (!timed?.stepsBetween) continue;
      const store = this.storeOf(i);
      const viewOf: ViewOf = (kind, id, at) => timed.viewAt?.(store, kind, id, at);
      timed.stepsBetween(store, from, to, (kind, id, state, at) => visit(kind, id, state, at, viewOf));
    }
  }

  private storeOf(i: AnyInterfaceModel): unknown {
    return (this.current as Record<string, unknown>)[i.name];
  }

  /**
   * Fresh stores from a state, which they only read: every store copies what it changes, so
   * the seed is shared, not copied, by each reset and each sandbox forked from this world.
   * In the order of the list, each build seeing the stores built before it.
   */
  private build(state: State): StoresOf<L> {
    const { clock, config } = this;
    this.builtFrom = state;
    this.touched = false;
    this.changeCount++;
    const stores: Record<string, unknown> = {};
    const views: ObjectViews = {};
    for (const i of this.interfaces) stores[i.name] = i.build(state as never, { clock, config, stores: Object.freeze({ ...stores }), views });
    // Every interface's repository objects, each read from its store when the repository is asked.
    for (const i of this.interfaces) if (i.objects) Object.assign(views, i.objects(stores[i.name]));
    return stores as StoresOf<L>;
  }
}
