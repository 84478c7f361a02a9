import type { Config } from '../config.js';
import { EmulatorClock, type ClockAnchor, type ClockMode, type ControllableClock } from '../core/clock.js';
import type { AnyInterfaceModel, StoresOf, WorldEventInput } from '../core/interface.js';
import { FaultStore } from './faults.js';
import type { FaultRuleInput } from './fault-schemas.js';
import { Journal, journalBudgetOf } from './journal.js';
import { stateShifter, type SectionName, type State as AnyState, type StateOfList } from './state.js';
import type { StateSnapshot } from './export-stream.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import type { ObjectViews } from '../core/objects.js';
import { WorldEvents, type EventInput, type ViewOf } from './events.js';
import { Timeline } from './timeline.js';
import type { TimelineState } from './timeline-schemas.js';

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
  /**
   * Fault-injection rules: the state's `faults` section (the seed's, a state file's), and the
   * control API's. A reset brings back the seed's alone; an import adds its own to the rest.
   */
  readonly faults: FaultStore;
  /** The last requests served; bounded by JOURNAL_SIZE. */
  readonly journal: Journal;
  /** Its changes, for the event stream: idle (no timer, no work) while nobody listens. */
  readonly events: WorldEvents;
  /**
   * Requests played at emulated offsets (docs/timelines.md): the seed's `timeline`, starting
   * when the seed was loaded, or one set through the control API. Played and recorded by
   * control/timeline-player.ts.
   */
  readonly timeline: Timeline;
  /**
   * Plays the timeline's steps due by now (the app's TimelinePlayer; a sandbox forked from
   * this world gets the same). Without a request they play only when an event stream's timer
   * reaches them: nobody sees the world meanwhile but its listeners.
   */
  player: { catchUp(world: World<L, State>): Promise<unknown> | undefined } | undefined;
  /** The clock settings the process started with, which reset restores. */
  private readonly startClock: { scale: number; frozen: boolean };
  /** The state the stores were last built from (the seed, a loaded or posted state). */
  private builtFrom!: State;
  /** The state the stores were built with (builtFrom, or it moved to this clock), whose work left for first use prepareSnapshot() does. */
  private builtWith!: State;
  /** When the stores were built, emulated epoch ms (BuildContext.loadedAt); an export carries it. */
  private loadedAt = 0;
  /** Whether anything may have changed the stores since they were built. */
  private touched = false;
  private changeCount = 0;
  /**
   * The wake-up timer of the work due at emulated instants (a delivery's retry): one per world,
   * set to the earliest such instant in real time (by the clock's speed), only while the clock
   * runs and something is due. `dueTimerAt` is the emulated instant it is set for.
   */
  private dueTimer: NodeJS.Timeout | undefined;
  private dueTimerAt: number | undefined;
  private readonly unwatchClock: (() => void) | undefined;
  /** The world is gone (a sandbox deleted or replaced, the app closed): it sets no timer any more. */
  private disposed = false;
  /**
   * The world is in use: the default world from the start, a sandbox's once it is registered
   * (activate()). A provisional sandbox world, which a refused request drops, starts no work
   * due and sets no timer.
   */
  private active: boolean;

  /** Neither `seed` nor `initial` is ever changed: the stores copy what they change. */
  constructor(
    /** The emulated interfaces, in the order of the state's sections. */
    readonly interfaces: L,
    private seed: State,
    readonly clock: ControllableClock,
    readonly config: Config,
    /** What the world holds at first, when not the seed (a state file, a sandbox's posted state). */
    initial: State = seed,
    /** The sandbox this world is; none for the default world. */
    readonly name?: string,
    /** How `initial` is loaded when it carries a clock (an export): the seed by SEED_CLOCK, any other state on its own clock. */
    initialClock: ClockMode = initial === seed ? config.seedClock : 'keep',
  ) {
    this.active = name === undefined;
    this.current = this.build(initial, initialClock);
    // A state other than the seed (a state file, an export) carries no timeline unless it has one of its own.
    this.timeline = new Timeline(clock.now(), timelineOf(initial), { lenient: true });
    this.faults = new FaultStore(clock);
    this.faults.addAll(faultsOf(initial));
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
        nextTransitionAt: (after) => earliest(earliest(this.nextTransitionAt(after), this.wakeAt(after)), this.player && this.timeline.nextAt()),
        // The timeline's steps due, played while someone listens on a running clock: the stream's timer is their wake-up.
        wake: () => (!this.disposed && this.timeline.due(this.clock.now()) ? this.player?.catchUp(this) : undefined),
      },
      { bufferSize: config.eventsBufferSize, bufferMaxBytes: config.eventsBufferMaxBytes },
    );
    // What falls due at emulated instants is looked for on every move of the clock (and by runDue
    // before each request), and the wake-up timer set again for the clock's new time and speed.
    this.unwatchClock = clock.watch?.(() => {
      this.runDue();
      this.armDue(true);
    });
    this.armDue(true);
  }

  /** The earliest emulated instant a store has work due at (a delivery's retry); undefined when none waits. */
  private nextDueAt(): number | undefined {
    let at: number | undefined;
    for (const i of this.dueing) at = earliest(at, i.nextDueAt?.(this.storeOf(i)));
    return at;
  }

  /**
   * Sets the wake-up timer to the earliest work due, converted to real time with the clock's
   * speed: none while nothing is due, while the clock is paused (frozen or at speed 0; a clock
   * advance looks instead), or once the world is disposed. Work already due that could not
   * start (every delivery slot of the process in use) is looked for again after
   * DUE_RECHECK_MS. `force`: set it again even when it is set for the same instant (the clock
   * changed); without, only a change of the earliest instant sets it again.
   */
  private armDue(force: boolean): void {
    if (this.disposed || !this.active) return;
    const next = this.nextDueAt();
    if (!force && this.dueTimer !== undefined && next === this.dueTimerAt) return;
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    this.dueTimerAt = undefined;
    if (next === undefined) return;
    const { now, scale, frozen } = this.clock.status();
    if (frozen || !(scale > 0)) return;
    // Rounded up, and at least 1 ms: a timer that fires early finds nothing due and is set again.
    const wait = next <= now ? DUE_RECHECK_MS : Math.min(LONGEST_TIMER, Math.max(1, Math.ceil((next - now) / scale)));
    this.dueTimerAt = next;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.dueTimerAt = undefined;
      this.runDue();
      this.armDue(false);
    }, wait);
    // Never what keeps the process running.
    this.dueTimer.unref();
  }

  /** A sandbox's world is registered: from now on it starts the work that falls due, and sets its wake-up timer. */
  activate(): void {
    if (this.active || this.disposed) return;
    this.active = true;
    this.runDue();
    this.armDue(true);
  }

  /** The wake-up timers the world holds now: 0 or 1 (for tests, and the health of a shut-down world). */
  get dueTimers(): number {
    return this.dueTimer === undefined ? 0 : 1;
  }

  /**
   * The world is gone (a sandbox deleted or replaced, the app closed): its wake-up timer is
   * cleared, its clock no longer watched, and its stores start no more work of their own
   * (attempts under way end, and are written into the outbox, which an export still reads).
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    this.dueTimerAt = undefined;
    this.unwatchClock?.();
    this.retire(this.current);
  }

  /** Stores the world no longer holds (replaced by a reset, an import, a reload) start no more work of their own. */
  private retire(stores: StoresOf<L>): void {
    for (const i of this.dueing) i.dispose?.((stores as Record<string, unknown>)[i.name]);
  }

  /** Carries out what fell due by now in every store (a delivery's retry): cheap when nothing did. */
  runDue(): void {
    if (this.dueing.length === 0 || !this.active) return;
    const now = this.clock.now();
    for (const i of this.dueing) i.due!(this.storeOf(i), now);
  }

  /** The interfaces with work due at emulated instants. */
  private get dueing(): readonly AnyInterfaceModel[] {
    return (this.dueList ??= this.interfaces.filter((i) => i.due !== undefined));
  }
  private dueList: readonly AnyInterfaceModel[] | undefined;

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
   * setting. By default the clock's time is not moved back (a client that moved it may hold
   * instants of it): lifecycles re-seeded by a reset start from the current time. `real`
   * first returns the clock to real time, so the seed's relative times are resolved against
   * the real now; `keep` loads a seed that carries a clock on it (see SEED_CLOCK).
   */
  reset(options: { clock?: ClockMode } = {}): void {
    this.events.beforeReplace();
    if (options.clock === 'real') this.clock.set({ now: this.clock.real() });
    this.rebuild(options.clock ?? this.config.seedClock, 'world.reset');
  }

  /** The stores built again from the seed (its clock, if any, read as `clockMode` says), and what a reset sets back. */
  private rebuild(clockMode: ClockMode, why: 'world.reset' | 'world.reloaded'): void {
    const old = this.current;
    this.current = this.build(this.seed, clockMode);
    this.retire(old);
    this.events.replaced(why);
    this.clock.setScale(this.startClock.scale);
    this.clock.setFrozen(this.startClock.frozen);
    this.faults.clear();
    // The seed's rules, checked when the seed was read, start again with fresh counts and seeds' draws.
    this.faults.addAll(faultsOf(this.seed));
    this.journal.clear();
    // The seed's timeline, starting again now.
    this.timeline.replace(timelineOf(this.seed), this.clock.now(), { lenient: true });
    this.armDue(true);
  }

  /**
   * The world as the seed makes it at the emulated instant `at`, on a frozen clock: where a
   * seek of the timeline replays its steps from (control/timeline-player.ts). Every store,
   * fault rule and journal entry is built again, as a reset does; the timeline keeps its steps,
   * none of them played, starting at `at`. The caller sets the clock's scale and frozen setting
   * back once it has replayed. The seed's clock, if any, is read as its age at `at`.
   */
  restartAt(at: number): void {
    this.events.beforeReplace();
    this.clock.set({ now: at, frozen: true });
    const old = this.current;
    this.current = this.build(this.seed, 'real');
    this.retire(old);
    this.faults.clear();
    this.faults.addAll(faultsOf(this.seed));
    this.journal.clear();
    this.timeline.rewind(at);
    this.events.replaced('world.reset');
  }

  /**
   * A new seed (the fixtures reloaded): this world is reset to it, and sandboxes forked from
   * now on start from it. Worlds forked before keep the seed they started from. The clock
   * keeps its time unless `clockMode` is `keep` and the seed carries a clock, which it is then
   * set to (the caller decides when a reload may move the clock); a seed's clock otherwise
   * only moves its emulated times to keep their ages.
   */
  reseed(seed: State, clockMode: ClockMode = 'real'): void {
    this.seed = seed;
    this.events.beforeReplace();
    this.rebuild(clockMode, 'world.reloaded');
  }

  /**
   * A new world beside this one, as a sandbox starts: its own stores, built from the seed this
   * world started from (or from `state`), which it shares without changing it, and its own
   * clock, starting at this world's current time (or at `at`: a sandbox of the state file is
   * rebuilt at the instant it was first built) with the clock settings the process started with.
   */
  fork(name: string, state?: AnyState, clockMode?: ClockMode, at: number = this.clock.now()): World<L, State> {
    // The same real time as this world's clock (a reset to real time reads it), its own emulated time.
    const source = () => this.clock.real();
    const clock = new EmulatorClock({ start: at, scale: this.startClock.scale, frozen: this.startClock.frozen, source });
    const forked = new World<L, State>(this.interfaces, this.seed, clock, this.config, (state ?? this.seed) as State, name, clockMode);
    forked.player = this.player;
    return forked;
  }

  /**
   * Replaces the whole state (already validated; kept, and never changed). A state that
   * carries a clock (an export) is loaded on it by default (`keep`: the clock is set to the
   * export's, so every answer is the source's), or on this world's time (`real`). The state's
   * fault rules are added to the world's, each replacing one of the same id; when they cannot
   * be (the limits of all rules together), nothing changes. `why` is the event the stream sends.
   */
  replace(state: State, clockMode: ClockMode = 'keep', why: 'world.imported' | 'world.reloaded' = 'world.imported'): void {
    this.faults.addAll(faultsOf(state));
    this.events.beforeReplace();
    const old = this.current;
    this.current = this.build(state, clockMode);
    this.retire(old);
    // A state with a timeline of its own brings it, starting now; any other keeps the world's.
    const timeline = timelineOf(state);
    if (timeline) this.timeline.replace(timeline, this.clock.now(), { lenient: true });
    this.events.replaced(why);
    this.armDue(true);
  }

  /**
   * Works out ahead, in slices that let the event loop turn between them, what building stores
   * from `state` takes long for (every interface's `prepare`), so that a replace() or fork()
   * with it afterwards holds the event loop only briefly. Changes nothing in this world;
   * throws what building the stores would throw, so an import it refuses changes nothing.
   */
  async prepare(state: State): Promise<void> {
    for (const i of this.interfaces) await i.prepare?.(state as never, { now: this.clock.now() });
  }

  /**
   * Does, in slices, the work the stores left for their first use (the index of the seed's
   * annotations) that a snapshot() would otherwise do at once: an export right after a start
   * or an import held the event loop for 40-80 ms in snapshot(). Nothing when it is done.
   */
  async prepareSnapshot(): Promise<void> {
    await this.prepare(this.builtWith);
  }

  /** The clock an export of this world carries, read at one instant with the export. */
  anchor(): ClockAnchor {
    const { now, scale, frozen } = this.clock.status();
    return { now, scale, frozen, loadedAt: this.loadedAt };
  }

  /**
   * The whole state in the fixture format, with the clock its relative times are relative to;
   * the world's fault rules that can still fire, as rules to add; no scenarios, whose outcomes
   * are in their resources (`nextStartOutcome`).
   */
  exportState(): State {
    const clock = this.anchor();
    const state: Record<string, unknown> = { clock };
    for (const i of this.interfaces) Object.assign(state, i.state.export(this.storeOf(i), clock.now));
    Object.assign(state, this.worldSections());
    const timeline = this.timeline.toState(clock.now);
    if (timeline) state.timeline = timeline;
    return structuredClone(state) as State;
  }

  /** The sections of the state that are the world's own, not an interface's. */
  private worldSections(): { faults: FaultRuleInput[]; scenarios: never[] } {
    return { faults: this.faults.export(), scenarios: [] };
  }

  /**
   * The whole state as it is now, cheaply (no deep copy): what exportState() would answer,
   * for writing out in slices while requests go on (export-stream.ts). Sections in the
   * order of exportState().
   */
  snapshot(): StateSnapshot {
    const clock = this.anchor();
    const sections: Record<string, SectionSnapshot> = {};
    const releases: Array<() => void> = [];
    for (const i of this.interfaces) {
      const taken = i.state.snapshot(this.storeOf(i), clock.now);
      Object.assign(sections, taken.sections);
      if (taken.release) releases.push(taken.release);
    }
    // Copies already (and small: at most MAX_RULES rules).
    for (const [name, items] of Object.entries(this.worldSections())) sections[name] = { items };
    const timeline = this.timeline.toState(clock.now);
    return {
      clock,
      ...(timeline ? { timeline } : {}),
      sections: sections as StateSnapshot['sections'],
      release: () => releases.forEach((release) => release()),
    };
  }

  /** How many entries each section of exportState() holds, read from the stores without copying. */
  counts(): Record<SectionName, number> {
    const counts: Record<string, number> = {};
    for (const i of this.interfaces) Object.assign(counts, i.state.counts(this.storeOf(i)));
    return counts as Record<SectionName, number>;
  }

  /**
   * The earliest instant after `after` (default now) at which a lifecycle of any interface
   * changes on its own; undefined when none will.
   */
  nextTransitionAt(after?: number): number | undefined {
    let earliest: number | undefined;
    for (const i of this.interfaces) {
      const next = i.timed?.nextTransitionAt(this.storeOf(i), after);
      if (next !== undefined && (earliest === undefined || next < earliest)) earliest = next;
    }
    return earliest;
  }

  /** When the event stream must look again for a change that is no lifecycle step (Timed.wakeAt). */
  private wakeAt(after: number): number | undefined {
    let at: number | undefined;
    for (const i of this.interfaces) at = earliest(at, i.timed?.wakeAt?.(this.storeOf(i), after));
    return at;
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
  private build(given: State, clockMode: ClockMode): StoresOf<L> {
    const { clock, config } = this;
    this.builtFrom = given;
    this.touched = false;
    this.changeCount++;
    // An export's times are relative to its clock: on it, they are read as they are; on
    // another, its emulated times move by the difference (every relative one follows the clock).
    let state = given;
    const anchor = (given as AnyState).clock;
    let loadedAt = clock.now();
    // A state refused while its stores are built (a relative range that ends before it starts)
    // leaves the clock as it was.
    const before = anchor && clockMode === 'keep' ? clock.status() : undefined;
    if (anchor && clockMode === 'keep') {
      clock.set(anchor);
      loadedAt = anchor.loadedAt ?? anchor.now;
    } else if (anchor) {
      const delta = clock.now() - anchor.now;
      state = stateShifter(this.interfaces)(given as AnyState, delta) as State;
      loadedAt = (anchor.loadedAt ?? anchor.now) + delta;
    }
    const stores: Record<string, unknown> = {};
    const views: ObjectViews = {};
    try {
      for (const i of this.interfaces) {
        // Events of a store that is no longer the world's (replaced by a reset or an import) are not the world's news.
        const record = (event: WorldEventInput) => {
          if (this.storeOf(i) === stores[i.name]) this.events.record(event as EventInput);
        };
        // Likewise their work due: only the world's stores set its wake-up timer.
        const dueChanged = () => {
          // (None while the world's first stores are built: the constructor sets the timer once they are.)
          if ((this.current as unknown) !== undefined && this.storeOf(i) === stores[i.name]) this.armDue(false);
        };
        const world = this.name !== undefined ? { world: this.name } : {};
        stores[i.name] = i.build(state as never, { clock, loadedAt, config, stores: Object.freeze({ ...stores }), views, record, dueChanged, ...world });
      }
    } catch (error) {
      if (before) clock.set(before);
      throw error;
    }
    this.loadedAt = loadedAt;
    this.builtWith = state;
    // Every interface's repository objects, each read from its store when the repository is asked.
    for (const i of this.interfaces) if (i.objects) Object.assign(views, i.objects(stores[i.name]));
    return stores as StoresOf<L>;
  }
}

/** The longest wait setTimeout takes. */
const LONGEST_TIMER = 2 ** 31 - 1;
/** Real ms after which work already due that could not start (every delivery slot in use) is looked for again. */
export const DUE_RECHECK_MS = 100;

/** The earlier of two instants, either of which may be unknown. */
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** The timeline a state holds, if any. */
function timelineOf(state: unknown): TimelineState | undefined {
  return (state as { timeline?: TimelineState }).timeline;
}

/** The fault rules a state holds (none for a state of a list without the `faults` section). */
function faultsOf(state: unknown): readonly FaultRuleInput[] {
  return ((state as { faults?: FaultRuleInput[] }).faults ?? []) as readonly FaultRuleInput[];
}
