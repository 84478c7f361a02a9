import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { full, invalid, missing } from '../core/errors.js';
import { FixtureError } from '../core/fixtures.js';
import { RateCounters } from '../core/rate-counters.js';
import { storageLedgerOf, type StorageAccount, type StorageSettings } from '../core/storage.js';
import { ENTRIES_PER_YIELD, runAtOnce, runInSlices, sortSliced, type SlicedWork } from '../core/slices.js';
import type { Annotation, AnnotationCreate, AnnotationSections, AnnotationSeed, AnnotationUpdate, DomainSeed } from './schemas.js';

/**
 * Characters of annotation views' JSON text the process keeps for the lists (listText), all
 * worlds together: 8 Mi, a list of about 25,000 annotations of ordinary size. Past it every
 * text kept is let go at once, and texts are kept anew.
 */
export const VIEW_TEXT_CHARS = 8 * 1024 * 1024;

/**
 * The kept texts, by record, each with the store it was written for: records may be shared by
 * stores built from one state (the default world and its sandboxes), whose views differ (their
 * load time), so a text serves only its own store; another store writes its own in its place.
 * One map for every store, so that the bound holds for the process, not for each sandbox.
 */
let viewTexts = new WeakMap<object, { store: number; text: string }>();
let viewTextChars = 0;
/** Numbers the stores for viewTexts (a number, so that a kept text keeps no store alive). */
let storeCount = 0;

/**
 * An annotation as stored: absolute times, domains by id. A seed annotation with absolute
 * times is stored as it is, shared by every store built from that seed (each reset, each
 * sandbox), so a record is never changed: an update replaces it.
 */
interface AnnotationRecord {
  readonly id: number;
  readonly title: string;
  readonly text: string;
  readonly start: number;
  readonly end?: number;
  readonly domainIds: readonly number[];
  /** Absent on a seed annotation that gives none: then it is the moment the store was loaded. */
  readonly lastModified?: number;
  readonly source: string;
  readonly type: string;
  readonly user: string;
  /** Its start (end) came relative to the load (startAgoMs, endAgoMs): an export writes it relative again. */
  readonly startRelative?: true;
  readonly endRelative?: true;
}

/**
 * What an annotation is charged besides its texts: the record and its entries in the indexes,
 * and its lines in the state file (pretty-printed, indented as deep as a sandbox's are).
 */
export const ANNOTATION_BYTES = 384;

/** The bytes an annotation is charged (ANNOTATIONS_WORLD_MAX_BYTES, ANNOTATIONS_MAX_BYTES): its texts' UTF-8, 8 a domain id, ANNOTATION_BYTES. */
export function annotationBytes(a: { title: string; text: string; user: string; domainIds: readonly number[] }): number {
  return ANNOTATION_BYTES + Buffer.byteLength(a.title) + Buffer.byteLength(a.text) + Buffer.byteLength(a.user) + 8 * a.domainIds.length;
}

/** The settings the annotation store reads: how many, and how many bytes of, annotations requests may add. */
export type AnnotationLimits = Partial<StorageSettings> & { annotationsWorldMax?: number };

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

/** A new array of the ids without repeats, in first-seen order. */
function distinct(domainIds: number[] | undefined): number[] | undefined {
  if (domainIds === undefined) return undefined;
  // Most annotations have one domain or none: no set needed for those.
  return domainIds.length < 2 ? domainIds.slice() : [...new Set(domainIds)];
}

/** Whether no domain id appears twice (a seed's lists are short, so no Set is built). */
function isDistinct(domainIds: readonly number[]): boolean {
  for (let i = 1; i < domainIds.length; i++) if (domainIds.lastIndexOf(domainIds[i], i - 1) >= 0) return false;
  return true;
}

/** The first id handed out: ids of the real service have seven digits or more. */
export const FIRST_ANNOTATION_ID = 1_000_000;

/**
 * The problems of the annotation at `i` of a seed, each reported through `report`. `now`
 * resolves the relative times; without it, only what holds at any load time is checked.
 */
export function annotationProblems(a: AnnotationSeed, i: number, now: number | undefined, report: (text: () => string) => void): void {
  // Runs once per seed annotation: the text (and the closure that makes it) only for a problem.
  const badStart = (a.start === undefined) === (a.startAgoMs === undefined);
  const badEnd = a.end !== undefined && a.endAgoMs !== undefined;
  if (badStart) report(() => `${entryAt(a, i)}: give exactly one of start and startAgoMs (it has ${a.start === undefined ? 'neither' : 'both'})`);
  if (badEnd) report(() => `${entryAt(a, i)}: give at most one of end and endAgoMs (it has both)`);
  // Which start or end is meant is unknown: their order cannot be judged.
  if (badStart || badEnd) return;
  // Both relative, or both absolute: the order holds at any load time.
  const relative = a.startAgoMs !== undefined || a.endAgoMs !== undefined;
  const base = now ?? (a.startAgoMs !== undefined && a.endAgoMs !== undefined && a.start === undefined && a.end === undefined ? 0 : undefined);
  if (relative && base === undefined) return;
  const start = a.start ?? (a.startAgoMs !== undefined ? (base as number) - a.startAgoMs : undefined);
  const end = a.end ?? (a.endAgoMs !== undefined ? (base as number) - a.endAgoMs : undefined);
  if (start !== undefined && end !== undefined && end < start) {
    report(() =>
      relative && now === undefined
        ? `${entryAt(a, i)}: endAgoMs (${a.endAgoMs}) is longer ago than startAgoMs (${a.startAgoMs})`
        : `${entryAt(a, i)}: end (${end}) is before start (${start})`,
    );
  }
}

/** How a problem names the annotation at `i` of a seed. */
const entryAt = (a: AnnotationSeed, i: number) => `$.annotations[${i}] (id ${a.id})`;

/**
 * The interface's check of a state's annotations (annotationProblems of each, in order). When
 * none has a problem at a given `now`, what the pass saw is kept for the state's annotations,
 * so that a store built from them (at start, from the seed just loaded) does not check them again.
 */
export function checkSeed(annotations: readonly AnnotationSeed[], now: number | undefined, report: (text: () => string) => void): void {
  const clean = verified.get(annotations);
  if (clean !== undefined) {
    // Found to have nothing to report by checkReferences, just before (and only that once).
    verified.delete(annotations);
    if (now !== undefined && !seedChecks.has(annotations)) seedChecks.set(annotations, { maxId: clean, relative: false });
    return;
  }
  let problems = 0;
  const counted = (text: () => string) => {
    problems++;
    report(text);
  };
  let maxId = FIRST_ANNOTATION_ID - 1;
  let relative = false;
  for (let i = 0; i < annotations.length; i++) {
    const seed = annotations[i];
    annotationProblems(seed, i, now, counted);
    if (seed.id > maxId) maxId = seed.id;
    if (seed.start === undefined || seed.startAgoMs !== undefined || seed.endAgoMs !== undefined) relative = true;
  }
  // Without a `now`, a problem of a relative time may be left unseen: nothing is kept then.
  // Relative times are checked again by each store, at its own load time (see the constructor).
  if (problems === 0 && now !== undefined && !seedChecks.has(annotations)) seedChecks.set(annotations, { maxId, relative });
}

/**
 * Annotations that checkReferences found, in its one pass, to name only domains that exist
 * and to have none of the problems checkSeed looks for, at any load time (their times are all
 * absolute): the largest id, for the checkSeed that comes next.
 */
const verified = new WeakMap<readonly AnnotationSeed[], number>();

/**
 * The interface's reference check: every domain an annotation names exists (`hasDomain`),
 * each one that does not reported in order. The same pass looks for what checkSeed would
 * find: when there is nothing (the usual seed, whose times are absolute), checkSeed, called
 * next by the loader, has no pass of its own to make. When there is something to report, or
 * a relative time (its problems depend on the load time), each check makes its own pass.
 */
export function checkReferences(annotations: readonly AnnotationSeed[], hasDomain: (id: number) => boolean, report: (text: () => string) => void): void {
  let clean = true;
  const spoilt = () => {
    clean = false;
  };
  let maxId = FIRST_ANNOTATION_ID - 1;
  for (let i = 0; clean && i < annotations.length; i++) {
    const a = annotations[i];
    if (a.start === undefined || a.startAgoMs !== undefined || a.endAgoMs !== undefined) clean = false;
    const { domainIds } = a;
    for (let j = 0; clean && j < domainIds.length; j++) if (!hasDomain(domainIds[j])) clean = false;
    // Times all absolute: what it finds is the same at any load time.
    if (clean) annotationProblems(a, i, undefined, spoilt);
    if (a.id > maxId) maxId = a.id;
  }
  if (clean) {
    verified.set(annotations, maxId);
    return;
  }
  verified.delete(annotations);
  for (let i = 0; i < annotations.length; i++) {
    const { domainIds } = annotations[i];
    for (let j = 0; j < domainIds.length; j++) {
      const d = domainIds[j];
      if (!hasDomain(d)) report(() => `$.annotations[${i}].domainIds[${j}]: no domain ${d}`);
    }
  }
}

/** The problems of the annotation at `i` of a seed (see annotationProblems), added to `into`. */
function seedProblems(a: AnnotationSeed, i: number, now: number, into: string[]): void {
  annotationProblems(a, i, now, (text) => into.push(text()));
}

/**
 * What every store built from one seed shares, worked out once per seed: a reset or a new
 * sandbox then builds its store without copying or re-sorting a single annotation.
 */
interface SeedIndex {
  /** The annotations with absolute times, as records (mostly the seed's own objects), sorted by `compare`. */
  fixed: readonly AnnotationRecord[];
  /** The same records by id. */
  fixedById: ReadonlyMap<number, AnnotationRecord>;
  /** The annotations with a time relative to the load (startAgoMs, endAgoMs), resolved at each load. */
  relative: ReadonlyArray<{ seed: AnnotationSeed; index: number }>;
  /** The largest id of the seed (FIRST_ANNOTATION_ID - 1 when smaller). */
  maxId: number;
}
const seedIndexes = new WeakMap<readonly AnnotationSeed[], SeedIndex>();

/** The index of a seed, built on its first load; a seed with problems throws them (and is not kept). */
function seedIndexOf(annotations: readonly AnnotationSeed[], now: number): SeedIndex {
  return seedIndexes.get(annotations) ?? keep(annotations, runAtOnce(seedIndexWork(annotations, now)));
}

/**
 * Builds the index of a state's annotations ahead of its store, in slices that each hold the
 * event loop a few milliseconds (core/slices.ts): a store then built from the state finds it
 * done. Throws as building the store would, for a state with problems.
 */
export async function prepareSeedIndex(annotations: readonly AnnotationSeed[], now: number): Promise<void> {
  if (!seedIndexes.has(annotations)) keep(annotations, await runInSlices(seedIndexWork(annotations, now)));
}

function keep(annotations: readonly AnnotationSeed[], index: SeedIndex): SeedIndex {
  seedIndexes.set(annotations, index);
  return index;
}

/** What one pass over a seed's annotations tells: enough to build a store whose index waits for its first use. */
interface SeedCheck {
  /** The largest id of the seed (FIRST_ANNOTATION_ID - 1 when smaller). */
  maxId: number;
  /** Whether some annotation gives a time relative to the load. */
  relative: boolean;
}
const seedChecks = new WeakMap<readonly AnnotationSeed[], SeedCheck>();

/** Checks a seed's annotations (once per seed); a seed with problems throws them (and is not kept). */
function seedCheckOf(annotations: readonly AnnotationSeed[], now: number): SeedCheck {
  return seedChecks.get(annotations) ?? runAtOnce(seedCheckWork(annotations, now));
}

function* seedCheckWork(annotations: readonly AnnotationSeed[], now: number): SlicedWork<SeedCheck> {
  const problems: string[] = [];
  let maxId = FIRST_ANNOTATION_ID - 1;
  let relative = false;
  for (let i = 0; i < annotations.length; i++) {
    const seed = annotations[i];
    seedProblems(seed, i, now, problems);
    if (seed.id > maxId) maxId = seed.id;
    if (seed.start === undefined || seed.startAgoMs !== undefined || seed.endAgoMs !== undefined) relative = true;
    if (i % ENTRIES_PER_YIELD === 0) yield;
  }
  // A state imported over HTTP with such a problem is the caller's mistake (400).
  if (problems.length) throw new FixtureError(problems.join('\n'));
  const check = { maxId, relative };
  seedChecks.set(annotations, check);
  return check;
}

/** The work of building a seed's index, yielding every few thousand annotations. */
function* seedIndexWork(annotations: readonly AnnotationSeed[], now: number): SlicedWork<SeedIndex> {
  if (!seedChecks.has(annotations)) yield* seedCheckWork(annotations, now);
  let fixed: AnnotationRecord[] = [];
  const relative: Array<{ seed: AnnotationSeed; index: number }> = [];
  let maxId = FIRST_ANNOTATION_ID - 1;
  for (let index = 0; index < annotations.length; index++) {
    const seed = annotations[index];
    if (seed.id > maxId) maxId = seed.id;
    if (seed.start === undefined || seed.startAgoMs !== undefined || seed.endAgoMs !== undefined) relative.push({ seed, index });
    // The seed's object itself is the record: it has the record's fields, less a lastModified left out.
    else if (isDistinct(seed.domainIds)) fixed.push(seed as AnnotationRecord);
    else fixed.push({ ...(seed as AnnotationRecord), domainIds: [...new Set(seed.domainIds)] });
    if (index % ENTRIES_PER_YIELD === 0) yield;
  }
  fixed = yield* sortSliced(fixed, compare);
  const fixedById = new Map<number, AnnotationRecord>();
  for (let i = 0; i < fixed.length; i++) {
    fixedById.set(fixed[i].id, fixed[i]);
    if (i % ENTRIES_PER_YIELD === 0) yield;
  }
  return { fixed, fixedById, relative, maxId };
}

/**
 * Domains (a fixed catalogue) and annotations. Annotations are kept sorted by start, so a
 * date-range query is two binary searches and a slice, however many annotations there are.
 */
export class AnnotationStore {
  /**
   * The annotations of the seed (and of an imported state) by id, and every annotation sorted
   * by `compare`. While `shared`, both are the seed index's own, shared with every store built
   * from the seed: a store copies them on its first change (`writable`), so a reset or a
   * sandbox that is only read allocates nothing for them.
   */
  private ids?: Map<number, AnnotationRecord>;
  private sorted?: AnnotationRecord[];
  private shared: boolean;
  /**
   * A seed of absolute times whose index (sorting, the id map) no store has needed yet: the
   * store takes it from the seed on its first use, so a start or a reset that nobody reads
   * builds none. Undefined once taken.
   */
  private pending?: readonly AnnotationSeed[];
  /**
   * The annotations made by create(), at index `id - createdFrom`: create hands out ids one
   * after another, so an array holds them. Added to the map, each cost a create about a
   * microsecond once it held 100,000 (a growing table is rehashed and copied, and its entries
   * are scattered over the heap). A deleted one leaves a hole, and holes at the end go.
   */
  private readonly created: Array<AnnotationRecord | undefined> = [];
  private createdFrom = 0;
  private createdCount = 0;
  private readonly domainNames = new Map<number, string>();
  /** When the store was built: the lastModified of seed annotations that give none. */
  private readonly loadedAt: number;
  /**
   * Ids only grow, so an id deleted in this session is never handed out again; they start at
   * FIRST_ANNOTATION_ID, or after the largest id of the seed when that is larger.
   */
  private nextId: number;
  /** Requests per user in the current rate-limit window; a reset starts them afresh. */
  readonly rateLimits = new RateCounters();
  /**
   * This store's number in viewTexts. A record is never changed, only replaced (an update makes
   * a new one), and what else a view shows (the domains' names, the load time) is fixed for the
   * store's life: a text kept for a record and this store is its view's for good.
   */
  private readonly textsOf = ++storeCount;
  /** What creates and updates added since the store was built, charged to its world and the process. */
  private readonly storage: StorageAccount;
  /** ANNOTATIONS_WORLD_MAX: annotations created here and still held, at most. */
  private readonly maxCreated: number;

  /** `state` is only read: its annotations may be shared with other stores built from it. */
  constructor(
    private readonly state: AnnotationSections,
    private readonly clock: Clock,
    limits?: AnnotationLimits,
  ) {
    this.storage = storageLedgerOf(limits).open(clock, 'annotations');
    this.maxCreated = limits?.annotationsWorldMax ?? Number.POSITIVE_INFINITY;
    const now = (this.loadedAt = clock.now());
    for (const domain of state.domains) this.domainNames.set(domain.id, domain.name);
    const check = seedCheckOf(state.annotations, now);
    this.nextId = check.maxId + 1;
    this.shared = true;
    if (!check.relative && !seedIndexes.has(state.annotations)) {
      this.pending = state.annotations;
      return;
    }
    const index = seedIndexOf(state.annotations, now);
    // Relative times move with the load time, so their problems (a range ending before it starts) can too.
    const problems: string[] = [];
    for (const { seed, index: i } of index.relative) seedProblems(seed, i, now, problems);
    if (problems.length) throw new FixtureError(problems.join('\n'));
    if (index.relative.length === 0) {
      // Only ever read while shared: every change goes through writable() first.
      this.byStart = index.fixed as AnnotationRecord[];
      this.byId = index.fixedById as Map<number, AnnotationRecord>;
      this.shared = true;
    } else {
      const resolved = index.relative.map(({ seed }): AnnotationRecord => {
        const end = seed.end ?? (seed.endAgoMs !== undefined ? now - seed.endAgoMs : undefined);
        return {
          id: seed.id,
          title: seed.title,
          text: seed.text,
          start: seed.start ?? now - (seed.startAgoMs as number),
          ...(end !== undefined ? { end } : {}),
          domainIds: [...new Set(seed.domainIds)],
          lastModified: seed.lastModified ?? now,
          source: seed.source,
          type: seed.type,
          user: seed.user,
          ...(seed.startAgoMs !== undefined ? { startRelative: true as const } : {}),
          ...(seed.endAgoMs !== undefined ? { endRelative: true as const } : {}),
        };
      });
      // Two sorted runs, which the sort merges.
      this.byStart = [...index.fixed, ...resolved.sort(compare)].sort(compare);
      this.byId = new Map(this.byStart.map((r) => [r.id, r]));
      this.shared = false;
    }
  }

  /** Whether the store has its index of the seed yet (for tests). */
  get indexed(): boolean {
    return this.pending === undefined;
  }

  /** Every annotation but those made by create(), sorted by `compare`. */
  private get byStart(): AnnotationRecord[] {
    if (this.pending) this.takeIndex();
    return this.sorted!;
  }

  private set byStart(list: AnnotationRecord[]) {
    this.sorted = list;
  }

  /** The same, by id. */
  private get byId(): Map<number, AnnotationRecord> {
    if (this.pending) this.takeIndex();
    return this.ids!;
  }

  private set byId(map: Map<number, AnnotationRecord>) {
    this.ids = map;
  }

  /** The seed's index, built now if no store built it before (a seed of absolute times only). */
  private takeIndex(): void {
    const index = seedIndexOf(this.pending!, this.loadedAt);
    this.pending = undefined;
    // Only ever read while shared: every change goes through writable() first.
    this.sorted = index.fixed as AnnotationRecord[];
    this.ids = index.fixedById as Map<number, AnnotationRecord>;
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
    return this.matching(filter, (a) => this.view(a));
  }

  /**
   * list() as the JSON text the route answers (`[...]`, or `{"annotations":[...]}` when
   * `wrapped`): the same bytes as JSON.stringify of the list, from each annotation's text kept
   * once its view was first written. A dashboard or script polling a range asks for the same
   * annotations again and again; writing them out each time was most of a list's cost.
   */
  listText(filter: AnnotationFilter = {}, wrapped = false): string {
    const list = `[${this.matching(filter, (a) => this.viewText(a)).join(',')}]`;
    return wrapped ? `{"annotations":${list}}` : list;
  }

  /** What `shown` makes of each annotation matching `filter`, ascending start then id. */
  private matching<T>(filter: AnnotationFilter, shown: (a: AnnotationRecord) => T): T[] {
    if (filter.domainIds) this.checkDomains(filter.domainIds);
    const lo = filter.from === undefined ? 0 : this.lowerBound(filter.from, -Infinity);
    const hi = filter.to === undefined ? this.byStart.length : this.lowerBound(filter.to, Infinity);
    // One pass over the date range, no copies of it: a range of 1,000 for the 100 of one domain.
    const ids = filter.domainIds;
    // A few ids (the usual one) are looked through; more go in a Set, so a long list costs no more per annotation.
    const wanted = ids === undefined ? undefined : ids.length > 8 ? new Set(ids) : ids;
    const out: T[] = [];
    for (let i = lo; i < hi; i++) {
      const a = this.byStart[i];
      if (wanted === undefined || a.domainIds.length === 0 || onAny(a.domainIds, wanted)) out.push(shown(a));
    }
    return out;
  }

  private viewText(a: AnnotationRecord): string {
    const kept = viewTexts.get(a);
    if (kept !== undefined && kept.store === this.textsOf) return kept.text;
    const text = JSON.stringify(this.view(a));
    if (viewTextChars + text.length > VIEW_TEXT_CHARS) {
      viewTexts = new WeakMap();
      viewTextChars = 0;
    }
    viewTexts.set(a, { store: this.textsOf, text });
    viewTextChars += text.length;
    return text;
  }

  /** Adds an annotation made through the interface by `user`; answers its id. */
  create(body: AnnotationCreate, user: string): number {
    const domainIds = distinct(body.domainIds) ?? [];
    this.checkDomains(domainIds);
    checkRange(body.start, body.end);
    if (this.createdCount >= this.maxCreated) {
      throw full(`this world holds ${this.createdCount} annotations created through the interface and ANNOTATIONS_WORLD_MAX is ${this.maxCreated}: delete some, reset the world, or raise ANNOTATIONS_WORLD_MAX`);
    }
    const bytes = annotationBytes({ title: body.title, text: body.text, user, domainIds });
    this.storage.check(bytes);
    const id = this.nextId++;
    const lastModified = this.clock.now();
    // Two literals rather than a spread of the optional `end`: the keys keep the order an
    // export writes, and every record of a kind shares one shape.
    // Its times were given while the world ran (on stage): an export writes them relative to
    // its clock, so that they keep their age however the export is loaded, as the emulator's
    // own times (lastModified, an alert's history) do.
    const record: AnnotationRecord =
      body.end === undefined
        ? { id, title: body.title, text: body.text, start: body.start, domainIds, lastModified, source: 'REST API', type: 'USER_ENTERED', user, startRelative: true }
        : {
            id,
            title: body.title,
            text: body.text,
            start: body.start,
            end: body.end,
            domainIds,
            lastModified,
            source: 'REST API',
            type: 'USER_ENTERED',
            user,
            startRelative: true,
            endRelative: true,
          };
    if (this.created.length === 0) this.createdFrom = id;
    this.created.push(record);
    this.createdCount++;
    this.storage.add(bytes);
    this.writable();
    this.insert(record);
    return record.id;
  }

  /**
   * Changes the fields given; the others keep their values. `end: null` removes the range.
   * The range is checked after merging, so moving `start` past the stored `end` is refused.
   * The record is replaced, not changed: it may be the seed's own.
   */
  update(id: number, patch: AnnotationUpdate): Annotation {
    const record = this.record(id);
    const domainIds = distinct(patch.domainIds);
    if (domainIds) this.checkDomains(domainIds);
    const start = patch.start ?? record.start;
    const end = patch.end === null ? undefined : (patch.end ?? record.end);
    checkRange(start, end);

    const updated: AnnotationRecord = {
      id,
      title: patch.title ?? record.title,
      text: patch.text ?? record.text,
      start,
      ...(end !== undefined ? { end } : {}),
      domainIds: domainIds ?? record.domainIds,
      lastModified: this.clock.now(),
      source: record.source,
      type: record.type,
      user: record.user,
      // A time given in the update was given while the world ran, and keeps its age in an
      // export (see create); one kept stays as it came.
      ...(patch.start !== undefined || record.startRelative ? { startRelative: true as const } : {}),
      ...(end !== undefined && (patch.end !== undefined || record.endRelative) ? { endRelative: true as const } : {}),
    };
    const growth = annotationBytes(updated) - annotationBytes(record);
    this.storage.check(growth);
    this.storage.add(growth);
    this.writable();
    if (start !== record.start) {
      this.remove(record);
      this.insert(updated);
    } else this.byStart[this.lowerBound(start, id)] = updated;
    const at = id - this.createdFrom;
    if (at >= 0 && at < this.created.length) this.created[at] = updated;
    else this.byId.set(id, updated);
    return this.view(updated);
  }

  /** Deletes the annotation; 404 if there is none. */
  delete(id: number): void {
    const record = this.record(id);
    this.storage.add(-annotationBytes(record));
    this.writable();
    this.remove(record);
    const at = id - this.createdFrom;
    if (at >= 0 && at < this.created.length) {
      this.created[at] = undefined;
      this.createdCount--;
      while (this.created.length > 0 && this.created[this.created.length - 1] === undefined) this.created.pop();
    } else {
      this.byId.delete(id);
    }
  }

  /** Before the first change: the store's own copies of the seed index's collections. */
  private writable(): void {
    if (!this.shared) return;
    this.byStart = this.byStart.slice();
    this.byId = new Map(this.byId);
    this.shared = false;
  }

  /**
   * Domains and annotations in the fixture format, by id: a time that came relative
   * (startAgoMs, endAgoMs) relative to `at` (the export's clock), the others absolute.
   */
  export(at: number): AnnotationSections {
    const annotations = this.records()
      .sort((a, b) => a.id - b.id)
      .map((a) => this.exported(a, at));
    return { domains: this.state.domains.map((d) => ({ ...d })), annotations };
  }

  /** An annotation in the fixture format: the keys in export order, lastModified always given. */
  private exported(a: AnnotationRecord, at: number): AnnotationSeed {
    if (a.startRelative || a.endRelative) return this.exportedRelative(a, at);
    return {
      id: a.id,
      title: a.title,
      text: a.text,
      start: a.start,
      ...(a.end !== undefined ? { end: a.end } : {}),
      domainIds: [...a.domainIds],
      lastModified: a.lastModified ?? this.loadedAt,
      source: a.source,
      type: a.type,
      user: a.user,
    };
  }

  /**
   * An annotation whose times came relative, or were given while the world ran, with them
   * relative to `at` again: a time after `at` (a range that ends later) negative. Apart from
   * exported(): the common case keeps its one literal.
   */
  private exportedRelative(a: AnnotationRecord, at: number): AnnotationSeed {
    const startAgo = a.startRelative;
    const endAgo = a.endRelative && a.end !== undefined;
    return {
      id: a.id,
      title: a.title,
      text: a.text,
      ...(startAgo ? { startAgoMs: at - a.start } : { start: a.start }),
      ...(a.end === undefined ? {} : endAgo ? { endAgoMs: at - a.end } : { end: a.end }),
      domainIds: [...a.domainIds],
      lastModified: a.lastModified ?? this.loadedAt,
      source: a.source,
      type: a.type,
      user: a.user,
    };
  }

  /**
   * Domains and annotations for an export in slices (core/snapshot.ts): neither is ever
   * changed once stored, so the snapshot holds them as they are, to be sorted by id and put
   * in the fixture format (`exported`) as they are written.
   */
  snapshot(at: number): Record<'domains' | 'annotations', SectionSnapshot> {
    return {
      domains: { items: [...this.state.domains] },
      annotations: { items: this.records(), sortById: true, exported: (a) => this.exported(a as AnnotationRecord, at) },
    };
  }

  /** How many domains and annotations there are, without exporting them. */
  counts(): Record<'domains' | 'annotations', number> {
    return { domains: this.state.domains.length, annotations: (this.pending ? this.pending.length : this.byId.size) + this.createdCount };
  }

  private record(id: number): AnnotationRecord {
    const at = id - this.createdFrom;
    const record = at >= 0 && at < this.created.length ? this.created[at] : this.byId.get(id);
    if (!record) throw missing(`annotation ${id} does not exist`);
    return record;
  }

  /** Every annotation, in no particular order. */
  private records(): AnnotationRecord[] {
    const all = [...this.byId.values()];
    for (const record of this.created) if (record) all.push(record);
    return all;
  }

  /**
   * The answer's form of a record: the schema's keys in the order its serializer writes them
   * (the optional `end` last), `end` undefined when there is none (left out when serialised),
   * with no spread, so that every view shares one shape;
   * the list and read routes serialise it with JSON.stringify (http/view-serializer.ts).
   */
  private view(a: AnnotationRecord): Annotation {
    const domains: Annotation['domains'] = [];
    for (const id of a.domainIds) domains.push({ id, name: this.domainNames.get(id) ?? String(id) });
    return {
      id: a.id,
      title: a.title,
      text: a.text,
      start: a.start,
      domains,
      lastModified: a.lastModified ?? this.loadedAt,
      source: a.source,
      type: a.type,
      user: a.user,
      end: a.end,
    };
  }

  private checkDomains(domainIds: readonly number[]): void {
    let known = true;
    for (let i = 0; i < domainIds.length && known; i++) known = this.domainNames.has(domainIds[i]);
    if (known) return;
    const unknown = domainIds.filter((d) => !this.domainNames.has(d));
    if (unknown.length) {
      throw invalid(
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
      const a = this.byStart[mid];
      if (a.start < start || (a.start === start && a.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insert(record: AnnotationRecord): void {
    // A client annotating "now" adds after every annotation there is: one comparison and a
    // push. A binary search touches a record at every step, scattered over the heap, which
    // cost a create over a microsecond once there were 100,000.
    const last = this.byStart[this.byStart.length - 1];
    if (last === undefined || last.start < record.start || (last.start === record.start && last.id < record.id)) {
      this.byStart.push(record);
      return;
    }
    this.byStart.splice(this.lowerBound(record.start, record.id), 0, record);
  }

  private remove(record: AnnotationRecord): void {
    const at = this.lowerBound(record.start, record.id);
    if (this.byStart[at] === record) this.byStart.splice(at, 1);
  }
}

function checkRange(start: number, end: number | undefined): void {
  if (end !== undefined && end < start) throw invalid(`end (${end}) is before start (${start})`);
}

/** Whether `ids` shares a value with `wanted`. */
function onAny(ids: readonly number[], wanted: readonly number[] | ReadonlySet<number>): boolean {
  if (Array.isArray(wanted)) {
    for (let i = 0; i < ids.length; i++) if (wanted.includes(ids[i])) return true;
    return false;
  }
  const set = wanted as ReadonlySet<number>;
  for (let i = 0; i < ids.length; i++) if (set.has(ids[i])) return true;
  return false;
}
