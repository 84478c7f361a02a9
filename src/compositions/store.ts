import type { Clock } from '../core/clock.js';
import { DomainError, conflicting, invalid, missing } from '../core/errors.js';
import { stateAt, stepsBetween, type Step } from '../core/lifecycle.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import {
  ACCEPTED_IN,
  DEFAULT_INSTANCE_DURATIONS,
  HOLDS_SERVERS,
  INSTANCE_TABLES,
  RUN_ENDED,
  plan,
  playTables,
  playedMs,
  type DurationName,
  type Row,
} from './lifecycles.js';
import { runInSlices } from '../core/slices.js';
import { DEFAULT_ERROR, MESSAGE_BYTES, RunData, activeUsers, merged, percentiles, summarize, type Totals } from './results.js';
import type {
  ClipElement,
  CollectionBody,
  CompositionSections,
  CompositionSeed,
  Instance,
  InstanceBody,
  InstanceCommand,
  InstanceRecord,
  InstanceState,
  MessageMetrics,
  PlayFields,
  PlayOutcomeSeed,
  Result,
  ResultRecord,
} from './schemas.js';

/**
 * What this interface needs to know of a grid, handed in by the wiring (the provisioning
 * store answers it): its state, its running load servers and when its deployment began and
 * went down. Nothing else of provisioning is known here.
 */
export interface GridCapacity {
  id: number;
  name: string;
  state: string;
  /** RUNNING load-generating servers of the current deployment, by id. */
  loadServerIds: readonly number[];
  /** When the current deployment started. */
  startedAt: number;
  /** When the current deployment began to terminate or cancel, if it did. */
  downAt?: number;
}

export interface GridPort {
  /** Every grid that has a deployment. */
  grids(): readonly GridCapacity[];
  grid(id: number): GridCapacity | undefined;
}

export interface CompositionPorts {
  grids: GridPort;
}

/** A composition or a result as a repository object would show it. */
export interface CompositionObject {
  type: 'composition' | 'result';
  id: number;
  name: string;
  /** The composition's full path name (for a result: the composition it ran). */
  path: string;
  description: string;
}

/** Grid states in which a composition may load. */
const CHECKED_STATES = new Set(['CHECKED', 'CHECKED_WITH_FAILURES']);

/** The message of the real service when the grid lacks load servers (clients compare it). */
export const NOT_ENOUGH_SERVERS = 'There are not enough Load Servers available for Tracks in the Composition.';

/** Bounds on what requests make grow. */
export const MAX_INSTANCES = 1000;
export const MAX_RESULTS = 1000;
/** Runs whose generated totals are kept between reads. */
const CACHED_RUNS = 100;

/** The first result id handed out. */
export const FIRST_RESULT_ID = 4001;
/** The fixed parts of an instanceID (the shape of a Java UID: host, VM, counter), so ids do not depend on the time. */
const INSTANCE_HOST = '3c5e0b8d41a2f917';
const INSTANCE_VM = '-5c1f02a3';

const signedHex = (n: number) => (n < 0 ? `-${(-n).toString(16)}` : n.toString(16));
const iso = (ms: number) => new Date(ms).toISOString();
const clockText = (ms: number) => {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
};
/** The fields of a load or play body a load or play keeps: all but the composition's name. */
const playFieldsOf = ({ compositionName: _name, ...play }: InstanceBody): PlayFields => play;
const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const folderOf = (path: string) => path.slice(0, path.lastIndexOf('/')) || '/';

/** A result's status from its instance's state. */
function resultStatus(steps: readonly Step<InstanceState>[], now: number): string {
  let state = stateAt(steps, now);
  if (state === 'Unloaded') {
    for (let i = steps.length - 1; i >= 0; i--) {
      if (steps[i].at <= now && steps[i].state !== 'Unloaded' && RUN_ENDED.has(steps[i].state)) {
        state = steps[i].state;
        break;
      }
    }
  }
  return RUN_ENDED.has(state) && state !== 'Unloaded' ? state : 'Running';
}

/**
 * Compositions (the fixtures' catalogue), their instances and the results their plays write.
 * An instance's state is worked out from the clock on every read, like every other lifecycle;
 * a grid that went down under a loaded or playing instance fails it from that moment, which a
 * read finds through the grid port. Results are generated (results.ts) from the instance's
 * play time.
 */
export class CompositionStore {
  private readonly byPath = new Map<string, CompositionSeed>();
  private readonly byId = new Map<number, CompositionSeed>();
  private readonly instances = new Map<string, InstanceRecord>();
  private readonly results = new Map<number, ResultRecord>();
  private readonly runs = new Map<number, number>();
  private readonly nextOutcome = new Map<number, PlayOutcomeSeed>();
  private readonly cache = new Map<number, RunData>();
  private nextResultId = FIRST_RESULT_ID;
  private counter = -0x7ff0;

  constructor(
    seed: CompositionSections,
    private readonly clock: Clock,
    private readonly ports: CompositionPorts,
    private readonly timeScale: number,
    /** When the state was loaded (BuildContext.loadedAt): when a hand-written result that gives no startedAt ended. */
    loadedAt = clock.now(),
  ) {
    for (const c of seed.compositions) {
      this.byPath.set(c.path, c);
      this.byId.set(c.id, c);
    }
    for (const r of seed.compositionInstances) this.instances.set(r.instanceID, structuredClone(r));
    for (const r of seed.results) {
      // A result without its instance (written by hand) has fixed times: given, or a whole
      // run of its composition that ended when the state loaded. Kept, so an export has them.
      const given = this.instances.has(r.instanceID) || r.startedAt !== undefined;
      const fixed = given ? {} : { startedAt: loadedAt - (this.byId.get(r.compositionId)?.durationMs ?? 0) };
      this.results.set(r.id, { ...r, ...fixed });
      this.nextResultId = Math.max(this.nextResultId, r.id + 1);
      this.runs.set(r.compositionId, Math.max(this.runs.get(r.compositionId) ?? 0, r.run));
    }
    this.counter += seed.compositionInstances.length;
  }

  // --- State ----------------------------------------------------------------------------

  export(): CompositionSections {
    this.syncAll();
    return structuredClone({
      compositions: [...this.byId.values()],
      compositionInstances: [...this.instances.values()],
      results: [...this.results.values()],
    });
  }

  snapshot(): Record<keyof CompositionSections, SectionSnapshot> {
    const { compositions, compositionInstances, results } = this.export();
    return { compositions: { items: compositions }, compositionInstances: { items: compositionInstances }, results: { items: results } };
  }

  counts(): Record<keyof CompositionSections, number> {
    return { compositions: this.byId.size, compositionInstances: this.instances.size, results: this.results.size };
  }

  /** The compositions with what a dashboard shows of them. */
  catalog(): Array<{ id: number; path: string; description: string; durationMs: number; virtualUsers: number; loadServers: number }> {
    return [...this.byId.values()].map((c) => ({
      id: c.id,
      path: c.path,
      description: c.description,
      durationMs: c.durationMs,
      virtualUsers: c.tracks.reduce((n, t) => n + t.virtualUsers, 0),
      loadServers: c.tracks.reduce((n, t) => n + t.loadServers, 0),
    }));
  }

  /** Compositions and results in a neutral shape, for the repository's objects. */
  objects(): CompositionObject[] {
    const out: CompositionObject[] = [];
    for (const c of this.byId.values()) out.push({ type: 'composition', id: c.id, name: nameOf(c.path), path: c.path, description: c.description });
    for (const r of this.results.values()) {
      out.push({ type: 'result', id: r.id, name: r.name, path: this.byId.get(r.compositionId)?.path ?? '', description: r.description });
    }
    return out;
  }

  // --- Lifecycle ------------------------------------------------------------------------

  private durations(comp: CompositionSeed, play: number): Record<DurationName, number> {
    return { ...DEFAULT_INSTANCE_DURATIONS, ...comp.durations, play };
  }

  private composition(rec: InstanceRecord): CompositionSeed {
    const comp = this.byId.get(rec.compositionId);
    // An imported state may name a composition it no longer has.
    if (!comp) throw missing(`composition instance ${rec.instanceID}: its composition (id ${rec.compositionId}) no longer exists`);
    return comp;
  }

  /** Play time the run aims at: its length, or when its outcome ends it earlier. */
  private target(comp: CompositionSeed, rec: InstanceRecord): number {
    const { outcome, afterMs } = rec.outcome;
    return outcome === 'Completed' || afterMs === undefined ? comp.durationMs : Math.min(afterMs, comp.durationMs);
  }

  /**
   * Applies a grid that went down (terminated, cancelled or redeployed) under the instance
   * while its run had not ended: the instance failed at that moment. Idempotent.
   */
  private sync(rec: InstanceRecord, now: number): void {
    if (rec.failure !== undefined) return;
    const grid = this.ports.grids.grid(rec.gridId);
    const down = !grid ? undefined : grid.startedAt !== rec.gridStartedAt ? grid.startedAt : grid.downAt;
    if (down === undefined || down > now || down < rec.steps[0].at) return;
    const was = stateAt(rec.steps, down);
    if (RUN_ENDED.has(was)) return;
    const comp = this.composition(rec);
    rec.steps = [...rec.steps.filter((s) => s.at < down), ...plan([INSTANCE_TABLES.Failed], this.durations(comp, 0), down, this.timeScale)];
    rec.failure = `The grid '${grid!.name}' was terminated while the composition was ${was}: the composition failed.`;
  }

  private syncAll(): void {
    const now = this.clock.now();
    for (const rec of this.instances.values()) this.sync(rec, now);
  }

  private instance(id: string): InstanceRecord {
    const rec = this.instances.get(id);
    if (!rec) throw missing(`no composition instance '${id}'`);
    this.sync(rec, this.clock.now());
    return rec;
  }

  /** The earliest scheduled change of any instance after `now` (default the clock's). */
  nextTransitionAt(now = this.clock.now()): number | undefined {
    let earliest: number | undefined;
    for (const rec of this.instances.values()) {
      this.sync(rec, now);
      const next = rec.steps.find((s) => s.at > now)?.at;
      if (next !== undefined && (earliest === undefined || next < earliest)) earliest = next;
    }
    return earliest;
  }

  /**
   * Every step of any instance that begins in [from, to] (the event stream's transitions),
   * a grid that went down by `to` applied first.
   */
  stepsBetween(from: number, to: number, visit: (id: string, state: InstanceState, at: number) => void): void {
    for (const rec of this.instances.values()) {
      this.sync(rec, to);
      stepsBetween(rec.steps, from, to, (state, at) => visit(rec.instanceID, state, at));
    }
  }

  /** GET's view of an instance at `at`, less its URL; undefined when there is none. */
  viewAt(id: string, at: number): Omit<Instance, 'url'> | undefined {
    const rec = this.instances.get(id);
    return rec && this.view(rec, at);
  }

  /** When an instance's schedule reaches its last step; undefined when there is no such instance. */
  settlesAt(id: string): number | undefined {
    const rec = this.instances.get(id);
    if (!rec) return undefined;
    this.sync(rec, this.clock.now());
    return rec.steps[rec.steps.length - 1].at;
  }

  // --- Commands -------------------------------------------------------------------------

  /** POST ?command=load|play: a new instance on a checked grid with enough free load servers. */
  create(command: 'load' | 'play', body: InstanceBody): { instanceID: string } {
    const path = body.compositionName;
    if (path === undefined) throw invalid("body: missing required field 'compositionName' (the composition's full path name)");
    const comp = this.byPath.get(path);
    if (!comp) throw missing(`no composition '${path}'`);
    const now = this.clock.now();
    this.syncAll();
    // Room for one more: the oldest unloaded instance that wrote no result makes it, if any.
    const dropped = this.instances.size >= MAX_INSTANCES ? this.prunable(now) : undefined;
    if (this.instances.size >= MAX_INSTANCES && dropped === undefined) {
      throw conflicting(`${MAX_INSTANCES} composition instances exist: unload some first`);
    }
    const play = playFieldsOf(body);
    if (command === 'play') this.checkCanPlay(play);
    const needed = comp.tracks.reduce((n, t) => n + t.loadServers, 0);
    const held = new Set<number>();
    for (const rec of this.instances.values()) if (HOLDS_SERVERS(stateAt(rec.steps, now))) for (const id of rec.serverIds) held.add(id);
    const candidates = this.ports.grids
      .grids()
      .filter((g) => CHECKED_STATES.has(g.state) && (comp.grid === undefined || g.name === comp.grid))
      .map((g) => ({ grid: g, free: g.loadServerIds.filter((id) => !held.has(id)) }))
      .filter((c) => c.free.length >= needed)
      .sort((a, b) => a.grid.id - b.grid.id);
    const chosen = candidates[0];
    if (!chosen) throw invalid(NOT_ENOUGH_SERVERS);
    // Nothing has changed until here: a refusal leaves everything as it was.
    if (dropped !== undefined) this.instances.delete(dropped);
    const outcome = this.nextOutcome.get(comp.id) ?? comp.outcome ?? { outcome: 'Completed' };
    this.nextOutcome.delete(comp.id);
    const rec: InstanceRecord = {
      instanceID: `${INSTANCE_HOST}:${INSTANCE_VM}:${signedHex(this.counter++)}`,
      compositionId: comp.id,
      gridId: chosen.grid.id,
      gridStartedAt: chosen.grid.startedAt,
      serverIds: chosen.free.slice(0, needed),
      steps: [],
      outcome: structuredClone(outcome),
      // What a load is sent is kept for its play.
      ...(Object.keys(play).length > 0 ? { play } : {}),
    };
    const loading: readonly Row[] = command === 'load' ? INSTANCE_TABLES.load : [INSTANCE_TABLES.load[0]];
    const tables = command === 'load' ? [loading] : [loading, ...playTables('start', outcome.outcome)];
    rec.steps = plan(tables, this.durations(comp, this.target(comp, rec)), now, this.timeScale);
    if (command === 'play') this.writeResult(rec, comp, play, now);
    this.instances.set(rec.instanceID, rec);
    return { instanceID: rec.instanceID };
  }

  /** PUT /<id>?command=...: accepted at once, carried out over emulated time. */
  command(id: string, command: InstanceCommand, body: InstanceBody): { instanceID: string } {
    const rec = this.instance(id);
    const comp = this.composition(rec);
    if (body.compositionName !== undefined && body.compositionName !== comp.path) {
      throw invalid(`composition instance '${id}' is of '${comp.path}', not of '${body.compositionName}'`);
    }
    // Only a play reads more of the body than the name; another command refuses what it would not use.
    const sent = Object.keys(playFieldsOf(body));
    if (command !== 'play' && sent.length > 0) {
      throw invalid(`body: unknown field '${sent[0]}' for command '${command}': it holds only 'compositionName' (the other fields are read by load and play)`);
    }
    const now = this.clock.now();
    const state = stateAt(rec.steps, now);
    const accepted = ACCEPTED_IN[command];
    if (!accepted.includes(state)) {
      throw invalid(`composition instance '${id}' is ${state}: ${command} is accepted only when it is ${accepted.join(', ')}`);
    }
    const played = playedMs(rec.steps, now);
    const remaining = Math.max(0, this.target(comp, rec) - played);
    const durations = this.durations(comp, remaining);
    let tables: ReadonlyArray<readonly Row[]>;
    switch (command) {
      case 'play': {
        // The play's fields, over those its load was sent.
        const play = { ...rec.play, ...playFieldsOf(body) };
        this.checkCanPlay(play);
        tables = playTables('start', rec.outcome.outcome);
        this.writeResult(rec, comp, play, now);
        break;
      }
      case 'resume':
        tables = playTables('resume', rec.outcome.outcome);
        break;
      case 'pause':
        tables = [INSTANCE_TABLES.pause];
        break;
      case 'stop':
        tables = [INSTANCE_TABLES.Stopped];
        break;
      case 'abort':
        tables = [INSTANCE_TABLES.abort];
        break;
      case 'unload':
        tables = [INSTANCE_TABLES.unload];
        break;
    }
    // A play while loading is queued behind the load; everything else acts now.
    const from = command === 'play' && state === 'Loading' ? (rec.steps.find((s) => s.state === 'Loaded')?.at ?? now) : now;
    rec.steps = [...rec.steps.filter((s) => s.at < from), ...plan(tables, durations, from, this.timeScale)];
    return { instanceID: rec.instanceID };
  }

  /** Refuses a play whose result name is taken, or when the results are at their bound. */
  private checkCanPlay(body: PlayFields): void {
    if (this.results.size >= MAX_RESULTS) throw conflicting(`${MAX_RESULTS} results exist: delete some first`);
    if (body.resultName !== undefined) {
      for (const r of this.results.values()) if (r.name === body.resultName) throw invalid(`a result named '${body.resultName}' already exists`);
    }
  }

  private writeResult(rec: InstanceRecord, comp: CompositionSeed, body: PlayFields, now: number): void {
    const run = (this.runs.get(comp.id) ?? 0) + 1;
    this.runs.set(comp.id, run);
    const id = this.nextResultId++;
    const d = iso(now);
    const result: ResultRecord = {
      id,
      name: body.resultName ?? `${nameOf(comp.path)} (${d.slice(0, 10)} ${d.slice(11, 19).replace(/:/g, '.')})`,
      description: body.description ?? comp.description,
      instanceID: rec.instanceID,
      compositionId: comp.id,
      run,
      ...(body.rsdbName !== undefined ? { rsdbName: body.rsdbName } : {}),
    };
    this.results.set(id, result);
    rec.resultId = id;
    if (Object.keys(body).length > 0) rec.play = structuredClone(body);
  }

  /** The oldest unloaded instance that wrote no result, if any. */
  private prunable(now: number): string | undefined {
    for (const [id, rec] of this.instances) if (rec.resultId === undefined && stateAt(rec.steps, now) === 'Unloaded') return id;
    return undefined;
  }

  /** Control API: how the next play of a composition ends (used up by that play); null forgets it. */
  setNextPlayOutcome(path: string, outcome: PlayOutcomeSeed | null): CompositionSeed {
    const comp = this.byPath.get(path);
    if (!comp) throw missing(`no composition '${path}'`);
    if (outcome === null) this.nextOutcome.delete(comp.id);
    else this.nextOutcome.set(comp.id, structuredClone(outcome));
    return comp;
  }

  // --- Reads ----------------------------------------------------------------------------

  /** GET /<id>, less its URL (the route knows where it is served). */
  get(id: string): Omit<Instance, 'url'> {
    return this.view(this.instance(id), this.clock.now());
  }

  list(): Array<Omit<Instance, 'url'>> {
    const now = this.clock.now();
    return [...this.instances.values()].map((rec) => {
      this.sync(rec, now);
      return this.view(rec, now);
    });
  }

  /**
   * Every instance, with the counts of its result's messages when it has one: what a
   * dashboard polls, in one read.
   */
  async overview(): Promise<Array<Omit<Instance, 'url'> & { messages?: { count: number; errors: number } }>> {
    const out: Array<Omit<Instance, 'url'> & { messages?: { count: number; errors: number } }> = [];
    for (const view of this.list()) {
      if (view.resultid === undefined) {
        out.push(view);
        continue;
      }
      // Each result's minutes are folded in slices: the loop turns between them.
      const messages = await this.clipElement(String(view.resultid), 'elementType').then(
        (body) => (body as { elementTypes: Array<{ metrics: MessageMetrics }> }).elementTypes[0].metrics,
        // A result deleted meanwhile shows no messages.
        (err: unknown) => {
          if (err instanceof DomainError && err.kind === 'not-found') return undefined;
          throw err;
        },
      );
      out.push(messages ? { ...view, messages: { count: messages.count, errors: messages.errors } } : view);
    }
    return out;
  }

  private view(rec: InstanceRecord, now: number): Omit<Instance, 'url'> {
    const comp = this.composition(rec);
    const state = stateAt(rec.steps, now);
    const played = playedMs(rec.steps, now);
    const start = rec.steps.find((s) => s.state === 'Starting');
    const result = rec.resultId !== undefined ? this.results.get(rec.resultId) : undefined;
    // One literal, no spreads (every view shares one shape): an optional field absent is
    // undefined, which the serializers leave out as they leave out a missing key.
    return {
      instanceID: rec.instanceID,
      compositionName: nameOf(comp.path),
      partiallyLoaded: false,
      path: folderOf(comp.path),
      resultName: result?.name,
      resultid: result?.id,
      maestroCount: rec.serverIds.length,
      alphaServerId: rec.serverIds[0],
      startTime: start && start.at <= now ? iso(start.at) : undefined,
      state,
      status: this.statusText(rec, comp, state, played, now),
      totalTime: played,
    };
  }

  private statusText(rec: InstanceRecord, comp: CompositionSeed, state: InstanceState, played: number, now: number): string {
    const servers = `${rec.serverIds.length} load server${rec.serverIds.length === 1 ? '' : 's'}`;
    const users = comp.tracks.reduce((n, t) => n + t.virtualUsers, 0);
    const of = `${clockText(played)} of ${clockText(this.target(comp, rec))}`;
    switch (state) {
      case 'Loading':
        return rec.steps.some((s) => s.state === 'Starting') ? `Loading on ${servers}; it plays once loaded.` : `Loading on ${servers}.`;
      case 'Loaded':
        return `Loaded on ${servers}; ready to play.`;
      case 'Starting':
        return `Starting ${users} virtual users.`;
      case 'Playing':
        return `Playing: ${activeUsers(comp, played)} of ${users} virtual users, ${of}.`;
      case 'Pausing':
        return `Pausing at ${of}.`;
      case 'Paused':
        return `Paused at ${of}.`;
      case 'Resuming':
        return `Resuming at ${of}.`;
      case 'Stopping':
        return `Stopping at ${clockText(played)}: virtual users finish their current step.`;
      case 'Aborting':
        return `Aborting at ${clockText(played)}.`;
      case 'Closing':
        return 'Closing: the play has ended.';
      case 'Writing':
        return 'Writing the test data to the result.';
      case 'Completed':
        return `Completed after ${clockText(played)}.`;
      case 'Stopped':
        return `Stopped after ${clockText(played)}.`;
      case 'Aborted':
        return `Aborted after ${clockText(played)}; the test data is not complete.`;
      case 'Failed':
        return this.failureText(rec, played);
      case 'Unloaded': {
        const ended = resultStatus(rec.steps, now);
        if (rec.resultId === undefined) return 'Unloaded.';
        return ended === 'Failed' ? `Unloaded. ${this.failureText(rec, played)}` : `Unloaded; the run ended ${ended}.`;
      }
    }
  }

  private failureText(rec: InstanceRecord, played: number): string {
    if (rec.failure !== undefined) return rec.failure;
    return rec.outcome.message ?? `The composition failed after ${clockText(played)}.`;
  }

  // --- Results --------------------------------------------------------------------------

  private result(raw: string): { result: ResultRecord; rec?: InstanceRecord } {
    const id = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isNaN(id)) throw invalid(`result id '${raw}' is not an integer`);
    const result = this.results.get(id);
    if (!result) throw missing(`no result ${id}`);
    const rec = this.instances.get(result.instanceID);
    if (rec) this.sync(rec, this.clock.now());
    return { result, rec };
  }

  private resultView(result: ResultRecord, rec: InstanceRecord | undefined, now: number): Result {
    const comp = this.byId.get(result.compositionId);
    const steps = rec?.steps ?? [];
    if (!rec) {
      // Written by hand (or its instance left out of an import): a whole run that Completed at fixed times.
      const startedAt = result.startedAt ?? now;
      const duration = comp?.durationMs ?? 0;
      return {
        id: result.id,
        name: result.name,
        description: result.description,
        compositionName: comp?.path ?? '',
        instanceID: result.instanceID,
        status: 'Completed',
        startTime: iso(startedAt),
        endTime: iso(startedAt + duration),
        duration,
        virtualUsers: comp ? comp.tracks.reduce((n, t) => n + t.virtualUsers, 0) : 0,
        ...(result.rsdbName !== undefined ? { rsdbName: result.rsdbName } : {}),
      };
    }
    const start = steps.find((s) => s.state === 'Starting');
    const status = resultStatus(steps, now);
    const end = status === 'Running' ? undefined : steps.find((s, i) => RUN_ENDED.has(s.state) && i > 0 && s.at <= now);
    return {
      id: result.id,
      name: result.name,
      description: result.description,
      compositionName: comp?.path ?? '',
      instanceID: result.instanceID,
      status,
      startTime: iso(start?.at ?? now),
      ...(end ? { endTime: iso(end.at) } : {}),
      duration: playedMs(steps, now),
      virtualUsers: comp ? comp.tracks.reduce((n, t) => n + t.virtualUsers, 0) : 0,
      ...(result.rsdbName !== undefined ? { rsdbName: result.rsdbName } : {}),
    };
  }

  /** Results newest first, of one composition (full path name) and/or of one name. */
  listResults(filter: { composition?: string; name?: string }): Result[] {
    const now = this.clock.now();
    const out: Result[] = [];
    for (const result of this.results.values()) {
      const comp = this.byId.get(result.compositionId);
      if (filter.composition !== undefined && comp?.path !== filter.composition) continue;
      if (filter.name !== undefined && result.name !== filter.name) continue;
      const rec = this.instances.get(result.instanceID);
      if (rec) this.sync(rec, now);
      out.push(this.resultView(result, rec, now));
    }
    return out.sort((a, b) => b.id - a.id);
  }

  getResult(id: string): Result {
    const { result, rec } = this.result(id);
    return this.resultView(result, rec, this.clock.now());
  }

  /** DELETE a result (and its instance, once unloaded). */
  deleteResult(id: string): void {
    const { result, rec } = this.result(id);
    if (rec && stateAt(rec.steps, this.clock.now()) !== 'Unloaded') {
      throw invalid(`result ${result.id} is still being written by composition instance '${rec.instanceID}': stop or abort it first`);
    }
    this.results.delete(result.id);
    this.cache.delete(result.id);
    if (rec) this.instances.delete(rec.instanceID);
  }

  /**
   * `make` over the generated totals of a result at now (whole seconds of play time), kept
   * for the rest of that second under `key`: reads of a playing result cost one computation
   * a second, however many there are.
   */
  private async totals<T>(raw: string, key: string, make: (totals: Totals[], comp: CompositionSeed) => T): Promise<T> {
    const { result, rec } = this.result(raw);
    const comp = this.byId.get(result.compositionId);
    if (!comp) throw missing(`result ${result.id}: its composition no longer exists`);
    let data = this.cache.get(result.id);
    if (data) this.cache.delete(result.id);
    else data = new RunData(comp, { seed: comp.seed ?? comp.id, run: result.run, errorFactor: rec?.outcome.errorFactor ?? 1 });
    this.cache.set(result.id, data);
    if (this.cache.size > CACHED_RUNS) this.cache.delete(this.cache.keys().next().value!);
    const played = () => (rec ? playedMs(rec.steps, this.clock.now()) : comp.durationMs);
    // The minutes played are folded first, in slices (a first read of a run of days folds
    // thousands); what the clock adds meanwhile is a minute or two, folded by the read.
    await runInSlices(data.fold(played()));
    return data.derived(played(), key, (totals) => make(totals, comp));
  }

  private messageMetrics(parts: readonly Totals[]): MessageMetrics {
    let count = 0;
    let errors = 0;
    let duration = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const t of parts) {
      const s = summarize(t.histogram, t.series.messages);
      count += t.count * t.series.messages;
      errors += t.errors;
      duration += s.sum * t.series.messages;
      if (s.count) {
        min = Math.min(min, s.min);
        max = Math.max(max, s.max);
      }
    }
    const round2 = (x: number) => Math.round(x * 100) / 100;
    return {
      count,
      errors,
      duration: round2(duration),
      averageDuration: count ? round2(duration / count) : 0,
      minDuration: Number.isFinite(min) ? min : 0,
      maxDuration: max,
      bytesSent: count * MESSAGE_BYTES.sent,
      bytesReceived: (count - errors) * MESSAGE_BYTES.received,
    };
  }

  /** GET Results/v1/<id>/clip-element: the HTTP messages, by element type, name or error. */
  clipElement(id: string, groupBy: 'elementType' | 'elementName' | 'error'): Promise<ClipElement> {
    return this.totals(id, `clip-element:${groupBy}`, (totals) => this.clipElementOf(totals, groupBy));
  }

  private clipElementOf(totals: Totals[], groupBy: 'elementType' | 'elementName' | 'error'): ClipElement {
    if (groupBy === 'elementType') return { elementTypes: [{ elementType: 'message', metrics: this.messageMetrics(totals) }] };
    if (groupBy === 'elementName') {
      return { elementNames: totals.map((t) => ({ elementName: t.series.name, elementType: 'message', metrics: this.messageMetrics([t]) })) };
    }
    const byText = new Map<string, number>();
    let count = 0;
    let errors = 0;
    for (const t of totals) {
      count += t.count * t.series.messages;
      errors += t.errors;
      t.series.errorTexts.forEach((text, i) => byText.set(text, (byText.get(text) ?? 0) + t.errorsByText[i]));
    }
    const failing = [...byText].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    return {
      errors: [
        { error: 'No Error', elementTypes: [{ elementType: 'message', metrics: { count: count - errors, errors: 0 } }] },
        ...failing.map(([error, n]) => ({ error, elementTypes: [{ elementType: 'message', metrics: { count: n, errors: n } }] })),
      ],
    };
  }

  /** GET Results/v1/<id>/collection: transactions and pages with their durations and the asked percentiles. */
  collection(id: string, ps: readonly number[], groupBy: 'flattenedHierarchy' | 'containerType'): Promise<CollectionBody> {
    return this.totals(id, `collection:${groupBy}:${ps.join(',')}`, (totals, comp) => this.collectionOf(totals, comp, ps, groupBy));
  }

  private collectionOf(totals: Totals[], comp: CompositionSeed, ps: readonly number[], groupBy: 'flattenedHierarchy' | 'containerType'): CollectionBody {
    const entry = (type: string, parts: readonly Totals[], hierarchy?: string) => {
      const histogram = merged(parts.map((t) => t.histogram));
      const s = summarize(histogram);
      const failed = parts.reduce((n, t) => n + t.errors, 0);
      return {
        containerType: type,
        ...(hierarchy !== undefined ? { flattenedHierarchy: hierarchy } : {}),
        metrics: {
          started: s.count,
          completed: s.count - failed,
          failed,
          effectiveDuration: s.sum,
          minEffectiveDuration: s.min,
          maxEffectiveDuration: s.max,
          averageEffectiveDuration: s.average,
          effectiveDurationStandardOfDeviation: s.deviation,
          percentiles: percentiles(histogram, ps),
        },
      };
    };
    if (groupBy === 'containerType') {
      const types = [...new Set(totals.map((t) => t.series.type))].sort();
      return { collections: types.map((type) => entry(type, totals.filter((t) => t.series.type === type))) };
    }
    const composition = nameOf(comp.path);
    return {
      collections: totals.map((t) => entry(t.series.type, [t], `${composition}/${t.series.trackName}/${t.series.clip}/${t.series.name}`)),
    };
  }
}

export { DEFAULT_ERROR };
