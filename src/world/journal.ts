import type { JournalMatcher, JournalQuery, JournalRecord } from './journal-schemas.js';
import { DomainError } from '../core/errors.js';
import { compileGlob, type PathMatcher } from '../core/path-patterns.js';
import { queryMatches, type QueryWork } from './journal-query.js';
import { maskHeaders, maskSecrets } from '../core/secrets.js';

/** Request headers as Node hands them over. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

/**
 * The header and value the dashboard marks its own requests with: the journal keeps them, but
 * its listing and searches leave them out unless asked (`include=dashboard`).
 */
export const CLIENT_HEADER = 'x-emulator-client';
export const DASHBOARD_CLIENT = 'dashboard';

/** Whether a request came from the dashboard, from its mark. */
/** The X-Emulator-Client of a timeline's step (control/timeline-player.ts): its entries show `origin: "timeline"`. */
export const TIMELINE_CLIENT = 'timeline';

/** Whether a request is a timeline's step, from its mark. */
export function fromTimeline(headers: RequestHeaders | null): boolean {
  const value = headers?.[CLIENT_HEADER];
  return Array.isArray(value) ? value.includes(TIMELINE_CLIENT) : value === TIMELINE_CLIENT;
}

export function fromDashboard(headers: RequestHeaders | null): boolean {
  const value = headers?.[CLIENT_HEADER];
  return Array.isArray(value) ? value.includes(DASHBOARD_CLIENT) : value === DASHBOARD_CLIENT;
}

/**
 * Work a glob may cost one search, in steps of the glob walk (glob length times path length
 * per entry it is tried on). The walk is linear in the path for a given glob, but a search
 * tries it on every entry held, and both a path and JOURNAL_SIZE can be large.
 */
export const GLOB_WORK_BUDGET = 50_000_000;

/** Deepest `bodyJson` a matcher may give. */
export const MAX_BODY_JSON_DEPTH = 64;

/** Why a matcher cannot be used: an `invalid` DomainError, answered as a 400. */
export class JournalMatchError extends DomainError {
  constructor(message: string) {
    super('invalid', message);
    this.name = 'JournalMatchError';
  }
}

/** A body longer than the limit: its first part, and how many bytes it had in all. */
class CutBody {
  constructor(
    readonly text: string,
    readonly size: number,
  ) {}

  get marker(): string {
    return this.size < 0 ? '…[cut: nested too deep to show]' : `…[cut: ${this.size} bytes in all]`;
  }
}

const encoder = new TextEncoder();

/**
 * The first `limit` bytes of a string, cut on a character boundary, as a string of its own:
 * a slice of the whole would keep all of it alive.
 */
function cutText(text: string, limit: number): CutBody {
  const bytes = new Uint8Array(limit);
  const { written } = encoder.encodeInto(text, bytes);
  return new CutBody(Buffer.from(bytes.buffer, 0, written).toString('utf8'), Buffer.byteLength(text));
}

/**
 * What the journal keeps of a request body: its text as sent (never a parsed tree, which
 * takes many times the memory of its bytes), cut to the limit, secret fields masked.
 * `parsed` is only consulted for secret fields; a body for which no text was captured (a
 * parser that hands over a parsed value only) is serialized, once, here.
 */
function keptBody(raw: unknown, parsed: unknown, limit: number): string | CutBody | undefined {
  if (limit === 0) return undefined;
  let text: string;
  let size: number;
  if (typeof raw === 'string') {
    text = raw;
    size = -1;
  } else if (Buffer.isBuffer(raw)) {
    text = raw.subarray(0, limit).toString('utf8');
    size = raw.length;
  } else if (raw !== undefined && raw !== null) {
    try {
      text = JSON.stringify(raw) ?? '';
    } catch {
      return new CutBody('', -1);
    }
    size = -1;
  } else {
    return undefined;
  }
  if (text === '') return undefined;
  // At most three bytes per UTF-16 unit: most bodies are let through without counting.
  let kept: string | CutBody;
  if (size > limit) kept = cutText(text, limit);
  else if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) kept = text;
  else kept = cutText(text, limit);
  if (typeof kept === 'string') return maskSecrets(kept, parsed);
  const masked = maskSecrets(kept.text, parsed);
  return new CutBody(masked, size > 0 ? size : kept.size);
}

/** "503" or 503 matches 503; "5xx" matches 500-599. */
function statusMatcher(spec: string | number | undefined): ((status: number) => boolean) | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec === 'string' && spec.endsWith('xx')) {
    const hundreds = Number(spec[0]);
    return (status) => Math.floor(status / 100) === hundreds;
  }
  const exact = Number(spec);
  return (status) => status === exact;
}

function depthOf(value: unknown, depth = 1): number {
  if (depth > MAX_BODY_JSON_DEPTH || typeof value !== 'object' || value === null) return depth;
  let deepest = depth;
  for (const child of Object.values(value)) {
    deepest = Math.max(deepest, depthOf(child, depth + 1));
    if (deepest > MAX_BODY_JSON_DEPTH) break;
  }
  return deepest;
}

/**
 * `expected` within `actual`: every field of an expected object is in the actual object with
 * a matching value; arrays match element by element and have the same length; anything else
 * is equal. Depth is bounded by the matcher, checked when it is compiled.
 */
export function partialMatch(expected: unknown, actual: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return expected === actual;
  if (typeof actual !== 'object' || actual === null) return false;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return false;
    for (let i = 0; i < expected.length; i++) if (!partialMatch(expected[i], actual[i])) return false;
    return true;
  }
  if (Array.isArray(actual)) return false;
  const a = actual as Record<string, unknown>;
  for (const [key, value] of Object.entries(expected)) {
    if (!Object.hasOwn(a, key) || !partialMatch(value, a[key])) return false;
  }
  return true;
}

/** A matcher made ready once per search. */
interface Compiled {
  /** Leave out the dashboard's own requests (the default). */
  hideDashboard: boolean;
  method?: string;
  status?: (status: number) => boolean;
  glob?: string;
  /** The glob compiled once per search to a matcher linear in the path (the fault rules' own). */
  globMatcher?: PathMatcher;
  /** The glob's text before its first wildcard: most entries are turned away by it alone. */
  globPrefix: string;
  query?: Array<[string, string]>;
  header?: Array<[string, string]>;
  bodyContains?: string;
  hasBodyJson: boolean;
  bodyJson?: unknown;
}

export function compileMatcher(matcher: JournalMatcher): Compiled {
  if (matcher.bodyJson !== undefined && depthOf(matcher.bodyJson) > MAX_BODY_JSON_DEPTH) {
    throw new JournalMatchError(`body field 'bodyJson': nested deeper than ${MAX_BODY_JSON_DEPTH} levels`);
  }
  const glob = matcher.path;
  const wildcard = glob === undefined ? -1 : glob.search(/[*?]/);
  return {
    hideDashboard: matcher.include !== DASHBOARD_CLIENT,
    method: matcher.method?.toUpperCase(),
    status: statusMatcher(matcher.status),
    glob,
    globPrefix: glob === undefined ? '' : wildcard < 0 ? glob : glob.slice(0, wildcard),
    query: matcher.query && Object.entries(matcher.query),
    header: matcher.header && Object.entries(matcher.header).map(([name, value]) => [name.toLowerCase(), value]),
    bodyContains: matcher.bodyContains,
    hasBodyJson: matcher.bodyJson !== undefined,
    bodyJson: matcher.bodyJson,
  };
}

/**
 * Bytes the journals of one process may hold together (JOURNAL_MAX_BYTES): one object shared
 * by the journal of every world, so that many sandboxes cannot multiply the bound.
 */
export class JournalBudget {
  used = 0;
  constructor(readonly max: number) {}
}

const budgets = new WeakMap<object, JournalBudget>();

/**
 * The byte budget shared by every world built from one configuration: the default world and
 * its sandboxes (forked from it) share their configuration, and so one budget per process.
 */
export function journalBudgetOf(config: { journalMaxBytes: number }): JournalBudget {
  let budget = budgets.get(config);
  if (!budget) budgets.set(config, (budget = new JournalBudget(config.journalMaxBytes)));
  return budget;
}

/** What a Journal may keep, from the settings. */
export interface JournalLimits {
  /** Bytes of each request body kept (JOURNAL_BODY_LIMIT_BYTES). */
  bodyLimit?: number;
  /** Bytes of each request's headers kept (JOURNAL_HEADER_LIMIT_BYTES). */
  headerLimit?: number;
  /** Bytes this journal may hold (JOURNAL_WORLD_MAX_BYTES). */
  maxBytes?: number;
  /** Bytes the journals of the process may hold together (JOURNAL_MAX_BYTES). */
  budget?: JournalBudget;
}

/** What an entry costs beyond the text it keeps: its columns and the objects that hold them. */
export const ENTRY_OVERHEAD_BYTES = 256;

/** Why an entry shows no body although the request had one. */
export type BodyDropped = 'unmatched' | 'budget';

/** Headers within the limit: the request's own object, or the first ones that fit. */
function keptHeaders(headers: RequestHeaders | null, limit: number, raw?: readonly string[]): { headers: RequestHeaders | null; bytes: number; cut: boolean } {
  if (!headers) return { headers: null, bytes: 0, cut: false };
  let bytes = 0;
  if (raw !== undefined) {
    // The headers as they arrived (name, value, name, value…), with 4 bytes more each, count
    // at least the bytes of the object Node made of them (a repeated header is joined into one
    // value there, or dropped; a repeated Set-Cookie is kept as an array, 4 bytes more a value):
    // when they fit, the object fits whole, and its keys need not be walked.
    for (let i = 0; i + 1 < raw.length; i += 2) bytes += raw[i].length + 4 + raw[i + 1].length;
    if (bytes + 2 * raw.length <= limit) return { headers, bytes, cut: false };
    bytes = 0;
  }
  let cut = false;
  let kept: RequestHeaders | null = null;
  const names = Object.keys(headers);
  for (let n = 0; n < names.length; n++) {
    const name = names[n];
    const value = headers[name];
    if (value === undefined) continue;
    const size = name.length + 4 + (Array.isArray(value) ? value.reduce((sum, v) => sum + v.length + 4, 0) : value.length);
    if (bytes + size > limit) {
      // From here on, only the headers that fit are kept, in a copy.
      if (!kept) {
        kept = {};
        for (let k = 0; k < n; k++) kept[names[k]] = headers[names[k]];
      }
      cut = true;
      continue;
    }
    bytes += size;
    if (kept) kept[name] = value;
  }
  return { headers: kept ?? headers, bytes, cut };
}

/** A page of a listing or search, and where the next one starts when there may be more. */
export interface Page<T> {
  items: T;
  /** Pass as `before` to go on with older entries; absent when every entry held was examined. */
  next?: number;
}

/**
 * Work one journal call may do, in bytes of text examined (a body parsed for `bodyJson`
 * counts several times its length, JSON.parse being slower than a text search). A call that
 * reaches it answers what it has with a cursor to go on from: no call holds the event loop
 * for long, however many and however large the entries held.
 */
export const CALL_WORK_BUDGET = 8 * 1024 * 1024;

/** Work counted per byte of a body parsed for `bodyJson`. */
export const PARSE_WORK_PER_BYTE = 8;

/** Bytes of entries one page of the listing holds at most (at least one entry). */
export const PAGE_BYTES = 512 * 1024;

/** Entries one page holds when the caller gives no limit. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The last requests, in a ring allocated once, bounded in entries (`size`), in bytes for this
 * world (`maxBytes`) and in bytes for the whole process (the shared `budget`): the oldest
 * entries of this journal make room first; when the process budget is taken by other
 * journals, a new entry keeps neither body nor headers, and when even that does not fit it is
 * not kept (it still counts in `total`). The ring is a set of columns, and a record object is
 * built only when the journal is read. A body is kept as its text (never as a parsed tree),
 * cut to the body limit and with secret fields masked, when it is recorded.
 */
export class Journal {
  private readonly ids: Float64Array;
  private readonly times: Float64Array;
  private readonly durations: Float64Array;
  private readonly statuses: Uint16Array;
  /** Bytes of each response body; -1 when it was streamed. */
  private readonly responseSizes: Float64Array;
  /** Bytes each entry counts against the bounds. */
  private readonly costs: Float64Array;
  private readonly methods: string[];
  /** The request target as sent: path and query, split when read. */
  private readonly urls: string[];
  private readonly faulted: Array<string[] | null>;
  private readonly headers: Array<RequestHeaders | null>;
  private readonly headersCut: Uint8Array;
  /** 1 for a request the dashboard marked as its own, 2 for a timeline's step. */
  private readonly dashboard: Uint8Array;
  private readonly bodies: Array<string | CutBody | undefined>;
  private readonly bodiesDropped: Array<BodyDropped | undefined>;
  private next = 0;
  /** Entries held (the newest `count` slots before `next`). */
  private count_ = 0;
  private recorded = 0;
  private lastId = 0;
  /** Bytes held. */
  private bytes = 0;
  readonly bodyLimit: number;
  readonly headerLimit: number;
  readonly maxBytes: number;
  readonly budget: JournalBudget;

  constructor(
    readonly size: number,
    limits: JournalLimits = {},
    /** The sandbox whose journal this is, named on every entry; none for the default world. */
    readonly sandbox?: string,
  ) {
    this.bodyLimit = limits.bodyLimit ?? 64 * 1024;
    this.headerLimit = limits.headerLimit ?? 8 * 1024;
    this.budget = limits.budget ?? new JournalBudget(Infinity);
    this.maxBytes = limits.maxBytes ?? Infinity;
    this.ids = new Float64Array(size);
    this.times = new Float64Array(size);
    this.durations = new Float64Array(size);
    this.statuses = new Uint16Array(size);
    this.responseSizes = new Float64Array(size);
    this.costs = new Float64Array(size);
    this.headersCut = new Uint8Array(size);
    this.dashboard = new Uint8Array(size);
    this.methods = new Array<string>(size).fill('');
    this.urls = new Array<string>(size).fill('');
    this.faulted = new Array<string[] | null>(size).fill(null);
    this.headers = new Array<RequestHeaders | null>(size).fill(null);
    this.bodies = new Array<string | CutBody | undefined>(size).fill(undefined);
    this.bodiesDropped = new Array<BodyDropped | undefined>(size).fill(undefined);
  }

  /**
   * Records one request (status 0: the connection was dropped). `body` is the body's text as
   * sent when the parser kept it (else the parsed body), `parsed` the parsed body (consulted
   * for secret fields only); `dropBody` says why the body is not to be kept. `responseSize`
   * -1 when the response is a stream. Returns the entry's slot, for setResponseSize; -1 when
   * the journal keeps nothing.
   */
  record(
    time: number,
    method: string,
    url: string,
    status: number,
    durationMs: number,
    faulted: string[] | null,
    headers: RequestHeaders | null = null,
    body: unknown = undefined,
    responseSize = 0,
    parsed: unknown = undefined,
    dropBody?: BodyDropped,
    /** The headers as they arrived (Node's rawHeaders), when known: a cheaper count of their bytes. */
    rawHeaders?: readonly string[],
  ): number {
    this.recorded++;
    if (this.size === 0) return -1;
    const hadBody = body !== undefined && body !== null && body !== '';
    let kept = dropBody || !hadBody ? undefined : keptBody(body, parsed, this.bodyLimit);
    let dropped: BodyDropped | undefined = hadBody && dropBody ? dropBody : undefined;
    let shown = keptHeaders(headers, this.headerLimit, rawHeaders);
    const base = ENTRY_OVERHEAD_BYTES + url.length + method.length;
    let cost = base + shown.bytes + (kept === undefined ? 0 : typeof kept === 'string' ? kept.length : kept.text.length);
    if (!this.fits(cost)) {
      // What is left when the rest of the budget is other journals': the request line only.
      kept = undefined;
      dropped = hadBody ? 'budget' : undefined;
      shown = { headers: null, bytes: 0, cut: headers !== null };
      cost = base;
      if (!this.fits(cost)) return -1;
    }
    this.makeRoom(cost);
    if (this.count_ === this.size) this.evictOldest();
    const i = this.next;
    this.ids[i] = ++this.lastId;
    this.times[i] = time;
    this.methods[i] = method;
    this.urls[i] = url;
    this.statuses[i] = status;
    this.durations[i] = durationMs;
    this.faulted[i] = faulted;
    this.headers[i] = shown.headers;
    this.headersCut[i] = shown.cut ? 1 : 0;
    this.dashboard[i] = fromDashboard(headers) ? 1 : fromTimeline(headers) ? 2 : 0;
    this.bodies[i] = kept;
    this.bodiesDropped[i] = dropped;
    this.responseSizes[i] = responseSize;
    this.costs[i] = cost;
    this.bytes += cost;
    this.budget.used += cost;
    this.next = i + 1 === this.size ? 0 : i + 1;
    this.count_++;
    return i;
  }

  /** Whether an entry of `cost` bytes fits once this journal's own entries make room. */
  private fits(cost: number): boolean {
    return cost <= this.maxBytes && cost <= this.budget.max - (this.budget.used - this.bytes);
  }

  /** Evicts this journal's oldest entries until `cost` more bytes fit (see fits). */
  private makeRoom(cost: number): void {
    while (this.count_ > 0 && (this.bytes + cost > this.maxBytes || this.budget.used + cost > this.budget.max)) this.evictOldest();
  }

  private evictOldest(): void {
    const i = this.slot(this.count_);
    this.release(i);
    this.count_--;
  }

  private release(i: number): void {
    this.bytes -= this.costs[i];
    this.budget.used -= this.costs[i];
    this.costs[i] = 0;
    this.methods[i] = '';
    this.urls[i] = '';
    this.faulted[i] = null;
    this.headers[i] = null;
    this.bodies[i] = undefined;
    this.bodiesDropped[i] = undefined;
  }

  /** Sets the response size of the entry in `slot` (from record), once it is known. */
  setResponseSize(slot: number, bytes: number): void {
    if (slot >= 0) this.responseSizes[slot] = bytes;
  }

  /** Requests recorded since the last clear, including those pushed out of the ring. */
  get total(): number {
    return this.recorded;
  }

  /** Bytes the entries held count against the bounds. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Entries held. */
  get held(): number {
    return this.count_;
  }

  /**
   * Newest first, filtered: one page of at most `limit` (DEFAULT_PAGE_SIZE) entries and
   * PAGE_BYTES, older than the id `before` when given. The dashboard's own requests are left
   * out unless `include` is 'dashboard'.
   */
  list(filter: JournalQuery = {}): Page<JournalRecord[]> {
    const hideDashboard = filter.include !== DASHBOARD_CLIENT;
    const method = filter.method?.toUpperCase();
    const status = statusMatcher(filter.status);
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const out: JournalRecord[] = [];
    let bytes = 0;
    let work = 0;
    const held = this.count_;
    for (let n = this.first(filter.before); n <= held; n++) {
      const i = this.slot(n);
      if (out.length >= limit || bytes >= PAGE_BYTES || work >= CALL_WORK_BUDGET) return { items: out, next: this.ids[this.slot(n - 1)] };
      work += 64 + (filter.pathPrefix === undefined ? 0 : filter.pathPrefix.length);
      if (hideDashboard && this.dashboard[i] === 1) continue;
      if (method !== undefined && this.methods[i] !== method) continue;
      if (filter.pathPrefix !== undefined && !this.pathOf(i).startsWith(filter.pathPrefix)) continue;
      if (status && !status(this.statuses[i])) continue;
      out.push(this.entry(i));
      bytes += this.costs[i];
    }
    return { items: out };
  }

  /** Entries that match, newest first (at most `limit`), older than `before`. Throws JournalMatchError. */
  find(matcher: JournalMatcher, limit = Infinity, before?: number): Page<JournalRecord[]> {
    const out: JournalRecord[] = [];
    let bytes = 0;
    const next = this.scan(compileMatcher(matcher), before, (i) => {
      out.push(this.entry(i));
      bytes += this.costs[i];
      return out.length < limit && bytes < PAGE_BYTES;
    });
    return { items: out, next };
  }

  /** How many entries held (older than `before`) match, up to the work budget. Throws JournalMatchError. */
  count(matcher: JournalMatcher, before?: number): Page<number> {
    let count = 0;
    const next = this.scan(compileMatcher(matcher), before, () => {
      count++;
      return true;
    });
    return { items: count, next };
  }

  clear(): void {
    for (let n = 1; n <= this.count_; n++) this.release(this.slot(n));
    this.next = 0;
    this.count_ = 0;
    this.recorded = 0;
  }

  /** The ring slot of the n-th newest entry (n from 1). */
  private slot(n: number): number {
    return (this.next - n + this.size) % this.size;
  }

  /** The n (from 1) of the newest entry older than the id `before`. */
  private first(before: number | undefined): number {
    if (before === undefined) return 1;
    // Ids decrease from the newest: the place is found by halving.
    let lo = 1;
    let hi = this.count_ + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ids[this.slot(mid)] < before) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private pathOf(i: number): string {
    const url = this.urls[i];
    const q = url.indexOf('?');
    return q < 0 ? url : url.slice(0, q);
  }

  /**
   * Calls `found` with each matching slot, newest first, until it returns false or the work
   * budget is spent; returns the cursor to go on from when entries are left unexamined.
   */
  private scan(m: Compiled, before: number | undefined, found: (i: number) => boolean): number | undefined {
    let globWork = 0;
    let work = 0;
    const spent: QueryWork = { work: 0 };
    const held = this.count_;
    for (let n = this.first(before); n <= held; n++) {
      if (work >= CALL_WORK_BUDGET) return this.ids[this.slot(n - 1)];
      const i = this.slot(n);
      work += 64;
      if (m.hideDashboard && this.dashboard[i] === 1) continue;
      if (m.method !== undefined && this.methods[i] !== m.method) continue;
      if (m.status && !m.status(this.statuses[i])) continue;
      if (m.glob !== undefined) {
        const path = this.pathOf(i);
        if (!path.startsWith(m.globPrefix)) continue;
        globWork += (m.glob.length + 1) * (path.length + 1);
        if (globWork > GLOB_WORK_BUDGET) {
          throw new JournalMatchError(
            `body field 'path': matching this glob against the ${held} entries held would take too long; begin it with more of the path, or clear the journal`,
          );
        }
        m.globMatcher ??= globMatcherOf(m.glob);
        if (!m.globMatcher.test(path)) continue;
      }
      if (m.query) {
        const url = this.urls[i];
        const q = url.indexOf('?');
        work += q + 1;
        if (q < 0) continue;
        spent.work = 0;
        const matched = queryMatches(url.slice(q + 1), m.query, spent);
        work += spent.work;
        if (!matched) continue;
      }
      if (m.header && !this.headersMatch(i, m.header)) continue;
      if (m.bodyContains !== undefined) {
        const text = this.bodyText(i);
        work += text?.length ?? 0;
        if (!(text?.includes(m.bodyContains) ?? false)) continue;
      }
      if (m.hasBodyJson) {
        const body = this.bodies[i];
        if (typeof body !== 'string') continue;
        work += body.length * PARSE_WORK_PER_BYTE;
        if (!bodyJsonMatches(body, m.bodyJson)) continue;
      }
      if (!found(i)) return n < held ? this.ids[i] : undefined;
    }
    return undefined;
  }

  private headersMatch(i: number, wanted: Array<[string, string]>): boolean {
    const headers = this.headers[i];
    if (!headers) return false;
    return wanted.every(([name, value]) => {
      const sent = headers[name];
      return Array.isArray(sent) ? sent.includes(value) : sent === value;
    });
  }

  /** The body as the entry shows it, without any cut marker. */
  private bodyText(i: number): string | undefined {
    const body = this.bodies[i];
    return body instanceof CutBody ? body.text : body;
  }

  private entry(i: number): JournalRecord {
    const url = this.urls[i];
    const q = url.indexOf('?');
    const entry: JournalRecord = {
      ...(this.sandbox !== undefined ? { sandbox: this.sandbox } : {}),
      id: this.ids[i],
      time: this.times[i],
      method: this.methods[i],
      path: q < 0 ? url : url.slice(0, q),
      headers: maskHeaders(this.headers[i]),
      status: this.statuses[i],
      durationMs: this.durations[i],
    };
    if (q >= 0 && q < url.length - 1) entry.query = url.slice(q + 1);
    if (this.headersCut[i]) entry.headersCut = true;
    const body = this.bodies[i];
    if (body instanceof CutBody) {
      entry.body = `${body.text}${body.marker}`;
      entry.bodyCut = true;
    } else if (body !== undefined) {
      entry.body = body;
    }
    const dropped = this.bodiesDropped[i];
    if (dropped) entry.bodyDropped = dropped;
    if (this.responseSizes[i] >= 0) entry.responseSize = this.responseSizes[i];
    const faulted = this.faulted[i];
    if (faulted) entry.faulted = faulted;
    if (this.dashboard[i] === 2) entry.origin = 'timeline';
    return entry;
  }
}

/** A body's text matched partially against `expected`; text that is not JSON does not match. */
function bodyJsonMatches(text: string, expected: unknown): boolean {
  let actual: unknown;
  try {
    actual = JSON.parse(text);
  } catch {
    return false;
  }
  return partialMatch(expected, actual);
}

/** The fault rules' linear glob matcher; a glob it refuses is refused here in the journal's words. */
function globMatcherOf(glob: string): PathMatcher {
  try {
    return compileGlob(glob);
  } catch (err) {
    if (err instanceof DomainError) throw new JournalMatchError(err.message);
    throw err;
  }
}
