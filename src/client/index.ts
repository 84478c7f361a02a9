/**
 * A typed client of the emulator's control API (/_emulator), for tests and tools in Node and
 * in browsers alike: it uses only `fetch`, and every type it names comes from the schemas the
 * server validates with (type-only imports, erased from the JavaScript), so the two cannot
 * drift apart.
 *
 *   const emu = new EmulatorClient('http://localhost:8080', { adminToken: process.env.ADMIN_TOKEN });
 *   await emu.reset();
 *   await emu.advance(60_000);
 *   expect(await emu.countRequests({ method: 'POST', path: '/concerto/mpulse/api/annotations/*' })).toBe(1);
 */
import type { Static } from '@sinclair/typebox';
import type {
  AdvanceBody,
  AdvanceResultSchema,
  AlertPatchBodySchema,
  ClockSettingsBody,
  ClockStatusBody,
  CompositionListSchema,
  FaultRule,
  FaultRuleInput,
  HealthSchema,
  InstanceOverviewSchema,
  JournalCount,
  JournalFindBody,
  JournalFound,
  JournalListSchema,
  JournalMatcher,
  JournalQuery,
  JournalRecord,
  Lifecycles,
  NextPlayBodySchema,
  NextStartSchema,
  ReplaceResultSchema,
  ResetResultSchema,
  ResourceKind,
  ResourceLifecycleSchema,
  SignInList,
} from '../control/schemas.js';
import type { Alert } from '../alerts/schemas.js';
import type { AlertRule, RuleStatus } from '../alerts/rule-schemas.js';
import type { Delivery, DeliveryListSchema, DeliveryQuery } from '../alerts/delivery-schemas.js';
import type { Incident, IncidentCreateBody } from '../query/schemas.js';
import type { FixtureFile, State } from '../state-schema.js';
import type { ErrorBody } from '../http/error-body.js';
import { PATHS } from '../http/paths.js';
import type { SandboxListSchema, SandboxSummarySchema } from '../world/sandbox-schemas.js';
import type { EventKind, EventType, WorldEventData } from '../world/event-types.js';
import type { TimelineInput, TimelineStep, TimelineStepInput, TimelineView } from '../world/timeline-schemas.js';

export type Health = Static<typeof HealthSchema>;
export type ResetResult = Static<typeof ResetResultSchema>;
export type ReplaceResult = Static<typeof ReplaceResultSchema>;
export type ClockStatus = ClockStatusBody;
export type AdvanceResult = Static<typeof AdvanceResultSchema>;
export type ResourceLifecycle = Static<typeof ResourceLifecycleSchema>;
/** The start a grid, environment or RSDB is on, and how it ends (its lifecycle's `currentStart`). */
export type CurrentStart = NonNullable<ResourceLifecycle['currentStart']>;
export type { SignInList };
export type NextStart = Static<typeof NextStartSchema>;
export type JournalList = Static<typeof JournalListSchema>;
/** A state to import: any subset of the sections of an export (left-out sections are empty). */
export type StateInput = FixtureFile;
export type AlertPatch = Static<typeof AlertPatchBodySchema>;
/** One page of the outbox of alert deliveries. */
export type DeliveryList = Static<typeof DeliveryListSchema>;
/** One alert as `alert(uid)` answers it: with its latest deliveries, newest first. */
export type AlertWithDeliveries = Alert & { deliveries: Delivery[] };
export type {
  AdvanceBody,
  Alert,
  /** An alert's threshold rule (`alert.rule`), and where its evaluation stands (`alert.ruleStatus`). */
  AlertRule,
  RuleStatus,
  Delivery,
  DeliveryQuery,
  ClockSettingsBody,
  ErrorBody,
  FaultRule,
  FaultRuleInput,
  JournalCount,
  JournalFindBody,
  JournalFound,
  JournalMatcher,
  JournalQuery,
  JournalRecord,
  Lifecycles,
  ResourceKind,
  State,
};

export type { EventKind, EventType };
/** A timeline (docs/timelines.md): what GET /_emulator/timeline answers, and what a PUT and a fixture's `timeline` hold. */
export type { TimelineInput, TimelineStep, TimelineStepInput, TimelineView };
/** One event of `GET /_emulator/events`: its `data`, parsed. */
export type EmulatorEvent = WorldEventData;

/** Which events `events()` yields (each list absent: all), and how it stops. */
export interface EventsOptions {
  kind?: EventKind | readonly EventKind[];
  id?: string | number | ReadonlyArray<string | number>;
  types?: EventType | readonly EventType[];
  /** Resume after this event id (events the emulator still holds are sent first). */
  lastEventId?: number;
  /** Ends the iteration (and closes the stream) when aborted. */
  signal?: AbortSignal;
}

/** A resource with a lifecycle, as the event stream names it. */
export type LifecycleKind = Extract<EventKind, 'grid' | 'server' | 'rsdb' | 'environment' | 'instance'>;

export interface WaitTarget {
  /** A lifecycle's kind, or `alert` (states `firing` and `cleared`: a call's fire or clear, or its threshold rule's). */
  kind: LifecycleKind | 'alert';
  /** A grid's, server's, RSDB's or environment's id; a composition instance's instanceID; an alert's uid. */
  id: number | string;
  /** The state (or any of the states) to wait for. */
  state: string | readonly string[];
}

/** The state an alert event leaves its alert in. */
const ALERT_STATES: Readonly<Record<string, string>> = { 'alert.fired': 'firing', 'alert.cleared': 'cleared' };

export interface WaitOptions {
  /** Real time to wait at most (default 30 s); then an EmulatorError with status 0. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What waitFor found: the state, since when (emulated, when known), and the resource's view when known. */
export interface Reached {
  state: string;
  at?: number;
  view?: unknown;
}

/** The control API's name of each lifecycle kind (GET /_emulator/lifecycles/<kind>/<id>). */
const LIFECYCLE_ROUTE: Readonly<Record<Exclude<LifecycleKind, 'instance'>, ResourceKind>> = {
  grid: 'grid',
  server: 'cloudServer',
  rsdb: 'rsdb',
  environment: 'environment',
};

const listParam = <T>(value: T | readonly T[] | undefined): string | undefined =>
  value === undefined ? undefined : (Array.isArray(value) ? (value as readonly T[]) : [value as T]).map(String).join(',');

/** One sandbox as `GET /_emulator/sandboxes` lists it. */
export type SandboxInfo = Static<typeof SandboxSummarySchema>;
/** Every sandbox, MAX_SANDBOXES and the SANDBOXES mode. */
export type SandboxList = Static<typeof SandboxListSchema>;

export interface EmulatorClientOptions {
  /** ADMIN_TOKEN of the emulator, sent as `Authorization: Bearer <token>` on every control call. */
  adminToken?: string;
  /** Bind the client to this sandbox: every path is served under `/sandbox/<name>`. */
  sandbox?: string;
  /** The fetch to use (default: the global one), e.g. one that goes through a proxy. */
  fetch?: typeof fetch;
  /** Extra headers for every call. */
  headers?: Record<string, string>;
}

/**
 * What the emulator answered when a call failed: `status` is the HTTP status (0 when no
 * answer came at all), `message` the emulator's own explanation.
 */
export class EmulatorError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The error body as the emulator sent it, when it sent one. */
    readonly body?: ErrorBody,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EmulatorError';
  }
}

type Query = Record<string, string | number | boolean | undefined>;

interface CallOptions {
  body?: unknown;
  query?: Query;
  /** Answer the response itself, once its status is known to be good (an event stream); undefined when `signal` aborted it first. */
  stream?: { signal?: AbortSignal };
  /** Call the emulator's default sandbox, whatever sandbox the client is bound to. */
  root?: boolean;
}

const trimSlashes = (url: string) => url.replace(/\/+$/, '');

/** The emulator's own pages and documents in the path table, which are no base URL of an interface. */
const OWN_PAGES = new Set(['health', 'openapi', 'docs', 'ui']);

/**
 * The base URL of each interface (the path table's names: provisioning, repository,
 * annotations, alerts, compositions, results, query, ...), of the control API (`control`), and
 * of the mPulse APIs (`rum`). Made from the same table the server registers its routes under,
 * so a new interface's URL is here as soon as its path is in the table.
 */
export type Urls = { [K in Exclude<keyof typeof PATHS, 'health' | 'openapi' | 'docs' | 'ui'>]: string } & { rum: string };

export class EmulatorClient {
  /** Base URL of the emulator itself, without a sandbox. */
  readonly rootUrl: string;
  /** Base URL this client works on: the root URL, or the sandbox's under it. */
  readonly url: string;
  /** The sandbox this client is bound to, if any. */
  readonly sandboxName: string | undefined;
  private readonly options: EmulatorClientOptions;
  private readonly fetcher: typeof fetch;

  constructor(baseUrl: string, options: EmulatorClientOptions = {}) {
    this.rootUrl = trimSlashes(baseUrl);
    this.options = options;
    this.sandboxName = options.sandbox;
    this.url = options.sandbox === undefined ? this.rootUrl : `${this.rootUrl}/sandbox/${encodeURIComponent(options.sandbox)}`;
    // Bound, so that a fetch taken from a window is not called with this client as `this`.
    const given = options.fetch ?? globalThis.fetch;
    if (typeof given !== 'function') throw new TypeError('EmulatorClient needs fetch: run it on Node 18 or later, or pass options.fetch');
    this.fetcher = given.bind(globalThis);
  }

  /** Base URLs of the interfaces, for configuring the system under test. */
  get urls(): Urls {
    // Every base path of the path table (the interfaces' and the control API's), then the mPulse root.
    const urls: Record<string, string> = {};
    for (const [name, path] of Object.entries(PATHS)) if (!OWN_PAGES.has(name)) urls[name] = `${this.url}${path}`;
    return { ...urls, rum: `${this.url}/concerto/mpulse` } as Urls;
  }

  /** A client of the same emulator, bound to the sandbox `name`. */
  sandbox(name: string): EmulatorClient {
    return new EmulatorClient(this.rootUrl, { ...this.options, sandbox: name });
  }

  // ---- health, reset, state -----------------------------------------------------------

  health(): Promise<Health> {
    return this.call('GET', '/health');
  }

  /** Back to the seed: stores, tokens, clock settings, faults and journal. */
  reset(): Promise<ResetResult> {
    return this.call('POST', '/reset');
  }

  /** The whole state, in the fixture format. */
  exportState(): Promise<State> {
    return this.call('GET', '/state');
  }

  /** Replaces the whole state; refused (EmulatorError 400) when invalid, and the old state kept. */
  importState(state: StateInput): Promise<ReplaceResult> {
    return this.call('PUT', '/state', { body: state });
  }

  // ---- clock --------------------------------------------------------------------------

  clock(): Promise<ClockStatus> {
    return this.call('GET', '/clock');
  }

  /** Moves emulated time forward by `ms`; every lifecycle follows at once. */
  advance(ms: number): Promise<AdvanceResult> {
    return this.advanceBy({ ms });
  }

  /** Moves emulated time to an instant (epoch ms, ISO 8601 text or a Date). */
  advanceTo(instant: number | string | Date): Promise<AdvanceResult> {
    return this.advanceBy({ to: instant instanceof Date ? instant.getTime() : instant });
  }

  /** Moves emulated time to the next lifecycle transition (advancedMs 0 when none is scheduled). */
  advanceToNext(): Promise<AdvanceResult> {
    return this.advanceBy({ to: 'next' });
  }

  /** Moves emulated time until a resource's lifecycle has settled. */
  advanceUntilSettled(kind: ResourceKind, id: number): Promise<AdvanceResult> {
    return this.advanceBy({ until: { kind, id } });
  }

  /** The raw advance call: exactly one of `ms`, `to`, `until`. */
  advanceBy(body: AdvanceBody): Promise<AdvanceResult> {
    return this.call('POST', '/clock/advance', { body });
  }

  /** Changes the clock's scale and/or freezes it. */
  setClock(settings: ClockSettingsBody): Promise<ClockStatus> {
    return this.call('PUT', '/clock', { body: settings });
  }

  /** Emulated ms per real ms: 1 real time, 60 a minute per second, 0 stopped. */
  setScale(scale: number): Promise<ClockStatus> {
    return this.setClock({ scale });
  }

  freeze(): Promise<ClockStatus> {
    return this.setClock({ frozen: true });
  }

  unfreeze(): Promise<ClockStatus> {
    return this.setClock({ frozen: false });
  }

  // ---- timeline ----------------------------------------------------------------------

  /** The world's timeline: its steps (each done or not), the offset reached, the next step, whether it records. */
  getTimeline(): Promise<TimelineView> {
    return this.call('GET', '/timeline');
  }

  /** Replaces the timeline; it starts at the current emulated time. Refused whole (a 400 naming the step and field) when a step is wrong. */
  setTimeline(timeline: TimelineInput): Promise<TimelineView> {
    return this.call('PUT', '/timeline', { body: timeline });
  }

  /** The world as playing the timeline from its start to `to` makes it ("+4m", or ms), forwards or backwards. */
  seekTimeline(to: string | number): Promise<TimelineView> {
    return this.call('POST', '/timeline/seek', { body: { to } });
  }

  /** Records (true) what is done from now on as steps, or stops (false). */
  recordTimeline(on: boolean): Promise<TimelineView> {
    return this.call('POST', '/timeline/record', { body: { on } });
  }

  /** The timeline as a fixture file ({"timeline":{"steps":[...]}}), to save into a fixture folder. */
  exportTimeline(): Promise<{ timeline: TimelineInput }> {
    return this.call('GET', '/timeline/fixture');
  }

  // ---- users -------------------------------------------------------------------------

  /** Whom a client can sign in as in this world: its users (with passwords) and its seed's tokens that never expire. */
  users(): Promise<SignInList> {
    return this.call('GET', '/users');
  }

  // ---- lifecycle scenarios ------------------------------------------------------------

  lifecycles(): Promise<Lifecycles> {
    return this.call('GET', '/lifecycles');
  }

  lifecycle(kind: ResourceKind, id: number): Promise<ResourceLifecycle> {
    return this.call('GET', `/lifecycles/${kind}/${id}`);
  }

  /** Chooses how the next start of a grid, environment or RSDB ends (e.g. ALLOCATE_FAILED). */
  setNextStart(kind: Exclude<ResourceKind, 'cloudServer'>, id: number, outcome: string): Promise<NextStart> {
    return this.call('PUT', `/lifecycles/${kind}/${id}/next-start`, { body: { outcome } });
  }

  /** Forgets a chosen next-start outcome. */
  clearNextStart(kind: Exclude<ResourceKind, 'cloudServer'>, id: number): Promise<void> {
    return this.call('DELETE', `/lifecycles/${kind}/${id}/next-start`);
  }

  /** A RUNNING test environment becomes EXTERNALLY_TERMINATED now. */
  externallyTerminate(environmentId: number): Promise<ResourceLifecycle> {
    return this.call('POST', `/lifecycles/environment/${environmentId}/externally-terminate`);
  }

  /** A cloud server becomes FAILED now. */
  failCloudServer(id: number): Promise<ResourceLifecycle> {
    return this.call('POST', `/lifecycles/cloudServer/${id}/fail`);
  }

  // ---- alerts -------------------------------------------------------------------------

  alerts(): Promise<Alert[]> {
    return this.call('GET', '/alerts');
  }

  /** One alert, with the history of what each fire and clear carried, and its latest 100 deliveries. */
  alert(uid: string): Promise<AlertWithDeliveries> {
    return this.call('GET', `/alerts/${encodeURIComponent(uid)}`);
  }

  setAlertEnabled(uid: string, enabled: boolean): Promise<Alert> {
    const body: AlertPatch = { enabled };
    return this.call('PATCH', `/alerts/${encodeURIComponent(uid)}`, { body });
  }

  /** One page of the outbox, newest first, with the GET filters (alert, channel, status, limit, before); `next` is the `before` of the next page. */
  deliveries(query: DeliveryQuery = {}): Promise<DeliveryList> {
    return this.call('GET', '/deliveries', { query });
  }

  // ---- compositions -------------------------------------------------------------------

  /** The compositions of the seed: full path, length, virtual users and load servers. */
  compositions(): Promise<Static<typeof CompositionListSchema>> {
    return this.call('GET', '/compositions');
  }

  /** Every composition instance not unloaded (and the last unloaded ones), with its result's live counts. */
  compositionInstances(): Promise<Static<typeof InstanceOverviewSchema>> {
    return this.call('GET', '/compositions/instances');
  }

  /** How the next play of a composition ends (fails, stops early, shows more errors); outcome null: as its fixture says. */
  setNextPlay(next: Static<typeof NextPlayBodySchema>): Promise<Static<typeof NextPlayBodySchema>> {
    return this.call('PUT', '/compositions/next-play', { body: next });
  }

  // ---- faults -------------------------------------------------------------------------

  addFault(rule: FaultRuleInput): Promise<FaultRule> {
    return this.call('POST', '/faults', { body: rule });
  }

  faults(): Promise<FaultRule[]> {
    return this.call('GET', '/faults');
  }

  fault(id: string): Promise<FaultRule> {
    return this.call('GET', `/faults/${encodeURIComponent(id)}`);
  }

  deleteFault(id: string): Promise<void> {
    return this.call('DELETE', `/faults/${encodeURIComponent(id)}`);
  }

  clearFaults(): Promise<void> {
    return this.call('DELETE', '/faults');
  }

  // ---- incidents (the Query API's data) -------------------------------------------------

  /** Bends a domain's real-user numbers between two times: slower pages, more errors, more traffic. */
  addIncident(incident: IncidentCreateBody): Promise<Incident> {
    return this.call('POST', '/incidents', { body: incident });
  }

  incidents(): Promise<Incident[]> {
    return this.call('GET', '/incidents');
  }

  deleteIncident(id: number): Promise<void> {
    return this.call('DELETE', `/incidents/${id}`);
  }

  /** The apps of the Query API: each domain with its app key. */
  apps(): Promise<Array<{ domainId: number; name: string; apiKey: string }>> {
    return this.call('GET', '/apps');
  }

  // ---- journal ------------------------------------------------------------------------

  /** One page of recent requests, newest first, with the GET filters (method, pathPrefix, status, limit, before); `next` is the `before` of the next page. */
  journal(query: JournalQuery = {}): Promise<JournalList> {
    return this.call('GET', '/journal', { query });
  }

  clearJournal(): Promise<void> {
    return this.call('DELETE', '/journal');
  }

  /**
   * How many requests held in the journal match, e.g. `{ method: 'POST', path: '/concerto/mpulse/*', bodyJson: { title: 'x' } }`
   * (following the cursor of a count that stops at its work bound).
   */
  async countRequests(matcher: JournalMatcher = {}): Promise<number> {
    // A count stops at its work bound with a cursor; the counts of the calls add up.
    let total = 0;
    let before = matcher.before;
    for (;;) {
      const { count, next } = await this.call<JournalCount>('POST', '/journal/count', { body: { ...matcher, ...(before !== undefined ? { before } : {}) } });
      total += count;
      if (next === undefined) return total;
      before = next;
    }
  }

  /** The requests held that match, newest first, with their headers and bodies (at most `limit`). */
  async findRequests(matcher: JournalFindBody = {}): Promise<JournalRecord[]> {
    const found: JournalRecord[] = [];
    let before = matcher.before;
    for (;;) {
      const limit = matcher.limit === undefined ? undefined : matcher.limit - found.length;
      const body = { ...matcher, ...(limit !== undefined ? { limit } : {}), ...(before !== undefined ? { before } : {}) };
      const { entries, next } = await this.call<JournalFound>('POST', '/journal/find', { body });
      found.push(...entries);
      if (next === undefined || (matcher.limit !== undefined && found.length >= matcher.limit)) return found;
      before = next;
    }
  }

  // ---- sandboxes (managed through the emulator's default sandbox) -----------------------

  sandboxes(): Promise<SandboxList> {
    return this.call('GET', '/sandboxes', { root: true });
  }

  /** Creates the sandbox `name` (seeded like the emulator) and returns a client bound to it. */
  async createSandbox(name: string): Promise<EmulatorClient> {
    await this.call('PUT', `/sandboxes/${encodeURIComponent(name)}`, { root: true });
    return this.sandbox(name);
  }

  getSandbox(name: string): Promise<SandboxInfo> {
    return this.call('GET', `/sandboxes/${encodeURIComponent(name)}`, { root: true });
  }

  deleteSandbox(name: string): Promise<void> {
    return this.call('DELETE', `/sandboxes/${encodeURIComponent(name)}`, { root: true });
  }

  // ---- events --------------------------------------------------------------------------

  /**
   * The world's changes as they happen (GET /_emulator/events), parsed: lifecycle transitions
   * at their emulated time, annotations, alerts, resets, the clock... Ends when `signal` aborts
   * or the emulator ends the stream; a `stream.reset` event says that events were missed.
   *
   *   for await (const e of emu.events({ kind: 'grid', types: 'transition', signal })) console.log(e.state);
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<EmulatorEvent, void, undefined> {
    const query: Query = { kind: listParam(options.kind), id: listParam(options.id), types: listParam(options.types), lastEventId: options.lastEventId };
    const { signal } = options;
    const res = await this.call<Response | undefined>('GET', '/events', { query, stream: { signal } });
    // Aborted before the stream opened: nothing to yield.
    if (res) yield* this.frames(res, signal);
  }

  /** The events of an open stream, parsed, until it ends or `signal` aborts. */
  private async *frames(res: Response, signal: AbortSignal | undefined): AsyncGenerator<EmulatorEvent, void, undefined> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          if (signal?.aborted) return;
          throw new EmulatorError(0, `GET /events: the stream broke (${err instanceof Error ? err.message : String(err)})`, undefined, { cause: err });
        }
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          // One `data` line per event; `id` and `event` repeat what it holds; comments (heartbeats) start with ':'.
          for (const line of frame.split('\n')) if (line.startsWith('data: ')) yield JSON.parse(line.slice(6)) as EmulatorEvent;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  /**
   * Resolves once a resource is in `state`: at once when it already is, else when the event
   * stream says it got there (no polling: one read of its state, one stream). Rejects with an
   * EmulatorError (status 0) after `timeoutMs` of real time.
   *
   *   await emu.waitFor({ kind: 'grid', id: 101, state: 'CHECKED' }, { timeoutMs: 5000 });
   */
  async waitFor(target: WaitTarget, options: WaitOptions = {}): Promise<Reached> {
    const wanted = new Set<string>(typeof target.state === 'string' ? [target.state] : target.state);
    const id = String(target.id);
    const timeoutMs = options.timeoutMs ?? 30_000;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), timeoutMs);
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const describe = `${target.kind} ${id} to be ${[...wanted].join(' or ')}`;
    try {
      // The stream opens first, so that a transition between the read and the stream is not lost.
      const res = await this.call<Response | undefined>('GET', '/events', { query: { kind: target.kind, id }, stream: { signal: stop.signal } });
      if (res) {
        const now = await this.currentState(target.kind, id);
        if (wanted.has(now.state)) {
          await res.body?.cancel().catch(() => undefined);
          return now;
        }
      }
      const stream = res ? this.frames(res, stop.signal) : undefined;
      for (let next = await stream?.next(); next && !next.done; next = await stream!.next()) {
        const event = next.value;
        if (event.type === 'transition' && event.state !== undefined && wanted.has(event.state)) return { state: event.state, at: event.at, view: event.view };
        const alertState = target.kind === 'alert' ? ALERT_STATES[event.type] : undefined;
        if (alertState !== undefined && wanted.has(alertState)) return { state: alertState, at: event.at, view: event.view };
        // The world was replaced, or events were missed: the state is read again.
        if (event.type === 'world.reset' || event.type === 'world.imported' || event.type === 'world.reloaded' || event.type === 'stream.reset') {
          const read = await this.currentState(target.kind, id);
          if (wanted.has(read.state)) return read;
        }
      }
      if (stop.signal.aborted && !options.signal?.aborted) throw new EmulatorError(0, `waited ${timeoutMs} ms for ${describe}`);
      throw new EmulatorError(0, options.signal?.aborted ? `stopped waiting for ${describe}` : `the event stream ended while waiting for ${describe}`);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  /** A resource's state now, from the control API (one read). */
  private async currentState(kind: WaitTarget['kind'], id: string): Promise<Reached> {
    if (kind === 'alert') {
      const alert = await this.alert(id);
      return { state: alert.state, at: alert.state === 'firing' ? alert.lastTriggered : alert.lastCleared, view: alert };
    }
    if (kind === 'instance') {
      const found = (await this.compositionInstances()).find((i) => i.instanceID === id);
      if (!found) throw new EmulatorError(404, `no composition instance '${id}'`);
      return { state: found.state, view: found };
    }
    const position = await this.call<ResourceLifecycle>('GET', `/lifecycles/${LIFECYCLE_ROUTE[kind]}/${encodeURIComponent(id)}`);
    return { state: position.state, at: position.since };
  }

  // ---- the one way out ----------------------------------------------------------------

  private urlOf(path: string, query: Query | undefined, root = false): string {
    let url = `${root ? this.rootUrl : this.url}${PATHS.control}${path}`;
    if (query) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
      const text = params.toString();
      if (text) url += `?${text}`;
    }
    return url;
  }

  private async call<T>(method: string, path: string, { body, query, root, stream }: CallOptions = {}): Promise<T> {
    const url = this.urlOf(path, query, root);
    const headers: Record<string, string> = { accept: stream ? 'text/event-stream' : 'application/json', ...this.options.headers };
    if (this.options.adminToken !== undefined) headers.authorization = `Bearer ${this.options.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      const signal = stream?.signal;
      res = await this.fetcher(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), ...(signal ? { signal } : {}) });
    } catch (err) {
      if (stream?.signal?.aborted) return undefined as T;
      throw new EmulatorError(0, `${method} ${url}: no answer (${err instanceof Error ? err.message : String(err)})`, undefined, { cause: err });
    }
    if (stream && res.ok && res.body) return res as T;
    const text = await res.text();
    if (!res.ok) {
      let error: ErrorBody | undefined;
      try {
        const parsed = JSON.parse(text) as Partial<ErrorBody>;
        if (typeof parsed?.message === 'string') error = parsed as ErrorBody;
      } catch {
        // Not the emulator's JSON error (a proxy's page, say): the text itself is the message.
      }
      const message = error?.message ?? (text.slice(0, 500) || res.statusText);
      throw new EmulatorError(res.status, `${method} ${path}: ${res.status} ${message}`, error);
    }
    if (res.status === 204 || text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new EmulatorError(res.status, `${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`, undefined, { cause: err });
    }
  }
}
