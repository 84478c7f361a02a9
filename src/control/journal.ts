import type { JournalQuery, JournalRecord } from './schemas.js';

/**
 * The last `size` requests, in a ring buffer allocated once: memory stays bounded however
 * long the emulator runs, and recording never allocates more than the record itself.
 */
export class Journal {
  private readonly ring: Array<JournalRecord | undefined>;
  private next = 0;
  private recorded = 0;
  private lastId = 0;

  constructor(readonly size: number) {
    this.ring = new Array(size);
  }

  /**
   * Records one request; `url` is split here into its path and query. Runs after every
   * request, so it builds the record and nothing else.
   */
  record(time: number, method: string, url: string, status: number, durationMs: number, faulted: string[] | null): void {
    if (this.size === 0) return;
    const q = url.indexOf('?');
    const entry: JournalRecord = { id: ++this.lastId, time, method, path: q < 0 ? url : url.slice(0, q), status, durationMs };
    if (q >= 0 && q < url.length - 1) entry.query = url.slice(q + 1);
    if (faulted) entry.faulted = faulted;
    this.ring[this.next] = entry;
    this.next = this.next + 1 === this.size ? 0 : this.next + 1;
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
    for (let i = 1; i <= held; i++) {
      const entry = this.ring[(this.next - i + this.size) % this.size]!;
      if (method !== undefined && entry.method !== method) continue;
      if (filter.pathPrefix !== undefined && !entry.path.startsWith(filter.pathPrefix)) continue;
      if (status && !status(entry.status)) continue;
      out.push(entry);
      if (filter.limit !== undefined && out.length >= filter.limit) break;
    }
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
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
