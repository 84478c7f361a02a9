import type { JournalMatcher, JournalQuery, JournalRecord } from './journal-schemas.js';
import { DomainError } from '../core/errors.js';
import { compileGlob, type PathMatcher } from '../core/path-patterns.js';

/** Request headers as Node hands them over. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

/** Headers whose values are secrets: a journal is read on screens and pasted into bug reports. */
const SECRET_HEADERS = new Set(['x-auth-token', 'authorization', 'proxy-authorization', 'cookie']);

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

/** A body longer than the limit: its first part, and how long it was (-1: too deep to serialize). */
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

/** The first `limit` bytes of a string, cut on a character boundary. */
function cutText(text: string, limit: number): CutBody {
  const { read } = encoder.encodeInto(text, new Uint8Array(limit));
  return new CutBody(text.slice(0, read), Buffer.byteLength(text));
}

/** A parsed body as JSON text within the limit; a body nested deeper than the stack allows is not shown. */
function serialized(body: unknown, limit: number): string | CutBody {
  let text: string;
  try {
    text = JSON.stringify(body) ?? '';
  } catch {
    return new CutBody('', -1);
  }
  return Buffer.byteLength(text) <= limit ? text : cutText(text, limit);
}

/**
 * What the journal keeps of a request body, decided cheaply when it is recorded: a string or
 * buffer within the limit, or a parsed JSON body whose Content-Length says it is within the
 * limit, is kept as it is (the parsed value is not copied: the routes copy what they store
 * and never change a request's body); only a longer one is turned into text and cut now.
 */
function keptBody(body: unknown, contentLength: string | undefined, limit: number): unknown {
  if (body === undefined || body === null || limit === 0) return undefined;
  if (typeof body === 'string') {
    // At most three bytes per UTF-16 unit: most bodies are let through without counting.
    if (body.length * 3 <= limit || Buffer.byteLength(body) <= limit) return body;
    return cutText(body, limit);
  }
  if (Buffer.isBuffer(body)) {
    if (body.length <= limit) return body;
    return new CutBody(body.subarray(0, limit).toString('utf8'), body.length);
  }
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  return declared <= limit ? body : serialized(body, limit);
}

function masked(value: string): string {
  // The scheme of an Authorization value says what kind of credential was sent; the rest goes.
  const space = value.indexOf(' ');
  const scheme = space > 0 && space < 16 ? value.slice(0, space + 1) : '';
  return `${scheme}***`;
}

function shownHeaders(headers: RequestHeaders | null): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!headers) return out;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (SECRET_HEADERS.has(name)) out[name] = Array.isArray(value) ? value.map(masked) : masked(value);
    else out[name] = value;
  }
  return out;
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
 * The last `size` requests, in a ring allocated once: memory stays bounded however long the
 * emulator runs. The ring is a set of columns (numbers in typed arrays), and a record object
 * is built only when the journal is read: a record object per request would outlive a few
 * young-generation collections before the ring overwrote it, and copying and promoting those
 * cost every request more than writing them. For the same reason headers and bodies are kept
 * as the request holds them, and turned into what an entry shows only when it is read.
 */
export class Journal {
  private readonly ids: Float64Array;
  private readonly times: Float64Array;
  private readonly durations: Float64Array;
  private readonly statuses: Uint16Array;
  /** Bytes of each response body; -1 when it was streamed. */
  private readonly responseSizes: Float64Array;
  private readonly methods: string[];
  /** The request target as sent: path and query, split when read. */
  private readonly urls: string[];
  private readonly faulted: Array<string[] | null>;
  private readonly headers: Array<RequestHeaders | null>;
  /** See keptBody. */
  private readonly bodies: unknown[];
  private next = 0;
  private recorded = 0;
  private lastId = 0;

  constructor(
    readonly size: number,
    /** How many bytes of a request body are kept (JOURNAL_BODY_LIMIT_BYTES). */
    readonly bodyLimit = 64 * 1024,
    /** The sandbox whose journal this is, named on every entry; none for the default world. */
    readonly sandbox?: string,
  ) {
    this.ids = new Float64Array(size);
    this.times = new Float64Array(size);
    this.durations = new Float64Array(size);
    this.statuses = new Uint16Array(size);
    this.responseSizes = new Float64Array(size);
    this.methods = new Array<string>(size).fill('');
    this.urls = new Array<string>(size).fill('');
    this.faulted = new Array<string[] | null>(size).fill(null);
    this.headers = new Array<RequestHeaders | null>(size).fill(null);
    this.bodies = new Array<unknown>(size).fill(undefined);
  }

  /**
   * Records one request (status 0: the connection was dropped). `body` is the parsed body;
   * `responseSize` -1 when the response is a stream. Returns the entry's slot, for
   * setResponseSize; -1 when the journal keeps nothing.
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
  ): number {
    if (this.size === 0) return -1;
    const i = this.next;
    this.ids[i] = ++this.lastId;
    this.times[i] = time;
    this.methods[i] = method;
    this.urls[i] = url;
    this.statuses[i] = status;
    this.durations[i] = durationMs;
    this.faulted[i] = faulted;
    this.headers[i] = headers;
    this.bodies[i] = keptBody(body, headers?.['content-length'] as string | undefined, this.bodyLimit);
    this.responseSizes[i] = responseSize;
    this.next = i + 1 === this.size ? 0 : i + 1;
    this.recorded++;
    return i;
  }

  /** Sets the response size of the entry in `slot` (from record), once it is known. */
  setResponseSize(slot: number, bytes: number): void {
    if (slot >= 0) this.responseSizes[slot] = bytes;
  }

  /** Requests recorded since the last clear, including those pushed out of the ring. */
  get total(): number {
    return this.recorded;
  }

  /** Newest first, filtered. */
  list(filter: JournalQuery = {}): JournalRecord[] {
    const method = filter.method?.toUpperCase();
    const status = statusMatcher(filter.status);
    const out: JournalRecord[] = [];
    const held = this.held();
    for (let n = 1; n <= held; n++) {
      const i = this.slot(n);
      if (method !== undefined && this.methods[i] !== method) continue;
      if (filter.pathPrefix !== undefined && !this.pathOf(i).startsWith(filter.pathPrefix)) continue;
      if (status && !status(this.statuses[i])) continue;
      out.push(this.entry(i));
      if (filter.limit !== undefined && out.length >= filter.limit) break;
    }
    return out;
  }

  /** Entries that match, newest first (at most `limit`). Throws JournalMatchError. */
  find(matcher: JournalMatcher, limit = Infinity): JournalRecord[] {
    const out: JournalRecord[] = [];
    this.scan(compileMatcher(matcher), (i) => {
      out.push(this.entry(i));
      return out.length < limit;
    });
    return out;
  }

  /** How many entries held match. Throws JournalMatchError. */
  count(matcher: JournalMatcher): number {
    let count = 0;
    this.scan(compileMatcher(matcher), () => {
      count++;
      return true;
    });
    return count;
  }

  clear(): void {
    this.methods.fill('');
    this.urls.fill('');
    this.faulted.fill(null);
    this.headers.fill(null);
    this.bodies.fill(undefined);
    this.next = 0;
    this.recorded = 0;
  }

  private held(): number {
    return Math.min(this.recorded, this.size);
  }

  /** The ring slot of the n-th newest entry (n from 1). */
  private slot(n: number): number {
    return (this.next - n + this.size) % this.size;
  }

  private pathOf(i: number): string {
    const url = this.urls[i];
    const q = url.indexOf('?');
    return q < 0 ? url : url.slice(0, q);
  }

  /** Calls `found` with each matching slot, newest first, until it returns false. */
  private scan(m: Compiled, found: (i: number) => boolean): void {
    let globWork = 0;
    const held = this.held();
    for (let n = 1; n <= held; n++) {
      const i = this.slot(n);
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
      if (m.query && !this.queryMatches(i, m.query)) continue;
      if (m.header && !this.headersMatch(i, m.header)) continue;
      if (m.bodyContains !== undefined && !(this.bodyText(i)?.includes(m.bodyContains) ?? false)) continue;
      if (m.hasBodyJson && !this.bodyJsonMatches(i, m.bodyJson)) continue;
      if (!found(i)) return;
    }
  }

  private queryMatches(i: number, wanted: Array<[string, string]>): boolean {
    const url = this.urls[i];
    const q = url.indexOf('?');
    if (q < 0) return false;
    const params = new URLSearchParams(url.slice(q + 1));
    return wanted.every(([name, value]) => params.getAll(name).includes(value));
  }

  private headersMatch(i: number, wanted: Array<[string, string]>): boolean {
    const headers = this.headers[i];
    if (!headers) return false;
    return wanted.every(([name, value]) => {
      const sent = headers[name];
      return Array.isArray(sent) ? sent.includes(value) : sent === value;
    });
  }

  private bodyJsonMatches(i: number, expected: unknown): boolean {
    const body = this.bodies[i];
    if (body === undefined || body instanceof CutBody) return false;
    let actual: unknown = body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      try {
        actual = JSON.parse(body.toString());
      } catch {
        return false;
      }
    }
    return partialMatch(expected, actual);
  }

  /**
   * The body as the entry shows it, without any cut marker. A parsed body is serialized on
   * its first read and kept so: a dashboard reads the same entries every second.
   */
  private bodyText(i: number): string | undefined {
    const body = this.bodies[i];
    if (body === undefined || typeof body === 'string') return body;
    if (body instanceof CutBody) return body.text;
    if (Buffer.isBuffer(body)) return body.toString('utf8');
    const text = serialized(body, this.bodyLimit);
    this.bodies[i] = text;
    return typeof text === 'string' ? text : text.text;
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
      headers: shownHeaders(this.headers[i]),
      status: this.statuses[i],
      durationMs: this.durations[i],
    };
    if (q >= 0 && q < url.length - 1) entry.query = url.slice(q + 1);
    const text = this.bodyText(i);
    const body = this.bodies[i];
    if (body instanceof CutBody) {
      entry.body = `${body.text}${body.marker}`;
      entry.bodyCut = true;
    } else if (text !== undefined) {
      entry.body = text;
    }
    if (this.responseSizes[i] >= 0) entry.responseSize = this.responseSizes[i];
    const faulted = this.faulted[i];
    if (faulted) entry.faulted = faulted;
    return entry;
  }
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
