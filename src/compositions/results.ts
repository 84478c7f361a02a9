/**
 * What a run shows, generated from its composition's model without a single per-request
 * sample. Play time is cut into minutes; for each minute, track and collection the number of
 * executions follows from the virtual users running (the ramp) and the time one iteration of
 * the clip takes, the errors from the error rate, and the durations are a histogram over fixed
 * bins filled from the collection's log-normal distribution. Every total, average, deviation
 * and percentile is read off those same histograms, so they agree with each other. Each number
 * is a pure function of (seed, run, track, collection, minute) through core/random.ts: the same
 * seed, commands and emulated times give the same results, and a read costs O(minutes) at
 * most, minutes already played being folded once and kept.
 */
import { hash32, normal, unit, type Key } from '../core/random.js';
import type { SlicedWork } from '../core/slices.js';
import type { CompositionSeed } from './schemas.js';

export const MINUTE_MS = 60_000;
/** Derived answers kept per second of play time. */
const MEMO_KEYS = 16;

/** Bin k holds durations in [10^(k/BINS_PER_DECADE), 10^((k+1)/BINS_PER_DECADE)) ms: about 6 % wide. */
const BINS_PER_DECADE = 40;
const BIN_COUNT = 6 * BINS_PER_DECADE; // up to 1,000,000 ms
const BIN_MIDS = Float64Array.from({ length: BIN_COUNT }, (_, k) => 10 ** ((k + 0.5) / BINS_PER_DECADE));
const BIN_EDGES_LN = Float64Array.from({ length: BIN_COUNT + 1 }, (_, k) => Math.log(10 ** (k / BINS_PER_DECADE)));
const binMid = (k: number) => BIN_MIDS[k];
const binOf = (ms: number) => Math.min(BIN_COUNT - 1, Math.max(0, Math.floor(Math.log10(Math.max(ms, 1)) * BINS_PER_DECADE)));

/** Bytes a message sends and receives (a fixed size: the model has no payloads). */
const BYTES_SENT = 650;
const BYTES_RECEIVED = 18_500;

/** The error text of failures a collection's model does not name. */
export const DEFAULT_ERROR = 'HTTP 500 Internal Server Error';

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26; error below 1.5e-7). */
function phi(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + y) : 0.5 * (1 - y);
}

/** Splits `n` into integer shares proportional to `weights` (largest remainder, ties to the lower index). */
function apportion(n: number, weights: readonly number[], into: Float64Array | number[], offset = 0): void {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (n <= 0 || sum <= 0) return;
  const shares = weights.map((w) => (n * w) / sum);
  let given = 0;
  const floors = shares.map((s) => Math.floor(s));
  for (const f of floors) given += f;
  const order = shares.map((s, i) => ({ r: s - floors[i], i })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (let j = 0; j < n - given; j++) floors[order[j % order.length].i]++;
  for (let i = 0; i < floors.length; i++) into[offset + i] += floors[i];
}

/** One collection of one track, as the generator sees it. */
interface Series {
  track: number;
  index: number;
  trackName: string;
  clip: string;
  name: string;
  type: 'transaction' | 'page';
  medianMs: number;
  sigma: number;
  errorRate: number;
  messages: number;
  errorTexts: string[];
  errorWeights: number[];
  /** Virtual users, ramp and iteration length of its track. */
  users: number;
  rampMs: number;
  iterationMs: number;
}

/** Running totals of one series. */
export interface Totals {
  series: Series;
  count: number;
  errors: number;
  /** Executions per duration bin. */
  histogram: Float64Array;
  /** Errors per message of the model (errorTexts order). */
  errorsByText: number[];
}

/** The integral of the active virtual users over play time [a, b] (VU·ms), for a linear ramp. */
function userMs(users: number, rampMs: number, a: number, b: number): number {
  if (b <= a) return 0;
  if (rampMs <= 0) return users * (b - a);
  const ramped = (x: number) => (x <= rampMs ? (users * x * x) / (2 * rampMs) : (users * rampMs) / 2 + users * (x - rampMs));
  return ramped(b) - ramped(a);
}

/** Active virtual users at play time `t`. */
export function activeUsers(comp: CompositionSeed, t: number): number {
  let n = 0;
  for (const track of comp.tracks) n += Math.round(track.rampUpMs > 0 ? track.virtualUsers * Math.min(1, t / track.rampUpMs) : track.virtualUsers);
  return n;
}

export interface RunKey {
  seed: Key;
  run: number;
  errorFactor: number;
}

/**
 * The generated data of one run. `at(played)` gives the totals after `played` ms of play
 * time; minutes wholly played are folded into the kept totals once, by `fold` in slices
 * before a read, or by the read itself.
 */
export class RunData {
  private readonly series: Series[];
  private readonly folded: Totals[];
  /** Minutes of play time folded into `folded`, by series. */
  private readonly foldedTo: number[];

  constructor(
    private readonly comp: CompositionSeed,
    private readonly key: RunKey,
  ) {
    this.series = comp.tracks.flatMap((track, t) => {
      const iterationMs = track.collections.reduce((sum, c) => sum + c.medianMs * Math.exp((c.sigma * c.sigma) / 2), 0) + track.thinkTimeMs;
      return track.collections.map((c, index) => {
        const texts = c.errors.length ? c.errors.map((e) => e.message) : [DEFAULT_ERROR];
        const weights = c.errors.length ? c.errors.map((e) => e.weight) : [1];
        return {
          track: t,
          index,
          trackName: track.name,
          clip: track.clip,
          name: c.name,
          type: c.type,
          medianMs: c.medianMs,
          sigma: c.sigma,
          errorRate: c.errorRate,
          messages: c.messages,
          errorTexts: texts,
          errorWeights: weights,
          users: track.virtualUsers,
          rampMs: track.rampUpMs,
          iterationMs: Math.max(iterationMs, 1),
        } satisfies Series;
      });
    });
    this.folded = this.series.map((series) => this.empty(series));
    this.foldedTo = this.series.map(() => 0);
  }

  private empty(series: Series): Totals {
    return { series, count: 0, errors: 0, histogram: new Float64Array(BIN_COUNT), errorsByText: series.errorTexts.map(() => 0) };
  }

  /** Adds to `into` what series `s` did in minute `m` of play time, from its start up to play time `upTo`. */
  private addMinute(s: Series, m: number, upTo: number, into: Totals): void {
    const { seed, run, errorFactor } = this.key;
    const from = m * MINUTE_MS;
    const k = [seed, run, s.track, m] as const;
    // The pace of the track's iterations this minute, shared by its collections.
    const pace = Math.exp(0.05 * normal(...k, 'pace'));
    const count = Math.floor((userMs(s.users, s.rampMs, from, upTo) / s.iterationMs) * pace);
    if (count <= 0) return;
    const c = [seed, run, s.track, s.index, m] as const;
    const rate = Math.min(1, s.errorRate * errorFactor * Math.exp(0.25 * normal(...c, 'errors')));
    const errors = rate > 0 ? Math.min(count, Math.floor(count * rate + unit(...c, 'round'))) : 0;
    into.count += count;
    into.errors += errors;
    apportion(errors, s.errorWeights, into.errorsByText);
    // Response times drift a little from minute to minute, and grow with the load.
    const load = userMs(s.users, s.rampMs, from, from + MINUTE_MS) / (s.users * MINUTE_MS);
    const median = s.medianMs * Math.exp(0.08 * normal(...c, 'latency')) * (1 + 0.25 * load);
    if (s.sigma === 0) {
      into.histogram[binOf(median)] += count;
      return;
    }
    const lo = binOf(median * Math.exp(-5 * s.sigma));
    const hi = binOf(median * Math.exp(5 * s.sigma));
    const lnMedian = Math.log(median);
    const weights: number[] = [];
    let lower = 0;
    for (let b = lo; b <= hi; b++) {
      const upper = b === hi ? 1 : phi((BIN_EDGES_LN[b + 1] - lnMedian) / s.sigma);
      weights.push(Math.max(0, upper - lower));
      lower = upper;
    }
    apportion(count, weights, into.histogram, lo);
  }

  private add(into: Totals, from: Totals): void {
    into.count += from.count;
    into.errors += from.errors;
    for (let b = 0; b < BIN_COUNT; b++) into.histogram[b] += from.histogram[b];
    for (let i = 0; i < into.errorsByText.length; i++) into.errorsByText[i] += from.errorsByText[i];
  }

  /**
   * Values derived from the totals at one second of play time (the answers of each read),
   * kept until the play time reaches the next second: a run read many times a second is
   * worked out once a second.
   */
  private memoSecond = -1;
  private readonly memo = new Map<string, unknown>();

  /** `make(totals)` at `played` ms of play time, kept by `key` for the rest of that second. */
  derived<T>(played: number, key: string, make: (totals: Totals[]) => T): T {
    const second = Math.floor(Math.max(0, Math.min(played, this.comp.durationMs)) / 1000);
    if (second !== this.memoSecond) {
      this.memo.clear();
      this.memoSecond = second;
    }
    let value = this.memo.get(key) as T | undefined;
    if (value === undefined) {
      value = make(this.at(second * 1000));
      // Bounded: a caller asking many different percentiles in one second gets them computed.
      if (this.memo.size < MEMO_KEYS) this.memo.set(key, value);
    }
    return value;
  }

  /**
   * Folds the minutes wholly played by `played` ms of play time into the kept totals, as work
   * that yields after each minute of each series (runInSlices lets the event loop turn
   * between slices): a first read of a run of days folds thousands of minutes of up to 2,500
   * series. Each series keeps how many minutes it has folded, so a read between two slices
   * adds the rest itself and two folds at once share the work. Play time earlier than what a
   * series has folded (a caller may ask) starts its fold afresh.
   */
  *fold(played: number): SlicedWork<void> {
    const whole = Math.floor(Math.max(0, Math.min(played, this.comp.durationMs)) / MINUTE_MS);
    let from = whole;
    this.series.forEach((s, i) => {
      if (whole < this.foldedTo[i]) {
        this.folded[i] = this.empty(s);
        this.foldedTo[i] = 0;
      }
      from = Math.min(from, this.foldedTo[i]);
    });
    for (let m = from; m < whole; m++) {
      for (let i = 0; i < this.series.length; i++) {
        if (this.foldedTo[i] !== m) continue;
        this.addMinute(this.series[i], m, (m + 1) * MINUTE_MS, this.folded[i]);
        this.foldedTo[i] = m + 1;
        yield;
      }
    }
  }

  /** The totals of every series after `played` ms of play time (bounded by the composition's length). */
  at(played: number): Totals[] {
    const end = Math.max(0, Math.min(played, this.comp.durationMs));
    const whole = Math.floor(end / MINUTE_MS);
    return this.series.map((s, i) => {
      const totals = this.empty(s);
      // Earlier than what is folded (a run's play time only grows, but a caller may ask): afresh.
      let m = 0;
      if (whole >= this.foldedTo[i]) {
        for (; this.foldedTo[i] < whole; this.foldedTo[i]++) this.addMinute(s, this.foldedTo[i], (this.foldedTo[i] + 1) * MINUTE_MS, this.folded[i]);
        this.add(totals, this.folded[i]);
        m = whole;
      }
      // The minutes not folded: the one being played, or every one for an earlier time.
      for (; m * MINUTE_MS < end; m++) this.addMinute(s, m, Math.min(end, (m + 1) * MINUTE_MS), totals);
      return totals;
    });
  }

  /** A stable fingerprint of the run's key, for tests. */
  keyHash(): number {
    return hash32(this.key.seed, this.key.run);
  }
}

// ---------------------------------------------------------------------------------------
// Reading the histograms
// ---------------------------------------------------------------------------------------

export interface DurationSummary {
  count: number;
  sum: number;
  min: number;
  max: number;
  average: number;
  deviation: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function summarize(histogram: Float64Array, divisor = 1): DurationSummary {
  let count = 0;
  let sum = 0;
  let squares = 0;
  let min = 0;
  let max = 0;
  for (let b = 0; b < BIN_COUNT; b++) {
    const n = histogram[b];
    if (n === 0) continue;
    const v = binMid(b) / divisor;
    if (count === 0) min = v;
    max = v;
    count += n;
    sum += n * v;
    squares += n * v * v;
  }
  const average = count ? sum / count : 0;
  const deviation = count ? Math.sqrt(Math.max(0, squares / count - average * average)) : 0;
  return { count, sum: round2(sum), min: round2(min), max: round2(max), average: round2(average), deviation: round2(deviation) };
}

/** Nearest-rank percentiles of a histogram (each value the middle of its bin). */
export function percentiles(histogram: Float64Array, ps: readonly number[]): Array<{ percentile: number; value: number }> {
  let count = 0;
  for (let b = 0; b < BIN_COUNT; b++) count += histogram[b];
  return ps.map((p) => {
    if (count === 0) return { percentile: p, value: 0 };
    const rank = Math.max(1, Math.ceil((p / 100) * count));
    let seen = 0;
    for (let b = 0; b < BIN_COUNT; b++) {
      seen += histogram[b];
      if (seen >= rank) return { percentile: p, value: round2(binMid(b)) };
    }
    return { percentile: p, value: 0 };
  });
}

/** Sums histograms. */
export function merged(histograms: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(BIN_COUNT);
  for (const h of histograms) for (let b = 0; b < BIN_COUNT; b++) out[b] += h[b];
  return out;
}

export const MESSAGE_BYTES = { sent: BYTES_SENT, received: BYTES_RECEIVED };
