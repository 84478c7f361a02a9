import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { badRequest, notFound } from '../http/errors.js';
import { FixtureError } from '../core/fixtures.js';
import { RateCounters } from '../core/rate-counters.js';
import type { Annotation, AnnotationCreate, AnnotationSections, AnnotationSeed, AnnotationUpdate, DomainSeed } from './schemas.js';

/**
 * An annotation as stored: absolute times, domains by id. A record is never changed once
 * stored (an update stores a changed copy), so that a snapshot can hold records themselves.
 */
interface AnnotationRecord {
  id: number;
  title: string;
  text: string;
  start: number;
  end?: number;
  domainIds: number[];
  lastModified: number;
  source: string;
  type: string;
  user: string;
}

export interface AnnotationFilter {
  /** Keeps annotations whose start >= from. */
  from?: number;
  /** Keeps annotations whose start <= to. */
  to?: number;
  /** Keeps annotations on any of these domains, plus tenant-wide ones (no domains). */
  domainIds?: readonly number[];
}

/** The order of every list: ascending start, then ascending id. */
function compare(a: { start: number; id: number }, b: { start: number; id: number }): number {
  return a.start - b.start || a.id - b.id;
}

function distinct(domainIds: number[] | undefined): number[] | undefined {
  return domainIds === undefined ? undefined : [...new Set(domainIds)];
}

/** The first id handed out: ids of the real service have seven digits or more. */
export const FIRST_ANNOTATION_ID = 1_000_000;

/**
 * Fixture problems the schema cannot express: which form of a time is given, and a range
 * that ends before it starts. `now` resolves the relative times.
 */
export function annotationSeedProblems(annotations: readonly AnnotationSeed[], now: number): string[] {
  const problems: string[] = [];
  annotations.forEach((a, i) => {
    const at = `$.annotations[${i}] (id ${a.id})`;
    if ((a.start === undefined) === (a.startAgoMs === undefined)) problems.push(`${at}: give exactly one of start and startAgoMs`);
    if (a.end !== undefined && a.endAgoMs !== undefined) problems.push(`${at}: give at most one of end and endAgoMs`);
    const start = a.start ?? (a.startAgoMs !== undefined ? now - a.startAgoMs : undefined);
    const end = a.end ?? (a.endAgoMs !== undefined ? now - a.endAgoMs : undefined);
    if (start !== undefined && end !== undefined && end < start) problems.push(`${at}: end (${end}) is before start (${start})`);
  });
  return problems;
}

/**
 * Domains (a fixed catalogue) and annotations. Annotations are kept sorted by start, so a
 * date-range query is two binary searches and a slice, however many annotations there are.
 */
export class AnnotationStore {
  private readonly byId = new Map<number, AnnotationRecord>();
  /** Every annotation, sorted by `compare`. */
  private readonly byStart: AnnotationRecord[];
  private readonly domainNames = new Map<number, string>();
  /**
   * Ids only grow, so an id deleted in this session is never handed out again; they start at
   * FIRST_ANNOTATION_ID, or after the largest id of the seed when that is larger.
   */
  private nextId: number;
  /** Requests per token in the current rate-limit window; a reset starts them afresh. */
  readonly rateLimits = new RateCounters();

  constructor(
    private readonly state: AnnotationSections,
    private readonly clock: Clock,
  ) {
    const now = clock.now();
    const problems = annotationSeedProblems(state.annotations, now);
    // statusCode: a state imported over HTTP with such a problem is the caller's mistake (400).
    if (problems.length) throw new FixtureError(problems.join('\n'));
    for (const domain of state.domains) this.domainNames.set(domain.id, domain.name);
    for (const seed of state.annotations) {
      const start = seed.start ?? now - (seed.startAgoMs as number);
      const end = seed.end ?? (seed.endAgoMs !== undefined ? now - seed.endAgoMs : undefined);
      this.byId.set(seed.id, {
        id: seed.id,
        title: seed.title,
        text: seed.text,
        start,
        ...(end !== undefined ? { end } : {}),
        domainIds: [...new Set(seed.domainIds)],
        lastModified: seed.lastModified ?? now,
        source: seed.source,
        type: seed.type,
        user: seed.user,
      });
    }
    this.byStart = [...this.byId.values()].sort(compare);
    let max = FIRST_ANNOTATION_ID - 1;
    for (const id of this.byId.keys()) max = Math.max(max, id);
    this.nextId = max + 1;
  }

  domains(): ReadonlyArray<DomainSeed> {
    return this.state.domains;
  }

  /** The annotation with this id; 404 if there is none. */
  get(id: number): Annotation {
    return this.view(this.record(id));
  }

  /** Annotations matching `filter`, ascending start then id. */
  list(filter: AnnotationFilter = {}): Annotation[] {
    if (filter.domainIds) this.checkDomains(filter.domainIds);
    const lo = filter.from === undefined ? 0 : this.lowerBound(filter.from, -Infinity);
    const hi = filter.to === undefined ? this.byStart.length : this.lowerBound(filter.to, Infinity);
    let found = this.byStart.slice(lo, Math.max(lo, hi));
    if (filter.domainIds) {
      const wanted = new Set(filter.domainIds);
      found = found.filter((a) => a.domainIds.length === 0 || a.domainIds.some((d) => wanted.has(d)));
    }
    return found.map((a) => this.view(a));
  }

  /** Adds an annotation made through the interface by `user`; answers its id. */
  create(body: AnnotationCreate, user: string): number {
    const domainIds = distinct(body.domainIds) ?? [];
    this.checkDomains(domainIds);
    checkRange(body.start, body.end);
    const record: AnnotationRecord = {
      id: this.nextId++,
      title: body.title,
      text: body.text,
      start: body.start,
      ...(body.end !== undefined ? { end: body.end } : {}),
      domainIds,
      lastModified: this.clock.now(),
      source: 'REST API',
      type: 'USER_ENTERED',
      user,
    };
    this.byId.set(record.id, record);
    this.insert(record);
    return record.id;
  }

  /**
   * Changes the fields given; the others keep their values. `end: null` removes the range.
   * The range is checked after merging, so moving `start` past the stored `end` is refused.
   */
  update(id: number, patch: AnnotationUpdate): Annotation {
    const old = this.record(id);
    const domainIds = distinct(patch.domainIds);
    if (domainIds) this.checkDomains(domainIds);
    const start = patch.start ?? old.start;
    const end = patch.end === null ? undefined : (patch.end ?? old.end);
    checkRange(start, end);

    // A changed copy replaces the record (a snapshot being written may hold the old one); its
    // keys keep the order of the record's, as an export writes them.
    const record = { ...old };
    record.start = start;
    if (end === undefined) delete record.end;
    else record.end = end;
    if (patch.title !== undefined) record.title = patch.title;
    if (patch.text !== undefined) record.text = patch.text;
    if (domainIds) record.domainIds = domainIds;
    record.lastModified = this.clock.now();
    this.byId.set(id, record);
    if (start !== old.start) {
      this.remove(old);
      this.insert(record);
    } else {
      this.byStart[this.lowerBound(start, id)] = record;
    }
    return this.view(record);
  }

  /** Deletes the annotation; 404 if there is none. */
  delete(id: number): void {
    const record = this.record(id);
    this.remove(record);
    this.byId.delete(id);
  }

  /** Domains and annotations in the fixture format, with absolute times, by id. */
  export(): AnnotationSections {
    const annotations = [...this.byId.values()]
      .sort((a, b) => a.id - b.id)
      .map((a): AnnotationSeed => ({ ...a, domainIds: [...a.domainIds] }));
    return { domains: this.state.domains.map((d) => ({ ...d })), annotations };
  }

  /**
   * Domains and annotations for an export in slices (core/snapshot.ts): neither is ever
   * changed once stored, so the snapshot holds them as they are, to be sorted by id later.
   */
  snapshot(): Record<'domains' | 'annotations', SectionSnapshot> {
    return { domains: { items: [...this.state.domains] }, annotations: { items: [...this.byId.values()], sortById: true } };
  }

  /** How many domains and annotations there are, without exporting them. */
  counts(): Record<'domains' | 'annotations', number> {
    return { domains: this.state.domains.length, annotations: this.byId.size };
  }

  private record(id: number): AnnotationRecord {
    const record = this.byId.get(id);
    if (!record) throw notFound(`annotation ${id} does not exist`);
    return record;
  }

  private view(a: AnnotationRecord): Annotation {
    return {
      id: a.id,
      title: a.title,
      text: a.text,
      start: a.start,
      ...(a.end !== undefined ? { end: a.end } : {}),
      domains: a.domainIds.map((id) => ({ id, name: this.domainNames.get(id) ?? String(id) })),
      lastModified: a.lastModified,
      source: a.source,
      type: a.type,
      user: a.user,
    };
  }

  private checkDomains(domainIds: readonly number[]): void {
    const unknown = domainIds.filter((d) => !this.domainNames.has(d));
    if (unknown.length) {
      throw badRequest(
        `unknown domain id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; ` +
          'GET /concerto/services/rest/RepositoryService/v1/Objects/domain lists the known domains',
      );
    }
  }

  /** Index of the first annotation not ordered before (start, id). */
  private lowerBound(start: number, id: number): number {
    let lo = 0;
    let hi = this.byStart.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.byStart[mid], { start, id }) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insert(record: AnnotationRecord): void {
    this.byStart.splice(this.lowerBound(record.start, record.id), 0, record);
  }

  private remove(record: AnnotationRecord): void {
    const at = this.lowerBound(record.start, record.id);
    if (this.byStart[at] === record) this.byStart.splice(at, 1);
  }
}

function checkRange(start: number, end: number | undefined): void {
  if (end !== undefined && end < start) throw badRequest(`end (${end}) is before start (${start})`);
}
