import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { conflicting, forbidden, invalid, missing } from '../core/errors.js';
import { didYouMean } from '../core/suggest.js';
import { FixtureError } from '../core/fixtures.js';
import { RateCounters } from '../core/rate-counters.js';
import { unit } from '../core/random.js';
import {
  BANDWIDTH_LABELS,
  BLOCK_SIZE,
  BUCKETS,
  BUCKET_EDGES,
  ERRORS,
  RumGenerator,
  SESSIONS_PER_BEACON,
  SPLIT_DIMENSIONS,
  customDimension,
  appErrorCounts,
  batches,
  bounceAt,
  countOf,
  incidentsOf,
  metricAt,
  modelOf,
  selectionKey,
  statsOf,
  type Dimension,
  type RumModel,
  type Selection,
  type Timer,
} from './model.js';
import { NO_DRILLDOWNS, parseQuery, type QueryRequest } from './params.js';
import type { Incident, IncidentCreateBody, IncidentSeed, QueryDomain, QueryPorts, QueryQuery, QuerySections, RumModelSeed } from './schemas.js';

const MINUTE = 60_000;
const DAY_MINUTES = 1440;

/**
 * The most bytes of computed blocks (complete hours and days, reused by later queries) the
 * process keeps, all worlds together, when QUERY_CACHE_MAX_BYTES does not say.
 */
export const QUERY_CACHE_BYTES = 16 * 1024 * 1024;
/** The most incidents a store holds. */
export const MAX_INCIDENTS = 1000;
/** The first incident id handed out by the control API (seed ids may be anything). */
const FIRST_INCIDENT_ID = 1;

/** The query types with a body of their own; the other documented ones answer "no data". */
export const QUERY_TYPES = [
  'summary',
  'histogram',
  'by-minute',
  'timers-metrics',
  'page-groups',
  'browsers',
  'geography',
  'ab-tests',
  'bandwidth',
  'metrics-by-dimension',
  'dimension-values',
  'sessions-per-page-load-time',
  'metric-per-page-load-time',
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];
/** The query types that answer rows of a breakdown: `limit` and `sortby` act on them, and are refused by the others. */
const ROW_TYPES = ['page-groups', 'browsers', 'ab-tests', 'geography', 'bandwidth', 'metrics-by-dimension', 'dimension-values', 'app-error-summary', 'dimension-over-time'] as const;

/** Refuses `limit` and `sortby` on a query type without rows: they would change nothing. */
function rowless(type: string, request: QueryRequest): void {
  if (request.limit !== undefined) throw invalid(`Invalid parameter: limit applies only to ${ROW_TYPES.join(', ')}, not to ${type}: ${request.limit}`);
  if (request.sortby !== undefined) throw invalid(`Invalid parameter: sortby applies only to ${ROW_TYPES.join(', ')}, not to ${type}: ${request.sortby}`);
}

/** Refuses `interval` on a query type without a series over time. */
function timeless(type: string, request: QueryRequest): void {
  if (request.interval !== undefined) throw invalid(`Invalid parameter: interval applies only to by-minute, timers-metrics, dimension-over-time, not to ${type}: ${request.interval}`);
}

/** Documented query types answered by the route for the other types (app-error-summary, dimension-over-time), both from the model. */
export const EMPTY_QUERY_TYPES = ['dimension-over-time', 'app-error-summary'] as const;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A value as the service writes a series in its default format: a JavaScript literal, keys unquoted. */
export function jsLiteral(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(jsLiteral).join(',')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${k}:${jsLiteral(v)}`).join(',')}}`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

interface IncidentRecord extends Omit<IncidentSeed, 'startAgoMs' | 'endAgoMs'> {
  start: number;
  end: number;
  /** Its start (end) was given relative to now (startAgoMs, endAgoMs): an export writes it relative again. */
  startRelative?: true;
  endRelative?: true;
}

/** Bounded least-recently-used blocks, by key. */
export class BlockCache {
  private readonly blocks = new Map<string, Float64Array>();
  private bytes = 0;
  /** The key used last: it is the newest already, and a polled query asks for it again and again. */
  private newest: string | undefined;
  constructor(private readonly maxBytes: number) {}
  get(key: string): Float64Array | undefined {
    const block = this.blocks.get(key);
    if (block && key !== this.newest) {
      this.blocks.delete(key);
      this.blocks.set(key, block);
      this.newest = key;
    }
    return block;
  }
  set(key: string, block: Float64Array): void {
    const had = this.blocks.get(key);
    if (had) {
      this.blocks.delete(key);
      this.bytes -= had.byteLength + key.length * 2 + 64;
    }
    this.blocks.set(key, block);
    this.newest = key;
    this.bytes += block.byteLength + key.length * 2 + 64;
    while (this.bytes > this.maxBytes) {
      const [oldKey, old] = this.blocks.entries().next().value as [string, Float64Array];
      this.blocks.delete(oldKey);
      this.bytes -= old.byteLength + oldKey.length * 2 + 64;
    }
  }
  clear(): void {
    this.blocks.clear();
    this.bytes = 0;
    this.newest = undefined;
  }
  /** Bytes held (keys and blocks). */
  get size(): number {
    return this.bytes;
  }
}

const blockCaches = new WeakMap<object, BlockCache>();
const NO_CONFIG = {};

/**
 * The block cache shared by every world built from one configuration (the default world and
 * its sandboxes: one per process), bounded by QUERY_CACHE_MAX_BYTES: the blocks are Float64Arrays,
 * whose bytes are outside the JavaScript heap, and a cache of its own for each of a hundred
 * sandboxes took about 10 MiB of resident memory each.
 */
export function queryCacheOf(config?: { queryCacheMaxBytes?: number }): BlockCache {
  const key = config ?? NO_CONFIG;
  let cache = blockCaches.get(key);
  if (!cache) blockCaches.set(key, (cache = new BlockCache(config?.queryCacheMaxBytes ?? QUERY_CACHE_BYTES)));
  return cache;
}

/** Numbers the stores, for their keys in the shared cache. */
let queryStoreCount = 0;

/**
 * One store's part of the shared cache: its keys carry the store's number and its generation,
 * so a store never reads another's blocks, and the blocks of a generation an incident ended
 * are never read again (the least recently used, they go first).
 */
class StoreCache {
  private readonly id = `${++queryStoreCount}:`;
  constructor(
    readonly shared: BlockCache,
    private readonly generation: () => number,
  ) {}
  private key(k: string): string {
    return `${this.id}${this.generation()}|${k}`;
  }
  get(k: string): Float64Array | undefined {
    return this.shared.get(this.key(k));
  }
  set(k: string, block: Float64Array): void {
    this.shared.set(this.key(k), block);
  }
}

/** The selection of a query without drill-downs: every beacon. One object, so its cache key is worked out once. */
const EVERY_BEACON: Selection = Object.freeze({});
const EVERY_BEACON_KEY = selectionKey(EVERY_BEACON);

/** A summary's body: its numbers as the service writes them, strings (all null without data). */
type SummaryBody = Record<'median' | 'moe' | 'n' | 'p95' | 'p98', string | null>;

/** The domains of a catalogue by app key, worked out once per catalogue (it is replaced, not changed, when domains change). */
const domainsByKey = new WeakMap<readonly QueryDomain[], Map<string, QueryDomain>>();
function domainByKey(domains: readonly QueryDomain[], apiKey: string): QueryDomain | undefined {
  let byKey = domainsByKey.get(domains);
  if (!byKey) {
    byKey = new Map();
    // The first domain with a key wins, as a search in order would find it.
    for (const d of domains) if (!byKey.has(d.apiKey)) byKey.set(d.apiKey, d);
    domainsByKey.set(domains, byKey);
  }
  return byKey.get(apiKey);
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const mid = (k: number) => (BUCKET_EDGES[k] + BUCKET_EDGES[k + 1]) / 2;

/** The statistics of a chart series, as the service adds them. */
function statistics(ys: number[]): { yMin: number; yMax: number; ySum: number; yAvg: number } {
  if (ys.length === 0) return { yMin: 0, yMax: 0, ySum: 0, yAvg: 0 };
  let yMin = Infinity;
  let yMax = -Infinity;
  let ySum = 0;
  for (const y of ys) {
    if (y < yMin) yMin = y;
    if (y > yMax) yMax = y;
    ySum += y;
  }
  return { yMin, yMax, ySum, yAvg: round2(ySum / ys.length) };
}

/**
 * The Query API: real-user data of each domain, generated from its model on demand for any
 * range up to the emulator's now, and the incidents that bend it. Nothing grows with time:
 * complete hours and days are kept in a cache bounded in bytes.
 */
/** Minutes a batch gathers before it lets other requests in (16 days: a few milliseconds). */
const BATCH_YIELD_MINUTES = 16 * DAY_MINUTES;

/** Minutes of fresh data a query works out before it lets other requests in (six hours: about 25 ms for a breakdown by 11 countries). */
const YIELD_MINUTES = 6 * 60;

/**
 * The problems of the incident at `i` of a seed, each reported through `report`. `now`
 * resolves the relative times; without it, only what holds at any load time is checked.
 */
export function incidentProblems(seed: IncidentSeed, i: number, now: number | undefined, report: (text: () => string) => void): void {
  const at = () => `$.incidents[${i}] (id ${seed.id})`;
  const badStart = (seed.start === undefined) === (seed.startAgoMs === undefined);
  const badEnd = (seed.end === undefined) === (seed.endAgoMs === undefined);
  if (badStart) report(() => `${at()}: give exactly one of start and startAgoMs (it has ${seed.start === undefined ? 'neither' : 'both'})`);
  if (badEnd) report(() => `${at()}: give exactly one of end and endAgoMs (it has ${seed.end === undefined ? 'neither' : 'both'})`);
  // Which start or end is meant is unknown: their order cannot be judged.
  if (badStart || badEnd) return;
  const relative = seed.startAgoMs !== undefined || seed.endAgoMs !== undefined;
  const allRelative = seed.start === undefined && seed.end === undefined;
  const base = now ?? (allRelative ? 0 : undefined);
  if (relative && base === undefined) return;
  const start = seed.start ?? (base as number) - (seed.startAgoMs ?? 0);
  const end = seed.end ?? (base as number) - (seed.endAgoMs ?? 0);
  if (end <= start) report(() => `${at()}: end (${end}) is not after start (${start})`);
}

export class QueryStore {
  /** Requests per user in the current rate-limit window; a reset starts them afresh. */
  readonly rateLimits = new RateCounters();
  private incidents: IncidentRecord[];
  private nextIncidentId: number;
  private readonly generators = new Map<number, RumGenerator>();
  private readonly cache: StoreCache;
  /**
   * The summary body of a block of counts, with the percentile it was worked out for. A block
   * in the cache never changes (incidents clear the cache; time moving on makes a new range,
   * so a new block): a client polling one summary gets the body it got, until the next minute.
   */
  private readonly summaries = new WeakMap<Float64Array, { percentile: number; body: SummaryBody }>();
  /** Goes up when incidents change, so that a computation under way keeps nothing it made before. */
  private generation = 0;

  /** `state` is only read. */
  constructor(
    private readonly state: QuerySections,
    private readonly clock: Clock,
    private readonly ports: QueryPorts,
    /** The process's block cache (queryCacheOf): one for every world. */
    shared: BlockCache = queryCacheOf(),
  ) {
    this.cache = new StoreCache(shared, () => this.generation);
    const now = clock.now();
    const problems: string[] = [];
    this.incidents = state.incidents.map((seed, i) => {
      incidentProblems(seed, i, now, (text) => problems.push(text()));
      const start = seed.start ?? now - (seed.startAgoMs ?? 0);
      const end = seed.end ?? now - (seed.endAgoMs ?? 0);
      const { startAgoMs, endAgoMs, ...rest } = seed;
      return {
        ...rest,
        start,
        end,
        ...(startAgoMs !== undefined ? { startRelative: true as const } : {}),
        ...(endAgoMs !== undefined ? { endRelative: true as const } : {}),
      };
    });
    state.rumModels.forEach((seed, i) => rumModelProblems(seed, i, (text) => problems.push(text())));
    if (problems.length) throw new FixtureError(problems.join('\n'));
    this.nextIncidentId = Math.max(FIRST_INCIDENT_ID, ...this.incidents.map((i) => i.id + 1));
  }

  /** The domain of an app key, if the session's tenant may query it. */
  private domainOf(apiKey: string, tenant: string | undefined): QueryDomain {
    const domain = domainByKey(this.ports.domains(), apiKey);
    if (!domain) throw missing(`no app has the app key '${apiKey}'; the apiKey attribute of a domain object is its app key`);
    if (domain.tenant !== undefined && tenant !== undefined && domain.tenant !== tenant) {
      // The token is good (401 would tell a client to log in again); its tenant may not read this app.
      throw forbidden(`the app key '${apiKey}' belongs to another tenant than the security token's ('${tenant}'): log in to the app's tenant, or send X-Tenant-Name with it if the user is in it`);
    }
    return domain;
  }

  private generatorOf(domainId: number): RumGenerator {
    let generator = this.generators.get(domainId);
    if (!generator) {
      const model = modelOf(domainId, this.state.rumModels.find((m) => m.domainId === domainId));
      generator = new RumGenerator(model, incidentsOf(model, this.incidents));
      this.generators.set(domainId, generator);
    }
    return generator;
  }

  /** The model of a domain (its fixture's, or the one derived from its id). */
  modelOf(domainId: number): RumModel {
    return this.generatorOf(domainId).model;
  }

  /**
   * Bucket counts of [fromMin, toMin), from cached complete hours and days where it can. With
   * `by`, one block per value of that dimension, BLOCK_SIZE apart.
   */
  private async aggregate(gen: RumGenerator, timer: Timer, selection: Selection, fromMin: number, toMin: number, by?: Dimension): Promise<Float64Array> {
    const model = gen.model;
    const size = (by === undefined ? 1 : by === 'pageGroup' ? model.pageGroups.length : model.dimensions[by].length) * BLOCK_SIZE;
    if (selection.empty) return new Float64Array(size);
    const key = `${model.domainId}|${timer.id}|${selection === EVERY_BEACON ? EVERY_BEACON_KEY : selectionKey(selection)}|${by ?? ''}|`;
    // The counts of a range already answered: its minutes are complete, so they stay what they
    // were until incidents change (which clears the cache). A client polling one query (a
    // dashboard) gets it from here until the next minute completes, instead of working out the
    // partial hours at both ends of the range again each time (a 30-day summary: up to 118
    // minutes, about 100 µs a request). Kept in the same bounded cache as the blocks.
    const rangeKey = `${key}r${fromMin}-${toMin}`;
    const answered = this.cache.get(rangeKey);
    if (answered) return answered;
    // A long range not yet in the cache is worked out a few hours at a time, letting other
    // requests in between; blocks made before an incident changed are not kept.
    const generation = this.generation;
    let fresh = 0;
    const pause = async () => {
      if ((fresh += 60) < YIELD_MINUTES) return;
      fresh = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    };
    const keep = (k: string, block: Float64Array) => {
      if (generation === this.generation) this.cache.set(k, block);
    };
    const out = new Float64Array(size);
    const add = (block: Float64Array) => {
      for (let k = 0; k < size; k++) out[k] += block[k];
    };
    const hour = async (m: number): Promise<Float64Array> => {
      const hit = this.cache.get(`${key}h${m}`);
      if (hit) return hit;
      const block = new Float64Array(size);
      for (let i = 0; i < 60; i++) gen.addMinute(block, m + i, timer, selection, by);
      keep(`${key}h${m}`, block);
      await pause();
      return block;
    };
    const day = async (m: number): Promise<Float64Array> => {
      const hit = this.cache.get(`${key}d${m}`);
      if (hit) return hit;
      const block = new Float64Array(size);
      for (let h = 0; h < 24; h++) {
        const part = await hour(m + h * 60);
        for (let k = 0; k < size; k++) block[k] += part[k];
      }
      keep(`${key}d${m}`, block);
      return block;
    };
    // A range whose beacons no dimension splits: its complete days, and the complete hours
    // before and after them, are summed by counts of beacons (MinuteBatch), each run at once
    // and kept as one block for the next query of the same run (a dashboard polling the last
    // 30 days asks for the same runs all hour long); only the minutes at both ends go one by one.
    const batchable = batches(selection, by);
    const run = async (from: number, to: number, unit: number): Promise<void> => {
      if (to <= from) return;
      const batch = gen.batch(timer, selection, by)!;
      const letter = unit === DAY_MINUTES ? 'd' : 'h';
      const runKey = to - from === unit ? `${key}${letter}${from}` : `${key}${letter.toUpperCase()}${from}-${to}`;
      const hit = this.cache.get(runKey);
      if (hit) return add(hit);
      const block = new Float64Array(size);
      let pending = 0;
      // Bounded by the range, which parseQuery bounds (93 days).
      for (let u = from; u < to; u += unit) {
        const known = this.cache.get(`${key}${letter}${u}`);
        if (known) for (let k = 0; k < size; k++) block[k] += known[k];
        else {
          gen.addToBatch(batch, u, u + unit);
          if ((pending += unit) >= BATCH_YIELD_MINUTES) {
            pending = 0;
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
        }
      }
      batch.sumInto(block);
      keep(runKey, block);
      add(block);
    };
    const firstHour = Math.ceil(fromMin / 60) * 60;
    const endHour = Math.floor(toMin / 60) * 60;
    if (batchable && endHour > firstHour) {
      const firstDay = Math.ceil(fromMin / DAY_MINUTES) * DAY_MINUTES;
      const endDay = Math.floor(toMin / DAY_MINUTES) * DAY_MINUTES;
      for (let m = fromMin; m < firstHour; m++) gen.addMinute(out, m, timer, selection, by);
      if (endDay > firstDay) {
        await run(firstHour, firstDay, 60);
        await run(firstDay, endDay, DAY_MINUTES);
        await run(endDay, endHour, 60);
      } else await run(firstHour, endHour, 60);
      for (let m = endHour; m < toMin; m++) gen.addMinute(out, m, timer, selection, by);
      keep(rangeKey, out);
      return out;
    }
    let m = fromMin;
    // Bounded by the range, which parseQuery bounds.
    while (m < toMin) {
      if (m % DAY_MINUTES === 0 && m + DAY_MINUTES <= toMin) {
        add(await day(m));
        m += DAY_MINUTES;
      } else if (m % 60 === 0 && m + 60 <= toMin) {
        add(await hour(m));
        m += 60;
      } else {
        gen.addMinute(out, m, timer, selection, by);
        m++;
      }
    }
    keep(rangeKey, out);
    return out;
  }

  /** Minutes of a range that have data: complete minutes up to now. */
  private minutes(request: QueryRequest): { fromMin: number; toMin: number } {
    const nowMin = Math.floor(this.clock.now() / MINUTE);
    const fromMin = Math.floor(request.from / MINUTE);
    return { fromMin, toMin: Math.max(fromMin, Math.min(Math.ceil(request.to / MINUTE), nowMin)) };
  }

  /** The start minutes of a series' points: per minute up to a day, per hour up to a week, else per day. */
  private steps(request: QueryRequest): { fromMin: number; toMin: number; step: number; points: number[]; end: (m: number) => number } {
    const { fromMin, toMin } = this.minutes(request);
    const span = (request.to - request.from) / MINUTE;
    const step = request.interval ?? (span <= DAY_MINUTES ? 1 : span <= 7 * DAY_MINUTES ? 60 : DAY_MINUTES);
    // Points start on whole hours (days): the first one covers the part before the first
    // boundary, and every other one is a complete hour (day), which the cache keeps.
    const points: number[] = [];
    const end = (m: number) => Math.min((Math.floor(m / step) + 1) * step, toMin);
    for (let m = fromMin; m < toMin; m = end(m)) points.push(m);
    return { fromMin, toMin, step, points, end };
  }

  private timerOf(model: RumModel, request: QueryRequest, name: string | undefined): Timer {
    if (request.customTimer !== undefined) {
      const custom = model.timers.find((t) => t.id.startsWith('CustomTimer') && t.label === request.customTimer);
      if (!custom) throw invalid(`Invalid parameter: custom-timer is not a custom timer of this app: ${request.customTimer}`);
      return custom;
    }
    // An unknown timer answers the page load, as the service does (clients check the series id).
    return model.timers.find((t) => t.id === name) ?? model.timers[0];
  }

  /** The beacons a query's drill-downs keep, as indexes into the model's values. */
  private selectionOf(model: RumModel, request: QueryRequest): Selection {
    if (request.unmodelledFilter) return { empty: true };
    const d = request.drilldowns;
    const custom = request.customDrilldowns;
    if (d === NO_DRILLDOWNS && custom === undefined) return EVERY_BEACON;
    const selection: Selection = {};
    const pick = (names: string[] | undefined, list: ReadonlyArray<{ name: string }>): number[] | undefined =>
      names === undefined ? undefined : list.flatMap((v, i) => (names.includes(v.name) ? [i] : []));
    selection.pageGroup = pick(d['page-group'], model.pageGroups);
    selection.browser = pick(d.browser, model.dimensions.browser);
    selection.country = pick(d.country, model.dimensions.country);
    selection.abTest = pick(d['ab-test'], model.dimensions.abTest);
    selection.bandwidth = pick(d['bandwith-block'], model.dimensions.bandwidth);
    selection.isp = pick(d.isp, model.dimensions.isp);
    selection.connectionType = pick(d['connection-type'], model.dimensions.connectionType);
    selection.deviceType = pick(d['device-type'], model.dimensions.deviceType);
    selection.os = pick(d.os, model.dimensions.os);
    if (d['beacon-type'] && !d['beacon-type'].includes('page view')) return { empty: true };
    // A custom dimension the app does not declare: no beacon has it, as the service answers.
    for (const [name, values] of Object.entries(custom ?? {})) {
      const key = customDimension(name);
      selection[key] = model.splitDimensions.includes(key) ? pick(values, model.dimensions[key]) : [];
    }
    for (const key of Object.keys(selection) as Array<keyof Selection>) {
      const kept = selection[key] as readonly number[] | undefined;
      if (kept === undefined) delete selection[key];
      else if (kept.length === 0) return { empty: true };
    }
    return selection;
  }

  /** Answers one query of one app; `tenant` is the session's. */
  async query(apiKey: string, type: QueryType, query: QueryQuery, tenant?: string): Promise<Record<string, unknown>> {
    const domain = this.domainOf(apiKey, tenant);
    const request = parseQuery(query, this.clock.now());
    if (!(ROW_TYPES as readonly string[]).includes(type)) rowless(type, request);
    if (type !== 'by-minute' && type !== 'timers-metrics') timeless(type, request);
    const gen = this.generatorOf(domain.id);
    const model = gen.model;
    const selection = this.selectionOf(model, request);
    const { fromMin, toMin } = this.minutes(request);
    const pageLoad = model.timers[0];
    const timer = this.timerOf(model, request, request.timers[0]);
    const series = (value: Json): Json => (request.seriesJson ? value : jsLiteral(value));
    const chart = (chartTitle: string, chartTitleSuffix: string | null, dataset: string, value: Json) => ({
      chartTitle,
      chartTitleSuffix,
      datasetName: dataset,
      reportType: dataset,
      resultName: null,
      series: series(value),
    });

    switch (type) {
      case 'summary': {
        const block = await this.aggregate(gen, timer, selection, fromMin, toMin);
        const known = this.summaries.get(block);
        if (known?.percentile === request.percentile) return known.body;
        const s = statsOf(block, request.percentile);
        const body: SummaryBody =
          s.n === 0
            ? { median: null, moe: null, n: null, p95: null, p98: null }
            : { median: String(s.median), moe: String(s.moe), n: String(s.n), p95: String(s.p95), p98: String(s.p98) };
        this.summaries.set(block, { percentile: request.percentile, body });
        return body;
      }
      case 'histogram': {
        const block = await this.aggregate(gen, timer, selection, fromMin, toMin);
        const s = statsOf(block, request.percentile);
        if (s.n === 0) return chart('Number of Samples', null, 'RumHistogram', { series: [] });
        const aPoints: Json[] = [];
        for (let k = 0; k < BUCKETS; k++) if (block[k] > 0) aPoints.push({ s: BUCKET_EDGES[k], e: BUCKET_EDGES[k + 1], c: block[k] });
        return chart('Number of Samples', null, 'RumHistogram', {
          series: [
            {
              name: 'Number of Samples',
              aPoints,
              kValue: 150,
              median: s.median,
              percentile_name: request.percentile === 50 ? 'Median' : `${request.percentile}th Percentile`,
              p95: s.p95,
              p98: s.p98,
              buckets: BUCKETS,
            },
          ],
        });
      }
      case 'by-minute': {
        const { points, end } = this.steps(request);
        const aPoints: Json[] = [];
        const ys: number[] = [];
        for (const m of points) {
          const s = statsOf(await this.aggregate(gen, timer, selection, m, end(m)), request.percentile);
          if (s.n === 0) continue;
          ys.push(s.median);
          aPoints.push({
            x: m * MINUTE,
            y: s.median,
            label: '',
            userdata: `{"name":"MoE", "value":${s.moe / 1000}, "stringTemplate":"{#n#}: <b>{#v#}s<\\/b>"}`,
          });
        }
        const body = aPoints.length ? { series: [{ name: timer.label, aPoints, pointCount: aPoints.length, statistics: statistics(ys) }] } : { series: [] };
        return chart('Time in ms', 'per Second', 'RumPerMinuteLoadTimes', body);
      }
      case 'timers-metrics':
        return await this.timersMetrics(gen, request, selection);
      case 'page-groups':
      case 'browsers':
      case 'ab-tests': {
        const dimension: Dimension = type === 'page-groups' ? 'pageGroup' : type === 'browsers' ? 'browser' : 'abTest';
        const all = await this.breakdown(gen, timer, selection, dimension, fromMin, toMin, request.percentile);
        // The share of each row is of every beacon the query keeps, whatever rows limit keeps.
        const total = all.reduce((sum, r) => sum + r.stats.n, 0);
        const rows = this.arranged(all, request, type === 'page-groups' ? 'page_group' : type === 'browsers' ? 'browser' : 'ab_test');
        const first = type === 'page-groups' ? 'Page Group' : type === 'browsers' ? 'User Agent' : 'Test Name';
        return {
          columnNames: [first, 'Median Time (ms)', 'MoE (ms)', 'Measurements', '% of total'],
          data: rows.map((r) => [r.name, r.stats.median, String(r.stats.moe), r.stats.n, String((r.stats.n * 100) / total)]),
        };
      }
      case 'geography': {
        const rows = this.arranged(await this.breakdown(gen, timer, selection, 'country', fromMin, toMin, request.percentile), request, 'country');
        return { data: rows.map((r) => ({ country: r.name, timerN: String(r.stats.n), timerMedian: String(r.stats.median), timerID: timer.id })) };
      }
      case 'bandwidth': {
        const rows = this.arranged(await this.breakdown(gen, timer, selection, 'bandwidth', fromMin, toMin, request.percentile), request, 'bw_block');
        const aPoints = rows.map((r) => {
          const label = BANDWIDTH_LABELS[r.name] ?? r.name;
          return { x: label, y: r.stats.n, label, userdata: label };
        });
        const body = aPoints.length
          ? { series: [{ name: 'Bandwidth Blocks', aPoints, pointCount: aPoints.length, statistics: statistics(aPoints.map((p) => p.y)) }] }
          : { series: [] };
        return chart('Bandwidth Blocks', null, 'RumBandwidth', body);
      }
      case 'sessions-per-page-load-time': {
        const block = await this.aggregate(gen, pageLoad, selection, fromMin, toMin);
        const aPoints: Array<{ x: number; y: number }> = [];
        for (let k = 0; k < BUCKETS; k++) {
          const y = Math.round(block[k] * SESSIONS_PER_BEACON);
          if (y > 0) aPoints.push({ x: BUCKET_EDGES[k], y });
        }
        const body = aPoints.length
          ? { series: [{ name: 'Sessions Per Page Load Time', aPoints, pointCount: aPoints.length, statistics: statistics(aPoints.map((p) => p.y)) }] }
          : { series: [] };
        return chart('Sessions', null, 'RumSessionsPerPageLoadTime', body);
      }
      case 'metric-per-page-load-time': {
        const name = request.metrics[0] ?? 'BounceRate';
        const custom = model.customMetrics.find((m) => m.id === name || m.name === name);
        const id = name === 'BounceRate' ? 'BounceRate' : custom?.id;
        const dataset = `Rum${id ?? name}PerPageLoadTime`;
        // An unknown metric answers no series at all, as the service does (clients read it so).
        if (id === undefined) return { ...chart(name, null, dataset, null), series: null };
        const block = await this.aggregate(gen, pageLoad, selection, fromMin, toMin);
        const aPoints: Array<{ x: number; y: number }> = [];
        for (let k = 0; k < BUCKETS; k++) {
          if (block[k] < 1) continue;
          // A little noise per bucket, the same in every run, so the curve looks measured.
          const wobble = 1 + 0.06 * (unit(model.domainId, id, k) - 0.5);
          const y = custom ? metricAt(custom, model, mid(k)) : 100 * bounceAt(model, mid(k));
          aPoints.push({ x: BUCKET_EDGES[k], y: y * wobble });
        }
        const label = custom ? `${custom.name} Per Page Load Time` : 'Bounce Rate Per Page Load Time';
        const body = aPoints.length
          ? { series: [{ name: label, aPoints, pointCount: aPoints.length, statistics: statistics(aPoints.map((p) => p.y)) }] }
          : { series: [] };
        return chart(id, null, dataset, body);
      }
      case 'metrics-by-dimension':
        return await this.metricsByDimension(gen, request, selection, fromMin, toMin);
      case 'dimension-values': {
        const { dimension, modelled } = dimensionOf(model, request);
        if (modelled === undefined || modelled === 'beaconType') {
          const only = modelled === undefined ? [] : [{ name: 'page view', stats: { n: 1, median: 0 } }];
          return { values: this.arranged(only, request, dimension).map((r) => r.name) };
        }
        const rows = this.arranged(await this.breakdown(gen, pageLoad, selection, modelled, fromMin, toMin, 50), request, dimension);
        return { values: rows.map((r) => r.name) };
      }
    }
  }

  /**
   * The answer of the documented query types without a route of their own: `app-error-summary`
   * from the model's errors, `dimension-over-time` what the service answers for no data.
   */
  async emptyQuery(apiKey: string, type: (typeof EMPTY_QUERY_TYPES)[number], query: QueryQuery, tenant?: string): Promise<Record<string, unknown>> {
    const domain = this.domainOf(apiKey, tenant);
    const request = parseQuery(query, this.clock.now());
    if (type === 'app-error-summary') {
      timeless(type, request);
      return await this.appErrorSummary(this.generatorOf(domain.id), request);
    }
    return await this.dimensionOverTime(this.generatorOf(domain.id), request);
  }

  /**
   * The beacons of each value of `dimension` per point of the range (spaced as by-minute's,
   * or by `interval`): one series per value with beacons, most beacons first; `limit` keeps
   * that many series. At every point the series add up to the beacons of the whole.
   */
  private async dimensionOverTime(gen: RumGenerator, request: QueryRequest): Promise<Record<string, unknown>> {
    if (request.sortby !== undefined) throw invalid(`Invalid parameter: sortby does not apply to dimension-over-time (its series are ordered by beacons): ${request.sortby}`);
    const model = gen.model;
    const { modelled } = dimensionOf(model, request);
    const selection = this.selectionOf(model, request);
    const pageLoad = model.timers[0];
    const { points, end } = this.steps(request);
    const names = modelled === undefined ? [] : modelled === 'beaconType' ? ['page view'] : (modelled === 'pageGroup' ? model.pageGroups : model.dimensions[modelled]).map((v) => v.name);
    const ys = names.map(() => [] as number[]);
    if (modelled !== undefined) {
      for (const m of points) {
        const by = modelled === 'beaconType' ? undefined : modelled;
        const blocks = await this.aggregate(gen, pageLoad, selection, m, end(m), by);
        names.forEach((_, v) => ys[v].push(countOf(blocks.subarray(v * BLOCK_SIZE, (v + 1) * BLOCK_SIZE))));
      }
    }
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    let series = names
      .map((name, v) => ({ name, total: sum(ys[v]), ys: ys[v] }))
      .filter((r) => r.total > 0)
      .sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (request.limit !== undefined) series = series.slice(0, request.limit);
    const body = {
      series: series.map((r) => ({
        name: r.name,
        aPoints: points.map((m, i) => ({ x: m * MINUTE, y: r.ys[i] })),
        pointCount: points.length,
        statistics: statistics(r.ys),
      })),
    };
    return {
      chartTitle: 'Dimension Over Time',
      chartTitleSuffix: null,
      datasetName: 'RumDimensionOverTime',
      reportType: 'RumDimensionOverTime',
      resultName: null,
      series: request.seriesJson ? body : jsLiteral(body),
    };
  }

  /**
   * The JavaScript errors of the range, as the beacons the query keeps have them: each
   * message with its count, most first (`sortby=Error`: A to Z), the counts adding up to the
   * `AppErrors` of `timers-metrics`; an incident's errorFactor raises them all.
   */
  private async appErrorSummary(gen: RumGenerator, request: QueryRequest): Promise<Record<string, unknown>> {
    const by = request.sortby ?? 'Count';
    if (by !== 'Count' && by !== 'Error') throw invalid(`Invalid parameter: sortby must be one of Error, Count: ${by}`);
    const { fromMin, toMin } = this.minutes(request);
    const block = await this.aggregate(gen, gen.model.timers[0], this.selectionOf(gen.model, request), fromMin, toMin);
    const rows = appErrorCounts(block[ERRORS]).filter((r) => r.count > 0);
    rows.sort((a, b) => (by === 'Count' ? b.count - a.count : 0) || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
    const kept = request.limit === undefined ? rows : rows.slice(0, request.limit);
    return { columnNames: ['Error', 'Count'], data: kept.map((r) => [r.message, r.count]) };
  }

  /** One row per value of a dimension that has beacons, most beacons first. */
  private async breakdown(
    gen: RumGenerator,
    timer: Timer,
    selection: Selection,
    dimension: Dimension,
    fromMin: number,
    toMin: number,
    percentile: number,
  ): Promise<Array<{ name: string; stats: ReturnType<typeof statsOf>; block: Float64Array }>> {
    const model = gen.model;
    const list = dimension === 'pageGroup' ? model.pageGroups : model.dimensions[dimension];
    const blocks = await this.aggregate(gen, timer, selection, fromMin, toMin, dimension);
    const rows = [];
    for (let v = 0; v < list.length; v++) {
      const block = blocks.subarray(v * BLOCK_SIZE, (v + 1) * BLOCK_SIZE);
      const stats = statsOf(block, percentile);
      if (stats.n > 0) rows.push({ name: list[v].name, stats, block });
    }
    return rows.sort((a, b) => b.stats.n - a.stats.n || (a.name < b.name ? -1 : 1));
  }

  /**
   * The rows of a breakdown as `sortby` and `limit` ask: `sortby` names a column (the
   * dimension's own name sorts by name, A to Z; `beacons`, `page_load` and `extra`'s columns
   * sort largest first, ties by beacons and name), absent: beacons, most first; `limit`
   * keeps that many rows from the top.
   */
  private arranged<R extends { name: string; stats: { n: number; median: number } }>(
    rows: R[],
    request: QueryRequest,
    dimension: string,
    extra: Record<string, (row: R) => number> = {},
  ): R[] {
    const by = request.sortby;
    let out = rows;
    if (by !== undefined && by !== 'beacons') {
      const known = [dimension, 'beacons', 'page_load', ...Object.keys(extra).filter((c) => c !== dimension && c !== 'beacons' && c !== 'page_load')];
      if (!known.includes(by)) throw invalid(`Invalid parameter: sortby must be one of ${known.join(', ')}: ${by}`);
      const tie = (a: R, b: R) => b.stats.n - a.stats.n || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      if (by === dimension) out = [...rows].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      else {
        const key = extra[by] ?? ((r: R) => r.stats.median);
        out = [...rows].sort((a, b) => key(b) - key(a) || tie(a, b));
      }
    }
    return request.limit === undefined ? out : out.slice(0, request.limit);
  }

  /** A metric's value over a block of page-load buckets. */
  private metricValue(model: RumModel, id: string, block: Float64Array): number {
    const n = countOf(block);
    switch (id) {
      case 'Beacons':
        return n;
      case 'AppErrors':
        return block[ERRORS];
      case 'ErrorsPerPage':
        return n ? round2(block[ERRORS] / n) : 0;
      case 'Sessions':
        return Math.round(n * SESSIONS_PER_BEACON);
    }
    if (n === 0) return 0;
    const custom = model.customMetrics.find((m) => m.id === id);
    let sum = 0;
    for (let k = 0; k < BUCKETS; k++) if (block[k]) sum += block[k] * (custom ? metricAt(custom, model, mid(k)) : 100 * bounceAt(model, mid(k)));
    return round2(sum / n);
  }

  private async timersMetrics(gen: RumGenerator, request: QueryRequest, selection: Selection): Promise<Record<string, unknown>> {
    const model = gen.model;
    const known = new Set(['Beacons', 'AppErrors', 'ErrorsPerPage', 'Sessions', 'BounceRate', ...model.customMetrics.map((m) => m.id)]);
    const metricIds = (request.metrics.length || request.timers.length ? request.metrics : ['Beacons']).map((m) => {
      const custom = model.customMetrics.find((c) => c.name === m);
      // An unknown metric answers the beacons, as the service does (clients check the series id).
      return custom ? custom.id : known.has(m) ? m : 'Beacons';
    });
    const timers = (request.timers.length || request.metrics.length ? request.timers : ['PageLoad']).map((t) => this.timerOf(model, request, t));
    if (request.customTimer !== undefined && !timers.length) timers.push(this.timerOf(model, request, undefined));
    const { fromMin, toMin, points, end } = this.steps(request);
    const values: Array<{ history: number[]; id: string; latest: number }> = [];
    const pageLoad = model.timers[0];
    for (const id of metricIds) {
      const history: number[] = [];
      for (const m of points) history.push(this.metricValue(model, id, await this.aggregate(gen, pageLoad, selection, m, end(m))));
      values.push({ history, id, latest: this.metricValue(model, id, await this.aggregate(gen, pageLoad, selection, fromMin, toMin)) });
    }
    for (const timer of timers) {
      const history: number[] = [];
      for (const m of points) history.push(statsOf(await this.aggregate(gen, timer, selection, m, end(m)), request.percentile).median);
      values.push({ history, id: timer.id, latest: statsOf(await this.aggregate(gen, timer, selection, fromMin, toMin), request.percentile).median });
    }
    return { dataTimeZone: request.timezone, values };
  }

  private async metricsByDimension(
    gen: RumGenerator,
    request: QueryRequest,
    selection: Selection,
    fromMin: number,
    toMin: number,
  ): Promise<Record<string, unknown>> {
    const model = gen.model;
    const { dimension, modelled } = dimensionOf(model, request);
    const columns = request.columns ?? (model.customMetrics.length ? model.customMetrics.map((m) => m.name) : ['beacons']);
    const ids = columns.map((c) => {
      const id = COLUMN_METRICS[c] ?? model.customMetrics.find((m) => m.name === c || m.id === c)?.id;
      if (id === undefined) throw invalid(`Invalid parameter: metrics has a column that is not a metric: ${c}`);
      return id;
    });
    const columnNames = [dimension, ...columns];
    const value = (block: Float64Array, id: string) => (id === 'page_load' ? statsOf(block, request.percentile).median : this.metricValue(model, id, block));
    // sortby may name any column: each sorts by its value in the row.
    const extra: Record<string, (row: { block: Float64Array }) => number> = {};
    columns.forEach((c, i) => (extra[c] = (row) => value(row.block, ids[i])));
    if (modelled === undefined) return { columnNames, data: this.arranged([], request, dimension, extra) };
    const pageLoad = model.timers[0];
    if (modelled === 'beaconType') {
      const block = await this.aggregate(gen, pageLoad, selection, fromMin, toMin);
      const only = countOf(block) ? [{ name: 'page view', stats: statsOf(block, request.percentile), block }] : [];
      return { columnNames, data: this.arranged(only, request, dimension, extra).map((r) => [r.name, ...ids.map((id) => value(r.block, id))]) };
    }
    const rows = this.arranged(await this.breakdown(gen, pageLoad, selection, modelled, fromMin, toMin, request.percentile), request, dimension, extra);
    return { columnNames, data: rows.map((r) => [r.name, ...ids.map((id) => value(r.block, id))]) };
  }

  /** Every app the Query API answers for: each domain with its app key. */
  apps(): Array<{ domainId: number; name: string; apiKey: string }> {
    return this.ports.domains().map((d) => ({ domainId: d.id, name: d.name, apiKey: d.apiKey }));
  }

  // ---- incidents (the control API) ----

  private view(i: IncidentRecord): Incident {
    return {
      id: i.id,
      domainId: i.domainId,
      ...(i.title !== undefined ? { title: i.title } : {}),
      start: i.start,
      end: i.end,
      ...(i.pageGroup !== undefined ? { pageGroup: i.pageGroup } : {}),
      loadTimeFactor: i.loadTimeFactor,
      errorFactor: i.errorFactor,
      trafficFactor: i.trafficFactor,
    };
  }

  listIncidents(): Incident[] {
    return this.incidents.map((i) => this.view(i));
  }

  /** Adds an incident; the numbers of its domain change from then on, for every range it touches. */
  createIncident(body: IncidentCreateBody): Incident {
    if (!this.ports.domains().some((d) => d.id === body.domainId)) throw invalid(`unknown domain id ${body.domainId}`);
    if ((body.start === undefined) === (body.startAgoMs === undefined)) throw invalid('give exactly one of start and startAgoMs');
    if ((body.end === undefined) === (body.endAgoMs === undefined)) throw invalid('give exactly one of end and endAgoMs');
    if (this.incidents.length >= MAX_INCIDENTS) throw conflicting(`there are already ${MAX_INCIDENTS} incidents; delete one first`);
    const now = this.clock.now();
    const start = body.start ?? now - (body.startAgoMs ?? 0);
    const end = body.end ?? now - (body.endAgoMs ?? 0);
    if (end <= start) throw invalid(`end (${end}) is not after start (${start})`);
    const record: IncidentRecord = {
      id: this.nextIncidentId++,
      domainId: body.domainId,
      ...(body.title !== undefined ? { title: body.title } : {}),
      start,
      end,
      ...(body.pageGroup !== undefined ? { pageGroup: body.pageGroup } : {}),
      loadTimeFactor: body.loadTimeFactor ?? 1,
      errorFactor: body.errorFactor ?? 1,
      trafficFactor: body.trafficFactor ?? 1,
      // Given while the world ran (on stage), absolute or relative: an export writes both
      // relative to its clock, so that the incident keeps its age however the export is loaded.
      startRelative: true,
      endRelative: true,
    };
    this.incidents = [...this.incidents, record];
    this.invalidate();
    return this.view(record);
  }

  deleteIncident(id: number): void {
    if (!this.incidents.some((i) => i.id === id)) throw missing(`incident ${id} does not exist`);
    this.incidents = this.incidents.filter((i) => i.id !== id);
    this.invalidate();
  }

  /** Incidents changed: every generated number may have. */
  private invalidate(): void {
    this.generators.clear();
    // The blocks of the generation that ends are not read again: the shared cache lets them go first.
    this.generation++;
  }

  // ---- state ----

  /** The sections in the fixture format: a time given relative (startAgoMs, endAgoMs) relative to `at` (the export's clock). */
  export(at: number): QuerySections {
    return { rumModels: structuredClone(this.state.rumModels), incidents: this.incidents.map((i) => this.exported(i, at)) };
  }

  private exported(i: IncidentRecord, at: number): IncidentSeed {
    const { startRelative, endRelative, start, end, ...rest } = i;
    // A time after `at` (an incident that starts or ends later) is a negative ...AgoMs.
    return {
      ...rest,
      ...(startRelative ? { startAgoMs: at - start } : { start }),
      ...(endRelative ? { endAgoMs: at - end } : { end }),
    };
  }

  snapshot(at: number): Record<'rumModels' | 'incidents', SectionSnapshot> {
    return {
      rumModels: { items: [...this.state.rumModels] },
      incidents: { items: this.incidents, exported: (i) => this.exported(i as IncidentRecord, at) },
    };
  }

  counts(): Record<'rumModels' | 'incidents', number> {
    return { rumModels: this.state.rumModels.length, incidents: this.incidents.length };
  }
}

/** The `dimension` values the model has, and what it calls them. */
const MODELLED_DIMENSIONS: Record<string, Dimension | 'beaconType'> = {
  page_group: 'pageGroup',
  browser: 'browser',
  country: 'country',
  ab_test: 'abTest',
  bw_block: 'bandwidth',
  beacon_type: 'beaconType',
  isp: 'isp',
  connection_type: 'connectionType',
  device_type: 'deviceType',
  os: 'os',
};
/** How a custom dimension is named in the `dimension` parameter. */
const CUSTOM_DIMENSION_PREFIX = 'custom_dimension_';

/**
 * The `dimension` of a query, and what the model calls it (undefined: a dimension of the
 * service the model does not have, which answers no rows); a custom one is
 * custom_dimension_<name>, for a name the app declares.
 */
function dimensionOf(model: RumModel, request: QueryRequest): { dimension: string; modelled: Dimension | 'beaconType' | undefined } {
  const dimension = request.dimension;
  if (dimension === undefined) throw invalid('Invalid parameter: dimension is required: (missing)');
  const modelled = MODELLED_DIMENSIONS[dimension];
  if (modelled !== undefined || SERVICE_DIMENSIONS.includes(dimension)) return { dimension, modelled };
  if (dimension.startsWith(CUSTOM_DIMENSION_PREFIX)) {
    const key = customDimension(dimension.slice(CUSTOM_DIMENSION_PREFIX.length));
    if (model.splitDimensions.includes(key)) return { dimension, modelled: key };
  }
  const known = [
    ...Object.keys(MODELLED_DIMENSIONS),
    ...SERVICE_DIMENSIONS,
    ...model.splitDimensions.filter((d) => d.startsWith('custom:')).map((d) => `${CUSTOM_DIMENSION_PREFIX}${d.slice('custom:'.length)}`),
  ];
  throw invalid(`Invalid parameter: dimension is not a dimension${didYouMean(dimension, known)}: ${dimension}`);
}

/**
 * The problems of the custom dimensions of the model at `i` of a seed, each reported through
 * `report`: a name a built-in dimension has (in any of its spellings) or another custom one
 * has, a value named twice. Shares and names are the schema's to check.
 */
export function rumModelProblems(seed: RumModelSeed, i: number, report: (text: () => string) => void): void {
  const builtIn = new Set([...Object.keys(MODELLED_DIMENSIONS), ...SERVICE_DIMENSIONS, ...SPLIT_DIMENSIONS, 'page_group', 'pageGroup'].map(spelling));
  const seen = new Set<string>();
  (seed.customDimensions ?? []).forEach((d, j) => {
    const at = `$.rumModels[${i}].customDimensions[${j}]`;
    const name = spelling(d.name);
    if (builtIn.has(name)) report(() => `${at}.name: '${d.name}' is a built-in dimension's name; give the custom dimension another one`);
    else if (seen.has(name)) report(() => `${at}.name: '${d.name}' names another custom dimension of this model too`);
    seen.add(name);
    const values = new Set<string>();
    d.values.forEach((v, k) => {
      if (values.has(v.name)) report(() => `${at}.values[${k}].name: '${v.name}' is a value of this dimension already`);
      values.add(v.name);
    });
  });
}

/** A dimension's name as two spellings of it compare: case, dashes and underscores aside (page-group, page_group, pageGroup). */
const spelling = (name: string) => name.toLowerCase().replace(/[-_]/g, '');

/** Dimensions the service has and the model does not: they answer no rows. */
const SERVICE_DIMENSIONS = [
  'akamai_aa',
  'akamai_bm',
  'akamai_bm_category',
  'akamai_bm_type',
  'akamai_feo',
  'akamai_property_version',
  'apperror_code',
  'apperror_message',
  'apperror_source',
  'apperror_type',
  'boomerang_version',
  'browser_family',
  'device',
  'device_manufacturer',
  'early_beacon',
  'full_url',
  'http_protocol',
  'ip_version',
  'landing_page',
  'navigation_type',
  'network_error_code',
  'operating_system',
  'operating_system_with_version',
  'os_family',
  'site_version',
  'url',
  'visibility_state',
];
/** metrics-by-dimension's column names, and the metric each is. */
const COLUMN_METRICS: Record<string, string> = {
  beacons: 'Beacons',
  sessions: 'Sessions',
  bounce_rate: 'BounceRate',
  page_load: 'page_load',
  errors_per_page: 'ErrorsPerPage',
};
