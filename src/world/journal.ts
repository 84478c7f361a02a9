import type { JournalQuery, JournalRecord } from '../control/schemas.js';

/**
 * The last `size` requests, in a ring allocated once: memory stays bounded however long the
 * emulator runs. The ring is a set of columns (numbers in typed arrays), and a record object
 * is built only when the journal is read: a record object per request would outlive a few
 * young-generation collections before the ring overwrote it, and copying and promoting those
 * cost every request more than writing them.
 */
export class Journal {
  private readonly ids: Float64Array;
  private readonly times: Float64Array;
  private readonly durations: Float64Array;
  private readonly statuses: Uint16Array;
  private readonly methods: string[];
  /** The request target as sent: path and query, split when read. */
  private readonly urls: string[];
  private readonly faulted: Array<string[] | null>;
  private next = 0;
  private recorded = 0;
  private lastId = 0;

  constructor(readonly size: number) {
    this.ids = new Float64Array(size);
    this.times = new Float64Array(size);
    this.durations = new Float64Array(size);
    this.statuses = new Uint16Array(size);
    this.methods = new Array<string>(size).fill('');
    this.urls = new Array<string>(size).fill('');
    this.faulted = new Array<string[] | null>(size).fill(null);
  }

  /** Records one request (status 0: the connection was dropped). */
  record(time: number, method: string, url: string, status: number, durationMs: number, faulted: string[] | null): void {
    if (this.size === 0) return;
    const i = this.next;
    this.ids[i] = ++this.lastId;
    this.times[i] = time;
    this.methods[i] = method;
    this.urls[i] = url;
    this.statuses[i] = status;
    this.durations[i] = durationMs;
    this.faulted[i] = faulted;
    this.next = i + 1 === this.size ? 0 : i + 1;
    this.recorded++;
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
    const held = Math.min(this.recorded, this.size);
    for (let n = 1; n <= held; n++) {
      const i = (this.next - n + this.size) % this.size;
      if (method !== undefined && this.methods[i] !== method) continue;
      const url = this.urls[i];
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      if (filter.pathPrefix !== undefined && !path.startsWith(filter.pathPrefix)) continue;
      if (status && !status(this.statuses[i])) continue;
      const entry: JournalRecord = {
        id: this.ids[i],
        time: this.times[i],
        method: this.methods[i],
        path,
        status: this.statuses[i],
        durationMs: this.durations[i],
      };
      if (q >= 0 && q < url.length - 1) entry.query = url.slice(q + 1);
      const faulted = this.faulted[i];
      if (faulted) entry.faulted = faulted;
      out.push(entry);
      if (filter.limit !== undefined && out.length >= filter.limit) break;
    }
    return out;
  }

  clear(): void {
    this.methods.fill('');
    this.urls.fill('');
    this.faulted.fill(null);
    this.next = 0;
    this.recorded = 0;
  }
}

/** "503" matches 503; "5xx" matches 500-599. */
function statusMatcher(spec: string | undefined): ((status: number) => boolean) | undefined {
  if (spec === undefined) return undefined;
  if (spec.endsWith('xx')) {
    const hundreds = Number(spec[0]);
    return (status) => Math.floor(status / 100) === hundreds;
  }
  const exact = Number(spec);
  return (status) => status === exact;
}
