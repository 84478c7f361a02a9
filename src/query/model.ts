import { finishHash, hashState, keyWord, mixNumber, mixWord, normalOf, unit } from '../core/random.js';
import type { IncidentSeed, RumModelSeed } from './schemas.js';

/**
 * The real users of one domain, as numbers that are a pure function of the model, the
 * incidents and the minute: no sample is ever stored. Each minute's beacons are split over
 * the page groups, and each page group's beacons over fixed load-time buckets by the
 * log-normal distribution of the timer; browsers, countries, A/B tests, bandwidth blocks,
 * ISPs, connection types, device types and operating systems then take their part of each
 * bucket. Every split rounds cumulatively (the parts of a
 * whole always add up to it exactly), so summaries, histograms, per-minute series and
 * drill-downs computed from the same buckets agree to the beacon.
 */

/** The lower edges of the load-time buckets, in ms; the last edge closes the last bucket. */
export const BUCKET_EDGES: readonly number[] = (() => {
  const edges: number[] = [];
  const run = (from: number, to: number, step: number) => {
    for (let x = from; x < to; x += step) edges.push(x);
  };
  run(0, 100, 10);
  run(100, 600, 50);
  run(600, 900, 100);
  run(900, 3750, 150);
  edges.push(3750);
  run(3950, 4200, 250);
  run(4200, 10800, 300);
  run(10800, 15000, 600);
  run(15000, 18600, 1200);
  edges.push(18600, 20000, 37500, 75000, 150000, 300000, 450000, 600001);
  return edges;
})();
/** How many buckets there are (one fewer than edges). */
export const BUCKETS = BUCKET_EDGES.length - 1;

/** A timer of the service: its name, its label in a chart, and its size relative to the page load. */
interface TimerKind {
  id: string;
  label: string;
  ratio: number;
  sigma: number;
}

/** The built-in timers: the page load and the navigation-timing ones, sized as real pages are. */
export const STANDARD_TIMERS: readonly TimerKind[] = [
  { id: 'PageLoad', label: 'Page Load Time', ratio: 1, sigma: 0 },
  { id: 'DNS', label: 'DNS', ratio: 0.012, sigma: 1.0 },
  { id: 'TCP', label: 'TCP', ratio: 0.015, sigma: 0.9 },
  { id: 'SSL', label: 'SSL', ratio: 0.02, sigma: 0.8 },
  { id: 'FirstByte', label: 'Back-End Time', ratio: 0.22, sigma: 0.7 },
  { id: 'FirstLastByte', label: 'Front-End Time', ratio: 0.75, sigma: 0.75 },
  { id: 'DomLoad', label: 'DOM Loading', ratio: 0.35, sigma: 0.7 },
  { id: 'DomReady', label: 'DOM Complete', ratio: 0.92, sigma: 0.75 },
  { id: 'FirstPaint', label: 'First Paint', ratio: 0.38, sigma: 0.7 },
  { id: 'FirstContentfulPaint', label: 'First Contentful Paint', ratio: 0.4, sigma: 0.7 },
  { id: 'LargestContentfulPaint', label: 'Largest Contentful Paint', ratio: 0.62, sigma: 0.75 },
  { id: 'TimeToInteractive', label: 'Time to Interactive', ratio: 1.05, sigma: 0.75 },
  { id: 'FirstInputDelay', label: 'First Input Delay', ratio: 0.004, sigma: 1.1 },
];

export interface DimensionValue {
  name: string;
  share: number;
  loadTimeFactor: number;
}

/**
 * The drill-down dimensions, in the order a bucket is split by them. Each has offset
 * streams of its own (keyed by its name), so a dimension added at the end changes no
 * number of a query that does not use it.
 */
export const SPLIT_DIMENSIONS = ['browser', 'country', 'abTest', 'bandwidth', 'isp', 'connectionType', 'deviceType', 'os'] as const;
export type BuiltInDimension = (typeof SPLIT_DIMENSIONS)[number];
/** A custom dimension a fixture declares for its app, by its name; split after the built-in ones, in the order declared. */
export type CustomDimension = `custom:${string}`;
export type SplitDimension = BuiltInDimension | CustomDimension;
export type Dimension = 'pageGroup' | SplitDimension;

/** The key of a custom dimension in a model and a selection. */
export const customDimension = (name: string): CustomDimension => `custom:${name}`;

export const BANDWIDTH_BLOCKS: readonly DimensionValue[] = [
  { name: '0', share: 0.01, loadTimeFactor: 4 },
  { name: '1', share: 0.04, loadTimeFactor: 2.2 },
  { name: '2', share: 0.12, loadTimeFactor: 1.5 },
  { name: '3', share: 0.23, loadTimeFactor: 1.15 },
  { name: '4', share: 0.2, loadTimeFactor: 1 },
  { name: '5', share: 0.33, loadTimeFactor: 0.85 },
  { name: '6', share: 0.07, loadTimeFactor: 0.75 },
];
/** What each bandwidth block means, for the bandwidth chart. */
export const BANDWIDTH_LABELS: Readonly<Record<string, string>> = {
  '0': '< 64 Kbps',
  '1': '64-512 Kbps',
  '2': '512 Kbps-2 Mbps',
  '3': '2-6 Mbps',
  '4': '6-10 Mbps',
  '5': '10-100 Mbps',
  '6': '100-1000 Mbps',
};

export interface Timer {
  /** As the service names it: PageLoad, DNS, ..., CustomTimer0. */
  id: string;
  label: string;
  medianMs: number;
  sigma: number;
}

export interface CustomMetric {
  id: string;
  name: string;
  ratePercent: number;
}

/** A model with every default filled in. */
export interface RumModel {
  domainId: number;
  beaconsPerMinute: number;
  peakHourUtc: number;
  weekendFactor: number;
  pageLoadMedianMs: number;
  pageLoadSigma: number;
  errorRate: number;
  bounceRate: number;
  pageGroups: DimensionValue[];
  /** Every split dimension's values (a custom one the model does not declare has none: look them up through splitDimensions). */
  dimensions: Record<SplitDimension, DimensionValue[]>;
  /** Every split dimension of the model: the built-in ones, then its custom ones (in the order declared). */
  splitDimensions: readonly SplitDimension[];
  timers: Timer[];
  customMetrics: CustomMetric[];
}

const DEFAULT_PAGE_GROUPS = [
  ['Category', 0.34, 1.1],
  ['Product', 0.3, 0.95],
  ['Home', 0.14, 0.8],
  ['Search', 0.08, 1.3],
  ['Account', 0.06, 1],
  ['Checkout', 0.05, 0.9],
  ['Buy', 0.03, 1.2],
] as const;
const DEFAULT_BROWSERS = [
  ['Chrome/120', 0.38, 0.95],
  ['Mobile Safari/17', 0.24, 1.05],
  ['Chrome Mobile/120', 0.14, 1.35],
  ['Safari/17', 0.08, 0.9],
  ['Edge/120', 0.07, 0.95],
  ['Firefox/121', 0.05, 1.05],
  ['Samsung Internet/23', 0.04, 1.4],
] as const;
const DEFAULT_COUNTRIES = [
  ['US', 0.42, 0.95],
  ['GB', 0.12, 0.9],
  ['DE', 0.09, 0.9],
  ['CA', 0.07, 1],
  ['FR', 0.06, 0.95],
  ['IN', 0.06, 1.6],
  ['AU', 0.05, 1.2],
  ['JP', 0.04, 0.85],
  ['BR', 0.04, 1.45],
  ['MX', 0.03, 1.3],
  ['(No Value)', 0.02, 1.1],
] as const;

const DEFAULT_ISPS = [
  ['Comcast Cable', 0.17, 0.9],
  ['AT&T Internet', 0.12, 1],
  ['Verizon Wireless', 0.1, 1.15],
  ['Charter Communications', 0.08, 0.95],
  ['T-Mobile USA', 0.07, 1.25],
  ['British Telecommunications', 0.06, 0.95],
  ['Deutsche Telekom', 0.06, 0.9],
  ['Orange', 0.05, 0.95],
  ['Bharti Airtel', 0.04, 1.6],
  ['Telstra', 0.04, 1.15],
  ['NTT', 0.03, 0.85],
  ['Vivo', 0.03, 1.45],
  ['(No Value)', 0.15, 1.05],
] as const;
/** The effective connection types the browser reports; browsers without the Network Information API report none. */
const DEFAULT_CONNECTION_TYPES = [
  ['4g', 0.58, 0.95],
  ['3g', 0.06, 1.7],
  ['2g', 0.01, 3],
  ['slow-2g', 0.005, 4.5],
  ['(No Value)', 0.345, 1],
] as const;
const DEFAULT_DEVICE_TYPES = [
  ['Desktop', 0.52, 0.9],
  ['Mobile', 0.42, 1.15],
  ['Tablet', 0.06, 1.05],
] as const;
const DEFAULT_OPERATING_SYSTEMS = [
  ['Windows', 0.36, 0.95],
  ['iOS', 0.25, 1.05],
  ['Android', 0.19, 1.35],
  ['Mac OS X', 0.12, 0.88],
  ['Linux', 0.04, 0.95],
  ['Chrome OS', 0.04, 1.1],
] as const;

/** The JavaScript errors of a page, and each one's share of all errors (app-error-summary). */
export const APP_ERRORS: ReadonlyArray<readonly [string, number]> = [
  ["Uncaught TypeError: Cannot read properties of undefined (reading 'length')", 0.24],
  ['Script error.', 0.2],
  ['Uncaught ReferenceError: dataLayer is not defined', 0.12],
  ["TypeError: null is not an object (evaluating 'el.addEventListener')", 0.1],
  ['ResizeObserver loop completed with undelivered notifications.', 0.09],
  ['Uncaught (in promise) TypeError: Failed to fetch', 0.08],
  ["Uncaught SyntaxError: Unexpected token '<'", 0.05],
  ['ChunkLoadError: Loading chunk 482 failed.', 0.05],
  ['Uncaught RangeError: Maximum call stack size exceeded', 0.04],
  ['TypeError: undefined is not a function', 0.03],
];

/** `total` errors split over APP_ERRORS by cumulative rounding: the counts add up to `total` exactly. */
export function appErrorCounts(total: number): Array<{ message: string; count: number }> {
  const out: Array<{ message: string; count: number }> = [];
  let cum = 0;
  let before = 0;
  for (let i = 0; i < APP_ERRORS.length; i++) {
    cum += APP_ERRORS[i][1];
    const upTo = i === APP_ERRORS.length - 1 ? total : round(total * cum);
    out.push({ message: APP_ERRORS[i][0], count: upTo - before });
    before = upTo;
  }
  return out;
}

const values = (rows: ReadonlyArray<readonly [string, number, number]>): DimensionValue[] =>
  rows.map(([name, share, loadTimeFactor]) => ({ name, share, loadTimeFactor }));

/** The shares as given, scaled to add up to 1. */
function normalised(list: DimensionValue[]): DimensionValue[] {
  const total = list.reduce((sum, v) => sum + v.share, 0);
  return list.map((v) => ({ ...v, share: v.share / total }));
}

/**
 * The model of a domain: the fixture's, with every field it leaves out derived from the
 * domain id, so that every domain has traffic of its own size and speed.
 */
export function modelOf(domainId: number, seed: RumModelSeed | undefined): RumModel {
  const u = (key: string) => unit(domainId, 'model', key);
  const pageLoadMedianMs = seed?.pageLoadMedianMs ?? Math.round(1800 + 2200 * u('median'));
  const pageLoadSigma = seed?.pageLoadSigma ?? 0.7 + 0.2 * u('sigma');
  const pick = (given: RumModelSeed['pageGroups'], fallback: DimensionValue[]): DimensionValue[] =>
    normalised(given ? given.map((v) => ({ name: v.name, share: v.share, loadTimeFactor: v.loadTimeFactor ?? 1 })) : fallback);
  let abTests = seed?.abTests?.map((v) => ({ name: v.name, share: v.share, loadTimeFactor: v.loadTimeFactor ?? 1 })) ?? [
    { name: 'Control', share: 0.45, loadTimeFactor: 1 },
    { name: 'Variant-B', share: 0.45, loadTimeFactor: 1.08 },
  ];
  // Beacons outside every test have no value, as the service shows them.
  const tested = abTests.reduce((sum, v) => sum + v.share, 0);
  if (tested < 0.999) abTests = [...abTests, { name: '(No Value)', share: 1 - tested, loadTimeFactor: 1 }];
  const timers: Timer[] = STANDARD_TIMERS.map((t) => ({
    id: t.id,
    label: t.label,
    medianMs: Math.max(1, pageLoadMedianMs * t.ratio),
    sigma: t.id === 'PageLoad' ? pageLoadSigma : t.sigma,
  }));
  const customTimers = seed?.customTimers ?? [{ name: 'Hero Image', medianMs: Math.round(pageLoadMedianMs * 0.7), sigma: 0.6 }];
  customTimers.forEach((t, i) => timers.push({ id: `CustomTimer${i}`, label: t.name, medianMs: t.medianMs, sigma: t.sigma ?? 0.7 }));
  const customMetrics = (seed?.customMetrics ?? [{ name: 'Conversion', ratePercent: 2 + 2 * u('conversion') }]).map((m, i) => ({
    id: `CustomMetric${i}`,
    name: m.name,
    ratePercent: m.ratePercent,
  }));
  const custom = seed?.customDimensions ?? [];
  return {
    domainId,
    beaconsPerMinute: seed?.beaconsPerMinute ?? Math.round(80 + 420 * u('traffic')),
    peakHourUtc: seed?.peakHourUtc ?? 14 + Math.floor(6 * u('peak')),
    weekendFactor: seed?.weekendFactor ?? 0.75,
    pageLoadMedianMs,
    pageLoadSigma,
    errorRate: seed?.errorRate ?? 0.02,
    bounceRate: seed?.bounceRate ?? 0.35,
    pageGroups: pick(seed?.pageGroups, values(DEFAULT_PAGE_GROUPS)),
    dimensions: {
      browser: pick(seed?.browsers, values(DEFAULT_BROWSERS)),
      country: pick(seed?.countries, values(DEFAULT_COUNTRIES)),
      abTest: normalised(abTests),
      bandwidth: BANDWIDTH_BLOCKS.slice(),
      isp: pick(seed?.isps, values(DEFAULT_ISPS)),
      connectionType: pick(seed?.connectionTypes, values(DEFAULT_CONNECTION_TYPES)),
      deviceType: pick(seed?.deviceTypes, values(DEFAULT_DEVICE_TYPES)),
      os: pick(seed?.operatingSystems, values(DEFAULT_OPERATING_SYSTEMS)),
      ...Object.fromEntries(custom.map((d) => [customDimension(d.name), pick(d.values, [])])),
    },
    splitDimensions: [...SPLIT_DIMENSIONS, ...custom.map((d) => customDimension(d.name))],
    timers,
    customMetrics,
  };
}

/** Incidents of one domain with absolute times. */
export interface ActiveIncident {
  start: number;
  end: number;
  /** Index of the page group, or -1 for all of them (and -2 for a page group the model lacks). */
  pageGroup: number;
  loadTimeFactor: number;
  errorFactor: number;
  trafficFactor: number;
}

/** The index of a page group, or -2 for one the model does not have (an incident on it touches nothing). */
function groupIndex(model: RumModel, name: string): number {
  const at = model.pageGroups.findIndex((g) => g.name === name);
  return at < 0 ? -2 : at;
}

export function incidentsOf(model: RumModel, incidents: ReadonlyArray<IncidentSeed & { start: number; end: number }>): ActiveIncident[] {
  return incidents
    .filter((i) => i.domainId === model.domainId)
    .map((i) => ({
      start: i.start,
      end: i.end,
      pageGroup: i.pageGroup === undefined ? -1 : groupIndex(model, i.pageGroup),
      loadTimeFactor: i.loadTimeFactor,
      errorFactor: i.errorFactor,
      trafficFactor: i.trafficFactor,
    }));
}

const MINUTE = 60_000;
const DAY_MINUTES = 1440;

/** mixNumber(h, minute), for a minute in [0, 2^31) in one step per word (its high word is 0, whose key word is 0). */
function mixMinute(h: number, minute: number): number {
  return minute >= 0 && minute < 0x80000000 ? mixWord(mixWord(h, keyWord(minute)), 0) : mixNumber(h, minute);
}

/** Math.round for the non-negative numbers every split rounds. */
const round = (x: number) => Math.floor(x + 0.5);

/** The standard normal CDF (Abramowitz and Stegun 7.1.26; error below 1.5e-7). */
function phi(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/**
 * Which beacons a query keeps: for each dimension, the indexes of the values it keeps
 * (absent: all of them). `empty` keeps none (a value the model does not have).
 */
export interface Selection {
  pageGroup?: readonly number[];
  browser?: readonly number[];
  country?: readonly number[];
  abTest?: readonly number[];
  bandwidth?: readonly number[];
  isp?: readonly number[];
  connectionType?: readonly number[];
  deviceType?: readonly number[];
  os?: readonly number[];
  [custom: CustomDimension]: readonly number[] | undefined;
  empty?: boolean;
}

/** A canonical text of a selection, for cache keys. */
export function selectionKey(s: Selection): string {
  if (s.empty) return 'none';
  const custom = (Object.keys(s) as Dimension[]).filter((d) => d.startsWith('custom:')).sort();
  return ['pageGroup' as const, ...SPLIT_DIMENSIONS, ...custom].map((d) => (s[d] ? `${d}=${s[d]!.join(',')}` : '')).join(';');
}

/** Slots of a block: the buckets, then the error count. */
export const ERRORS = BUCKETS;
export const BLOCK_SIZE = BUCKETS + 1;

/**
 * The generator of one domain: per-minute bucket counts, computed on demand. It holds only
 * small tables (the cumulative distributions per timer, page group and slow-down, and the
 * per-bucket split weights), never samples.
 */
export class RumGenerator {
  /** Cumulative shares of the page groups. */
  private readonly groupCum: Float64Array;
  /** Per timer and split dimension: cumulative weights of the values in each bucket, BUCKETS x (values + 1). */
  private readonly weights = new Map<string, Float64Array>();
  /** Per timer, page group and load-time factor: the cumulative bucket distribution. */
  private readonly cdfs = new Map<string, Float64Array>();

  constructor(
    readonly model: RumModel,
    private readonly incidents: readonly ActiveIncident[],
  ) {
    this.groupCum = cumulative(model.pageGroups.map((g) => g.share));
    this.domainHash = hashState(model.domainId);
    this.trafficHash = hashState(model.domainId, 'traffic');
    this.streams = new Uint32Array(model.splitDimensions.length);
    this.groupWords = Int32Array.from(model.pageGroups, (_, g) => keyWord(g));
  }

  /** The key words of the page groups' indexes (keyWord(g)), for the minutes' hashes. */
  private readonly groupWords: Int32Array;

  /** The hash states after the domain id, and after it and 'traffic': each minute's draws mix only the rest in. */
  private readonly domainHash: number;
  private readonly trafficHash: number;

  /** Beacons in a minute (an index of minutes since the epoch), before any incident. */
  private baseTraffic(minute: number): number {
    const { model } = this;
    const minuteOfDay = ((minute % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
    const daily = this.dailyShape()[minuteOfDay];
    // 1970-01-01 was a Thursday: day 0 is weekday 4.
    const weekday = (Math.floor(minute / DAY_MINUTES) + 4) % 7;
    const weekly = weekday === 0 || weekday === 6 ? model.weekendFactor : 1;
    const noise = Math.max(0.2, 1 + 0.12 * normalOf(mixMinute(this.trafficHash, minute)));
    return model.beaconsPerMinute * daily * weekly * noise;
  }

  /** The daily cycle of the traffic, per minute of the day (worked out once). */
  private dailyShape(): Float64Array {
    if (this.daily) return this.daily;
    const daily = new Float64Array(DAY_MINUTES);
    for (let m = 0; m < DAY_MINUTES; m++) daily[m] = 0.55 + 0.45 * Math.cos((2 * Math.PI * (m / 60 - this.model.peakHourUtc)) / 24);
    return (this.daily = daily);
  }
  private daily: Float64Array | undefined;

  /** The cumulative bucket distribution of a timer in a page group slowed down by `factor`. */
  private cdf(timer: Timer, group: number, factor: number): Float64Array {
    // Most minutes have no incident: their tables are kept per timer without building a key.
    if (factor === 1) {
      let plain = this.plainCdfs.get(timer);
      if (!plain) this.plainCdfs.set(timer, (plain = []));
      return (plain[group] ??= this.cdfFor(timer, group, 1));
    }
    const key = `${timer.id}|${group}|${factor}`;
    let cdf = this.cdfs.get(key);
    if (cdf) return cdf;
    cdf = this.cdfFor(timer, group, factor);
    // Bounded: the factors come from the incidents, of which a store holds a bounded number.
    if (this.cdfs.size > 4096) this.cdfs.clear();
    this.cdfs.set(key, cdf);
    return cdf;
  }

  /** The tables of the minutes without an incident, per timer and page group. */
  private readonly plainCdfs = new Map<Timer, Float64Array[]>();

  private cdfFor(timer: Timer, group: number, factor: number): Float64Array {
    const median = timer.medianMs * this.model.pageGroups[group].loadTimeFactor * factor;
    const logMedian = Math.log(median);
    const cdf = new Float64Array(BUCKETS);
    for (let k = 0; k < BUCKETS; k++) {
      const edge = BUCKET_EDGES[k + 1];
      cdf[k] = k === BUCKETS - 1 ? 1 : phi((Math.log(edge) - logMedian) / timer.sigma);
    }
    return cdf;
  }

  /**
   * The cumulative weights of a dimension's values in each bucket: a value whose beacons
   * are slower than the whole takes more of the slow buckets, so its own median differs.
   */
  private weightsOf(timer: Timer, dimension: SplitDimension): Float64Array {
    const key = `${timer.id}|${dimension}`;
    let w = this.weights.get(key);
    if (w) return w;
    const list = this.model.dimensions[dimension];
    const width = list.length + 1;
    w = new Float64Array(BUCKETS * width);
    const logMedian = Math.log(timer.medianMs);
    for (let k = 0; k < BUCKETS; k++) {
      const mid = (BUCKET_EDGES[k] + BUCKET_EDGES[k + 1]) / 2;
      const z = (Math.log(Math.max(mid, 1)) - logMedian) / timer.sigma;
      let total = 0;
      for (let v = 0; v < list.length; v++) {
        // A log-normal shifted by ln(factor): the density ratio at z is exp(z*s - s*s/2), s = ln(factor)/sigma.
        const s = Math.log(list[v].loadTimeFactor) / timer.sigma;
        total += list[v].share * Math.exp(Math.max(-30, Math.min(30, z * s - (s * s) / 2)));
      }
      let cum = 0;
      w[k * width] = 0;
      for (let v = 0; v < list.length; v++) {
        const s = Math.log(list[v].loadTimeFactor) / timer.sigma;
        cum += (list[v].share * Math.exp(Math.max(-30, Math.min(30, z * s - (s * s) / 2)))) / total;
        w[k * width + v + 1] = v === list.length - 1 ? 1 : cum;
      }
    }
    this.weights.set(key, w);
    return w;
  }

  /** The incidents active in a minute, refilled by beaconsIn (every caller is synchronous). */
  private readonly active: ActiveIncident[] = [];

  /** The beacons of a minute, its incidents' traffic factors applied; `active` is refilled with those incidents. */
  private beaconsIn(minute: number, active: ActiveIncident[]): number {
    const start = minute * MINUTE;
    let traffic = this.baseTraffic(minute);
    if (active.length) active.length = 0;
    for (const i of this.incidents) {
      if (start >= i.start && start < i.end) {
        active.push(i);
        traffic *= i.trafficFactor;
      }
    }
    return round(traffic);
  }

  /** The JavaScript errors of `inGroup` beacons of page group g, raised by the incidents active on it. */
  private errorsOf(inGroup: number, active: readonly ActiveIncident[], g: number): number {
    return round(inGroup * this.model.errorRate * slowdown(active, g, 'errorFactor'));
  }

  /**
   * A sum of many minutes, for a selection that splits no beacon by a dimension (page groups
   * alone): exactly what addMinute adds for each of them, worked out from each minute's
   * beacons per page group instead of from its buckets. Undefined for a selection that
   * splits (those minutes are added one by one).
   */
  batch(timer: Timer, selection: Selection, by?: Dimension): MinuteBatch | undefined {
    if (!batches(selection, by)) return undefined;
    const size = (by === 'pageGroup' ? this.model.pageGroups.length : 1) * BLOCK_SIZE;
    const plain = this.model.pageGroups.map((_, g) => this.cdf(timer, g, 1));
    // Bounded: at MAX_LIFTS the next batch starts new tables (a batch under way keeps reading its own).
    if (this.lifts.count >= MAX_LIFTS) this.lifts = new LiftTables();
    return new MinuteBatch(timer, selection, by === 'pageGroup', size, this.lifts, plain, this.model.errorRate, this.groupCum, this.groupWords);
  }

  /** The lifts of each bucket distribution and count of beacons, shared by the batches of every query (a series of 93 daily points makes them once). */
  private lifts = new LiftTables();

  /**
   * Adds the minutes [from, to) to a batch: for each page group, the beacons and the rounding
   * offset of each minute (a minute's buckets follow from those two alone), and its errors.
   * A minute without an incident finds what its count of beacons does in every page group
   * in one look-up (MinuteBatch.plainCount) and adds one to the rank its hash reaches in
   * each; a minute with one goes page group by page group.
   */
  addToBatch(batch: MinuteBatch, from: number, to: number): void {
    const active = this.active;
    // Bounded by the range, which the query's bounds bound.
    for (let minute = from; minute < to; minute++) {
      const n = this.beaconsIn(minute, active);
      if (n === 0) continue;
      const minuteHash = mixMinute(this.domainHash, minute);
      if (active.length !== 0) this.addActiveToBatch(batch, n, minuteHash);
      else batch.addPlain(n, minuteHash);
    }
  }

  /** Adds one minute with incidents (in `active`) of `n` beacons to a batch, page group by page group. */
  private addActiveToBatch(batch: MinuteBatch, n: number, minuteHash: number): void {
    const active = this.active;
    const kept = batch.selection.pageGroup;
    let before = 0;
    for (let g = 0; g < this.model.pageGroups.length; g++) {
      const upTo = round(n * this.groupCum[g + 1]);
      const inGroup = upTo - before;
      before = upTo;
      if (inGroup === 0 || (kept && !kept.includes(g))) continue;
      const hash = finishHash(mixNumber(minuteHash, g));
      const base = batch.baseOf(g);
      const cdf = this.cdf(batch.timer, g, slowdown(active, g, 'loadTimeFactor'));
      batch.direct[base + BUCKETS] += this.errorsOf(inGroup, active, g);
      if (inGroup > MAX_BATCH_COUNT) {
        addBuckets(batch.direct, base, cdf, inGroup, hash / TWO_32);
        continue;
      }
      const slot = batch.slotOf(base, cdf, inGroup);
      batch.ranks[slot * RANKS + batch.reached(slot, hash)]++;
    }
  }

  /**
   * Adds one minute's bucket counts and errors, as the selection keeps them, to `into`. With
   * `by`, `into` holds one block per value of that dimension (BLOCK_SIZE apart), and each
   * value's part goes to its own block: exactly what a selection of that one value adds, for
   * all values in one pass. Each split dimension's rounding offsets are a mulberry32 stream
   * per minute and page group, one draw per bucket in order (the errors last); its state is a
   * counter, so the k-th draw is worked out directly and a bucket without beacons costs no draw.
   */
  addMinute(into: Float64Array, minute: number, timer: Timer, selection: Selection, by?: Dimension): void {
    if (selection.empty) return;
    const active = this.active;
    const n = this.beaconsIn(minute, active);
    if (n === 0) return;
    const { splits, byIndex } = this.splitsOf(timer, selection, by);
    const minuteHash = mixMinute(this.domainHash, minute);
    const seeds = this.streams;
    let before = 0;
    for (let g = 0; g < this.model.pageGroups.length; g++) {
      const upTo = round(n * this.groupCum[g + 1]);
      const inGroup = upTo - before;
      before = upTo;
      if (inGroup === 0 || (selection.pageGroup && !selection.pageGroup.includes(g))) continue;
      const base = by === 'pageGroup' ? g * BLOCK_SIZE : 0;
      const cdf = this.cdf(timer, g, slowdown(active, g, 'loadTimeFactor'));
      const groupHash = mixNumber(minuteHash, g);
      const u0 = finishHash(groupHash) / 0x100000000;
      if (splits.length === 0) {
        // No split: the buckets and the errors as they are (the common case, kept tight).
        addBuckets(into, base, cdf, inGroup, u0);
        into[base + BUCKETS] += this.errorsOf(inGroup, active, g);
        continue;
      }
      // The seed of each split dimension's stream: finishHash(mixKey(groupHash, its name)).
      for (let s = 0; s < splits.length; s++) {
        const words = splits[s].words;
        let h = groupHash;
        for (let i = 0; i < words.length; i++) h = mixWord(h, words[i]);
        seeds[s] = finishHash(h);
      }
      let below = 0;
      for (let k = 0; k <= BUCKETS; k++) {
        // Bucket k's beacons, and at k = BUCKETS the errors (split by the plain shares).
        let c: number;
        if (k < BUCKETS) {
          const upToK = Math.floor(inGroup * cdf[k] + u0);
          c = upToK - below;
          below = upToK;
        } else {
          c = this.errorsOf(inGroup, active, g);
        }
        if (c === 0) continue;
        const bucket = k < BUCKETS;
        const row = bucket ? k : 0;
        const end = byIndex < 0 ? splits.length : byIndex;
        for (let s = 0; s < end && c > 0; s++) {
          const split = splits[s];
          c = keep(c, row, bucket ? split.weights : split.shares, split.width, split.kept, drawAt(seeds[s], k + 1));
        }
        if (byIndex < 0) {
          into[base + k] += c;
          continue;
        }
        if (c === 0) continue;
        const { width, kept } = splits[byIndex];
        const w = bucket ? splits[byIndex].weights : splits[byIndex].shares;
        const u = drawAt(seeds[byIndex], k + 1);
        const at = row * width;
        // The lower edge of value v is the upper edge of v - 1: kept in order (all values, as a breakdown keeps them), each costs one floor.
        let lastV = -2;
        let lastUpper = 0;
        for (let i = 0; i < kept.length; i++) {
          const v = kept[i];
          const lower = v === lastV + 1 ? lastUpper : Math.floor(c * w[at + v] + u);
          lastUpper = Math.floor(c * w[at + v + 1] + u);
          lastV = v;
          let part = lastUpper - lower;
          for (let s = byIndex + 1; s < splits.length && part > 0; s++) {
            const split = splits[s];
            part = keep(part, row, bucket ? split.weights : split.shares, split.width, split.kept, drawAt(seeds[s], k + 1));
          }
          into[v * BLOCK_SIZE + k] += part;
        }
      }
    }
  }

  /** The split dimensions a selection (and breakdown) uses, in the model's order, and the breakdown's index among them (-1: none); the last one is kept. */
  private splitsOf(timer: Timer, selection: Selection, by: Dimension | undefined): SplitsOf {
    const last = this.lastSplits;
    if (last && last.timer === timer && last.selection === selection && last.by === by) return last;
    const splits: Split[] = [];
    let byIndex = -1;
    for (const d of this.model.splitDimensions) {
      const width = this.model.dimensions[d].length + 1;
      let kept = selection[d];
      if (d === by) {
        kept ??= Array.from({ length: width - 1 }, (_, v) => v);
        byIndex = splits.length;
      }
      if (!kept) continue;
      const words = new Int32Array(d.length + 1);
      for (let i = 0; i < d.length; i++) words[i] = keyWord(d.charCodeAt(i));
      words[d.length] = keyWord(d.length);
      splits.push({ weights: this.weightsOf(timer, d), shares: this.sharesOf(d), width, kept: Int32Array.from(kept), words });
    }
    return (this.lastSplits = { timer, selection, by, splits, byIndex });
  }

  /** The splits of the selection asked for last (a query asks for the same one minute after minute). */
  private lastSplits: SplitsOf | undefined;

  private readonly shareTables = new Map<SplitDimension, Float64Array>();
  /** The seeds of the offset streams of one minute and page group (mulberry32), one per split dimension. */
  private readonly streams: Uint32Array;

  /** The plain cumulative shares of a dimension (for counts with no load time, as errors). */
  private sharesOf(d: SplitDimension): Float64Array {
    let t = this.shareTables.get(d);
    if (!t) this.shareTables.set(d, (t = cumulative(this.model.dimensions[d].map((v) => v.share))));
    return t;
  }
}

/** One split dimension of a selection: its cumulative weights per bucket and plain shares, the values kept, and the key words of its name. */
interface Split {
  weights: Float64Array;
  shares: Float64Array;
  width: number;
  kept: Int32Array;
  /** keyWord of each character of the dimension's name, then of its length (mixKey of the name, word by word). */
  words: Int32Array;
}

/** The splits of one timer, selection and breakdown (RumGenerator.splitsOf). */
interface SplitsOf {
  timer: Timer;
  selection: Selection;
  by: Dimension | undefined;
  splits: Split[];
  byIndex: number;
}

/**
 * The part of `count` beacons of bucket k that the selection keeps of one dimension. The
 * cumulative split rounds with an offset `u` in [0, 1) drawn for this minute, page group,
 * bucket and dimension (the same whichever values are kept): the parts of every value add
 * up to `count` exactly, and small counts are not all handed to one value.
 */
function keep(count: number, k: number, weights: Float64Array, width: number, kept: Int32Array, u: number): number {
  let part = 0;
  const at = k * width;
  for (let i = 0; i < kept.length; i++) {
    const v = kept[i];
    part += Math.floor(count * weights[at + v + 1] + u) - Math.floor(count * weights[at + v] + u);
  }
  return part;
}

/** The i-th draw (from 1) in [0, 1) of the mulberry32 stream of `seed`: its state after i steps is seed + i * 0x6d2b79f5. */
function drawAt(seed: number, i: number): number {
  const a = (seed + Math.imul(i, 0x6d2b79f5)) >>> 0;
  let t = Math.imul(a ^ (a >>> 15), a | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** Whether the minutes of a selection (and breakdown) can be summed by a batch: no dimension splits their beacons. */
export function batches(selection: Selection, by?: Dimension): boolean {
  if (selection.empty || (by !== undefined && by !== 'pageGroup')) return false;
  for (const d of Object.keys(selection)) if (d !== 'pageGroup' && d !== 'empty' && selection[d as SplitDimension]) return false;
  return true;
}

/** The product of a factor of the incidents active on page group g (1 without any). */
function slowdown(active: readonly ActiveIncident[], g: number, factor: 'loadTimeFactor' | 'errorFactor'): number {
  let product = 1;
  for (const i of active) if (i.pageGroup === -1 || i.pageGroup === g) product *= i[factor];
  return product;
}

/** Adds the buckets of `n` beacons of one minute and page group, rounded with offset `u`, to `into` at `base`. */
function addBuckets(into: Float64Array, base: number, cdf: Float64Array, n: number, u: number): void {
  let below = 0;
  for (let k = 0; k < BUCKETS; k++) {
    const upToK = Math.floor(n * cdf[k] + u);
    into[base + k] += upToK - below;
    below = upToK;
  }
}

const TWO_32 = 0x100000000;

/**
 * What a count of beacons `n` in one bucket distribution makes of a minute's offset (its
 * lifts). Bucket k of a minute holds up to floor(n * cdf[k] + u) beacons, u = h / 2^32 its
 * offset: that is floor(n * cdf[k]) (`floors`), or one more when h reaches the bucket's least
 * lifting hash. `below` holds those hashes in order (each less one): a minute's rank among
 * them (how many it reaches) says which buckets it lifts, and bucket k is lifted by the ranks
 * from `from[k]` on.
 * `index[b]` is the rank of the hashes whose top byte is b, but for the lifting hashes of their
 * own byte (a third of one on average): a minute's rank is a look-up and a step or two.
 *
 * The lifts of every (distribution, count) a world meets are kept in four flat tables, filled
 * in place: floors, below and from BUCKETS apart, index 256 apart, found by their number.
 * Nothing is ever taken out: a generator that has kept MAX_LIFTS starts new tables for its next
 * batch, and a batch under way reads the ones it started with to its end.
 */
class LiftTables {
  /** floor(n * cdf[k]): at most n, at most MAX_BATCH_COUNT. */
  floors = new Uint16Array(256 * BUCKETS);
  /** The least lifting hashes in order, each less one (2^32, no hash lifts, is 2^32 - 1): a hash h reaches one below it. */
  below = new Uint32Array(256 * BUCKETS);
  from = new Uint8Array(256 * BUCKETS);
  index = new Uint8Array(256 * 256);
  /** How many lifts the tables hold. */
  count = 0;
  /**
   * Per bucket distribution: per count of beacons, its lifts' number. A map, not a table of
   * every count: a world with many incidents meets thousands of slowed-down distributions.
   */
  private readonly ids = new Map<Float64Array, Map<number, number>>();
  /** Each bucket's least lifting hash times 128 plus the bucket: sorted, they give the order and each bucket's place in it. */
  private readonly keys = new Float64Array(BUCKETS);

  /** The number of the lifts of `n` beacons of a distribution, made if they are not kept. */
  idOf(cdf: Float64Array, n: number): number {
    let byCount = this.ids.get(cdf);
    const known = byCount?.get(n);
    if (known !== undefined) return known;
    if (!byCount) this.ids.set(cdf, (byCount = new Map()));
    const id = this.count++;
    if (id * BUCKETS === this.floors.length) this.grow();
    this.make(id, cdf, n);
    byCount.set(n, id);
    return id;
  }

  private grow(): void {
    this.floors = doubled(this.floors);
    this.below = doubled(this.below);
    this.from = doubled(this.from);
    this.index = doubled(this.index);
  }

  private make(id: number, cdf: Float64Array, n: number): void {
    const at = id * BUCKETS;
    const { floors, below, from, keys } = this;
    for (let k = 0; k < BUCKETS; k++) {
      const x = n * cdf[k];
      const floor = Math.floor(x);
      floors[at + k] = floor;
      // At most 2^39 + 127 (BUCKETS is under 128): exact.
      keys[k] = firstLift(x, floor) * 128 + k;
    }
    keys.sort();
    // Bucket k is lifted from the rank of its hash on: the first place of that hash among equals, plus one.
    const index = this.index;
    const byte = id * 256;
    let b = 0;
    for (let r = 0, first = 0, before = -1; r < BUCKETS; r++) {
      const lift = Math.floor(keys[r] / 128);
      if (lift !== before) first = r;
      before = lift;
      from[at + keys[r] - lift * 128] = first + 1;
      below[at + r] = lift - 1;
      // The rank of the hashes whose top byte is b: the lifts below b * 2^24, one walk up the sorted lifts.
      for (; b < 256 && b * 0x1000000 <= lift; b++) index[byte + b] = r;
    }
    for (; b < 256; b++) index[byte + b] = BUCKETS;
  }
}

/** A copy of a table at twice its length (the rest zero). */
function doubled<T extends Float64Array | Int32Array | Uint8Array | Uint16Array | Uint32Array>(a: T): T {
  const b = new (a.constructor as new (length: number) => T)(a.length * 2);
  b.set(a);
  return b;
}

/** The least 32-bit hash h with floor(x + h / 2^32) above `floor` (floor(x)), or 2^32 if none: by bisection near the exact value. */
function firstLift(x: number, floor: number): number {
  // Nearly always the exact value: it lifts and the hash below it does not (checked, so exact either way).
  const guess = Math.ceil((floor + 1 - x) * TWO_32);
  if (guess > 0 && guess < TWO_32 && Math.floor(x + guess / TWO_32) > floor && !(Math.floor(x + (guess - 1) / TWO_32) > floor)) return guess;
  let hi = Math.min(TWO_32, Math.max(0, Math.ceil((floor + 1 - x) * TWO_32) + 2));
  let lo = Math.max(0, hi - 4);
  // lifts(h): h >= TWO_32 || Math.floor(x + h / TWO_32) > floor, written out (no closure per call).
  if (!(hi >= TWO_32 || Math.floor(x + hi / TWO_32) > floor)) hi = TWO_32;
  if (lo >= TWO_32 || Math.floor(x + lo / TWO_32) > floor) lo = 0;
  // The least lifting hash lies in [lo, hi]; 32 halvings at most.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid >= TWO_32 || Math.floor(x + mid / TWO_32) > floor) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The most lifts a generator keeps. */
const MAX_LIFTS = 2048;

/**
 * The largest count of beacons in a minute and page group a batch counts by; larger ones
 * (rare: a model of some 15,000 beacons a minute and more) go minute by minute.
 */
const MAX_BATCH_COUNT = 2048;

/** The most minutes a batch keeps before it counts them: 16 days (the store lets other requests in after as many). */
const PENDING = 16 * DAY_MINUTES;

/** Slots of a batch's rank table per (bucket distribution, count of beacons): the ranks 0 to BUCKETS. */
const RANKS = BUCKETS + 1;

/**
 * What a minute without an incident does in a batch, by its count of beacons n (all page
 * groups together): per page group, the slot its beacons are counted in (-1: none kept or
 * none there; -2: more than MAX_BATCH_COUNT, added bucket by bucket), and how many minutes
 * had this n (their errors are the same for each, added once at the end).
 */
interface PlainCount {
  slots: Int32Array;
  inGroup: Int32Array;
  minutes: number;
}

/**
 * Minutes gathered for one sum (RumGenerator.batch). Per bucket distribution (a page group,
 * slowed down or not) and count of beacons n, it counts the minutes by their rank among the
 * least lifting hashes (LiftTables): over m minutes sharing n, bucket k sums to m times
 * floor(n * cdf[k]) plus the minutes that lift it, the same integers as minute by minute.
 * A minute costs a look-up among 80 numbers instead of 80 buckets, and the tables are
 * made once per count of beacons (a few hundred in 93 days) instead of once per minute.
 * Each (distribution, count) is a slot of one flat table of ranks; a minute without an
 * incident finds the slots of all its page groups at once from its total count of beacons.
 */
export class MinuteBatch {
  /** Per bucket distribution: per count of beacons, its slot. */
  private readonly slotsByCdf = new Map<Float64Array, { base: number; byCount: number[] }>();
  /** Per slot: the block (page group) its beacons go to. */
  private readonly slotBase: number[] = [];
  /** Per slot: the number of its lifts in the tables (grown by doubling). */
  private slotLift = new Int32Array(64);
  /**
   * The minutes per slot and rank, RANKS apart (grown by doubling). Bounded: a slot is a
   * distribution and a count of at most MAX_BATCH_COUNT beacons met in the range (538 in 93
   * days of the bench's model), and the batch lives for one run of days or hours of one query.
   */
  ranks = new Int32Array(64 * RANKS);
  /** Minutes without an incident, by their count of beacons. */
  readonly plain: Array<PlainCount | undefined> = [];
  /** The errors of minutes with an incident, and the buckets of minutes with more than MAX_BATCH_COUNT beacons in a page group. */
  readonly direct: Float64Array;

  constructor(
    readonly timer: Timer,
    readonly selection: Selection,
    /** One block per page group (a breakdown by page group), BLOCK_SIZE apart. */
    readonly byGroup: boolean,
    size: number,
    private readonly lifts: LiftTables,
    /** The page groups' plain distributions (no incident), and the model's error rate. */
    readonly plainCdfs: readonly Float64Array[],
    private readonly errorRate: number,
    /** The page groups' cumulative shares, and the key words of their indexes (for the minutes' hashes). */
    private readonly groupCum: Float64Array,
    private readonly groupWords: Int32Array,
  ) {
    this.direct = new Float64Array(size);
  }

  /**
   * Minutes without an incident not yet counted: their counts of beacons and hashes. They are
   * counted PENDING at a time, ordered by their count of beacons, so that the tables of one
   * count (a few KiB) serve all its minutes at once: in the order of time, every minute
   * reached for other tables in some 600 KiB, and waited on memory for most of its time.
   */
  private pendingCount = new Int32Array(0);
  private pendingHash = new Int32Array(0);
  private pending = 0;

  /** Adds a minute without an incident, of `n` beacons and hash `minuteHash` (mixMinute). */
  addPlain(n: number, minuteHash: number): void {
    if (this.pending === this.pendingCount.length) {
      // Grown as minutes come (a batch of one hour keeps 60), up to PENDING; then counted.
      if (this.pending === PENDING) this.countPending();
      else {
        const size = Math.min(PENDING, Math.max(60, this.pending * 2));
        const counts = new Int32Array(size);
        counts.set(this.pendingCount);
        const hashes = new Int32Array(size);
        hashes.set(this.pendingHash);
        this.pendingCount = counts;
        this.pendingHash = hashes;
      }
    }
    this.pendingCount[this.pending] = n;
    this.pendingHash[this.pending++] = minuteHash;
  }

  /** Counts the pending minutes, ordered by their count of beacons (a counting sort). */
  private countPending(): void {
    const total = this.pending;
    this.pending = 0;
    if (total === 0) return;
    const { pendingCount, pendingHash } = this;
    let least = pendingCount[0];
    let most = least;
    for (let i = 1; i < total; i++) {
      const n = pendingCount[i];
      if (n < least) least = n;
      else if (n > most) most = n;
    }
    // Bounded: counts of beacons of one model's minutes lie within PENDING of each other but
    // for a model of tens of thousands of beacons a minute, whose minutes are taken in order.
    if (most - least >= PENDING) {
      for (let i = 0; i < total; i++) this.countMinutes(pendingCount[i], pendingHash, i, i + 1);
      return;
    }
    const starts = new Int32Array(most - least + 2);
    for (let i = 0; i < total; i++) starts[pendingCount[i] - least + 1]++;
    for (let c = 1; c < starts.length; c++) starts[c] += starts[c - 1];
    const ordered = new Int32Array(total);
    const next = starts.slice();
    for (let i = 0; i < total; i++) ordered[next[pendingCount[i] - least]++] = pendingHash[i];
    for (let c = 0; c + 1 < starts.length; c++) if (starts[c + 1] > starts[c]) this.countMinutes(least + c, ordered, starts[c], starts[c + 1]);
  }

  /** Counts the minutes of `n` beacons whose hashes are hashes[from..to), page group by page group. */
  private countMinutes(n: number, hashes: Int32Array, from: number, to: number): void {
    const count = this.plainCount(n, this.groupCum);
    count.minutes += to - from;
    const { slots } = count;
    const ranks = this.ranks;
    for (let g = 0; g < slots.length; g++) {
      const slot = slots[g];
      if (slot === -1) continue;
      const word = this.groupWords[g];
      for (let i = from; i < to; i++) {
        // finishHash(mixNumber(minuteHash, g)): g's key word, then the high word of g (0).
        const hash = finishHash(mixWord(mixWord(hashes[i], word), 0));
        if (slot === -2) addBuckets(this.direct, this.baseOf(g), this.plainCdfs[g], count.inGroup[g], hash / TWO_32);
        else ranks[slot * RANKS + this.reached(slot, hash)]++;
      }
    }
  }

  /** The block of page group g. */
  baseOf(g: number): number {
    return this.byGroup ? g * BLOCK_SIZE : 0;
  }

  /** The slot of `n` beacons of a bucket distribution, whose beacons go to the block at `base`. */
  slotOf(base: number, cdf: Float64Array, n: number): number {
    let table = this.slotsByCdf.get(cdf);
    if (!table) this.slotsByCdf.set(cdf, (table = { base, byCount: [] }));
    let slot = table.byCount[n];
    if (slot !== undefined) return slot;
    slot = this.slotBase.length;
    this.slotBase.push(base);
    if (slot === this.slotLift.length) {
      this.slotLift = doubled(this.slotLift);
      this.ranks = doubled(this.ranks);
    }
    this.slotLift[slot] = this.lifts.idOf(cdf, n);
    return (table.byCount[n] = slot);
  }

  /** How many of a slot's least lifting hashes a minute's hash reaches (its rank among them). */
  reached(slot: number, hash: number): number {
    const id = this.slotLift[slot];
    const at = id * BUCKETS;
    const end = at + BUCKETS;
    const { below, index } = this.lifts;
    let p = at + index[id * 256 + (hash >>> 24)];
    // Bounded by the buckets.
    while (p < end && below[p] < hash) p++;
    return p - at;
  }

  /** What a minute without an incident and with `n` beacons does, per page group (cumulative shares `groupCum`). */
  plainCount(n: number, groupCum: Float64Array): PlainCount {
    let count = this.plain[n];
    if (count) return count;
    const groups = this.plainCdfs.length;
    const kept = this.selection.pageGroup;
    const slots = new Int32Array(groups);
    const inGroup = new Int32Array(groups);
    let before = 0;
    for (let g = 0; g < groups; g++) {
      const upTo = round(n * groupCum[g + 1]);
      inGroup[g] = upTo - before;
      before = upTo;
      if (inGroup[g] === 0 || (kept && !kept.includes(g))) slots[g] = -1;
      else slots[g] = inGroup[g] > MAX_BATCH_COUNT ? -2 : this.slotOf(this.baseOf(g), this.plainCdfs[g], inGroup[g]);
    }
    return (this.plain[n] = count = { slots, inGroup, minutes: 0 });
  }

  /** Adds the bucket counts and errors of every minute gathered to `into`. */
  sumInto(into: Float64Array): void {
    this.countPending();
    for (let k = 0; k < this.direct.length; k++) into[k] += this.direct[k];
    for (const count of this.plain) {
      if (!count || count.minutes === 0) continue;
      for (let g = 0; g < count.slots.length; g++) {
        if (count.slots[g] !== -1) into[this.baseOf(g) + BUCKETS] += count.minutes * round(count.inGroup[g] * this.errorRate);
      }
    }
    const above = new Float64Array(RANKS + 1);
    const ranks = this.ranks;
    for (let slot = 0; slot < this.slotBase.length; slot++) {
      const base = this.slotBase[slot];
      const lifted = this.slotLift[slot] * BUCKETS;
      const { floors, from } = this.lifts;
      const at = slot * RANKS;
      // above[r]: the minutes of rank r or more.
      for (let r = BUCKETS; r >= 0; r--) above[r] = above[r + 1] + ranks[at + r];
      const minutes = above[0];
      if (minutes === 0) continue;
      let below = 0;
      for (let k = 0; k < BUCKETS; k++) {
        const upToK = minutes * floors[lifted + k] + above[from[lifted + k]];
        into[base + k] += upToK - below;
        below = upToK;
      }
    }
  }
}

function cumulative(shares: number[]): Float64Array {
  const out = new Float64Array(shares.length + 1);
  let sum = 0;
  for (let i = 0; i < shares.length; i++) {
    sum += shares[i];
    out[i + 1] = i === shares.length - 1 ? 1 : sum;
  }
  return out;
}

/** What a block of buckets says: its count, percentiles and margin of error. */
export interface Stats {
  n: number;
  /** The percentile asked for (the median by default). */
  median: number;
  p95: number;
  p98: number;
  /** 95% margin of error of the mean, in ms. */
  moe: number;
}

/** The value below which `fraction` of the beacons of a block lie, interpolated in its bucket. */
export function percentileOf(block: Float64Array, n: number, fraction: number): number {
  const target = fraction * n;
  let cum = 0;
  for (let k = 0; k < BUCKETS; k++) {
    const c = block[k];
    if (c > 0 && cum + c >= target) {
      const lo = BUCKET_EDGES[k];
      const hi = BUCKET_EDGES[k + 1];
      return Math.round(lo + ((hi - lo) * (target - cum)) / c);
    }
    cum += c;
  }
  return BUCKET_EDGES[BUCKETS];
}

export function countOf(block: Float64Array): number {
  let n = 0;
  for (let k = 0; k < BUCKETS; k++) n += block[k];
  return n;
}

export function statsOf(block: Float64Array, percentile = 50): Stats {
  const n = countOf(block);
  if (n === 0) return { n: 0, median: 0, p95: 0, p98: 0, moe: 0 };
  let sum = 0;
  for (let k = 0; k < BUCKETS; k++) sum += block[k] * ((BUCKET_EDGES[k] + BUCKET_EDGES[k + 1]) / 2);
  const mean = sum / n;
  let squares = 0;
  for (let k = 0; k < BUCKETS; k++) {
    const d = (BUCKET_EDGES[k] + BUCKET_EDGES[k + 1]) / 2 - mean;
    squares += block[k] * d * d;
  }
  const moe = n > 1 ? 1.96 * Math.sqrt(squares / (n - 1) / n) : 0;
  return { n, median: percentileOf(block, n, percentile / 100), p95: percentileOf(block, n, 0.95), p98: percentileOf(block, n, 0.98), moe };
}

/** The bounce rate of a beacon loaded in `ms`, given the rate at the median: slower pages bounce more. */
export function bounceAt(model: RumModel, ms: number): number {
  const r = model.bounceRate * Math.pow(Math.max(ms, 50) / model.pageLoadMedianMs, 0.45);
  return Math.min(0.97, r);
}

/** A custom metric's rate (percent) at a load time: it falls as pages get slower. */
export function metricAt(metric: CustomMetric, model: RumModel, ms: number): number {
  return metric.ratePercent * Math.pow(model.pageLoadMedianMs / Math.max(ms, 50), 0.6);
}

/** The share of beacons that start a session. */
export const SESSIONS_PER_BEACON = 0.3;
