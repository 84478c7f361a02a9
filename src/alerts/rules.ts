import { didYouMean } from '../core/suggest.js';
import { METRIC_UNITS, RULE_TIMERS, unitScale, type AlertRule, type RuleStatus } from './rule-schemas.js';

/**
 * Threshold rules, evaluated lazily at the minute grain: no timer per alert. Whoever reads the
 * alerts (a request, an export, the event stream) first brings every rule up to the clock's
 * now, minute by minute from where it stood; each change of the condition is handed back
 * with the emulated instant it happened at (the end of the minute that made or broke the
 * window), and the alert store records it through its fire and clear.
 *
 * The condition holds at the end of a minute when that minute and the `windowMinutes - 1`
 * before it each met the comparison; it stops holding at the end of the first minute that
 * does not. A minute without beacons meets no comparison of a timer or a rate.
 */

const MINUTE = 60_000;

/**
 * The most minutes one catch-up evaluates per rule: after a longer jump of the clock, only its
 * last two hours are evaluated minute by minute, and a change of the condition in the part
 * before is recorded at the start of those two hours (the instant it is first known). A minute
 * of a rule with drill-downs takes up to about 20 µs: with at most RULE_MAX alerts that have a
 * rule, a catch-up stays within about 50 ms of one request.
 */
export const RULE_CATCHUP_MINUTES = 120;
/** How far ahead the next change of a rule is looked for (the event stream's timer, clock/advance `to: next`). */
export const RULE_LOOKAHEAD_MINUTES = 120;
/** The most alerts of a world that may have a rule. */
export const RULE_MAX = 20;
/** Minute values each rule keeps (those looked at ahead are read again when the clock gets there). */
const KEPT_MINUTES = 2 * (RULE_CATCHUP_MINUTES + RULE_LOOKAHEAD_MINUTES);

/** What rules read of the Query API: one value per complete minute of an app. A view of its store, stated as the little it reads. */
export interface RumSource {
  /** Goes up whenever the numbers may have changed. */
  readonly version: number;
  minuteSeries(
    app: string,
    metric: string,
    percentile: number,
    drilldowns: Partial<Record<string, string[]>>,
  ): ((minute: number) => number | undefined) | undefined;
}

/** A change of a rule's condition: the alert fires (holding) or clears at `at`. */
export interface RuleChange {
  holding: boolean;
  at: number;
  /** The value of the minute that made the change, in the rule's unit; null: no beacons. */
  value: number | null;
}

const isTimer = (metric: string) => (RULE_TIMERS as readonly string[]).includes(metric);

/** The rule's unit: the one given, or the metric's own. */
export const unitOf = (rule: AlertRule) => rule.unit ?? METRIC_UNITS[rule.metric][0];

/** "median PageLoad above 4 s for 5 minutes on shop.example.com": the rule in words, for messages. */
export function describeRule(rule: AlertRule): string {
  const what = isTimer(rule.metric) ? `${(rule.percentile ?? 50) === 50 ? 'median' : `p${rule.percentile}`} ${rule.metric}` : rule.metric;
  const minutes = rule.windowMinutes === 1 ? '1 minute' : `${rule.windowMinutes} minutes`;
  return `${what} ${rule.comparison} ${rule.threshold} ${unitOf(rule)} for ${minutes} on ${rule.app}`;
}

/** The drill-downs of a rule as the Query API takes them: a list of values per filter. */
function drilldownsOf(rule: AlertRule): Partial<Record<string, string[]>> {
  const out: Partial<Record<string, string[]>> = {};
  for (const [name, values] of Object.entries(rule.filters ?? {})) if (values !== undefined) out[name] = typeof values === 'string' ? [values] : values;
  return out;
}

/** One rule, compiled: its threshold in the metric's own unit and its series, made again when the data changes. */
export class RuleWatch {
  private readonly threshold: number;
  private readonly scale: number;
  private series: { version: number; value: ((minute: number) => number | undefined) | undefined; kept: Map<number, number | undefined> } | undefined;
  /** The next change looked for ahead of the status, while the data and the status's path stay the same. */
  private predicted: { version: number; until: number; at: number | undefined } | undefined;

  constructor(
    readonly rule: AlertRule,
    private readonly source: RumSource | undefined,
    /**
     * When the rule started watching (its world's load: an export carries it, so an import
     * finds the same changes again): a change found before it, in the lookback over the
     * window, is recorded at it. -Infinity for a rule that goes on from a status.
     */
    private readonly from: number,
  ) {
    this.scale = unitScale(rule.metric, unitOf(rule));
    this.threshold = rule.threshold * this.scale;
  }

  /** The metric's value in a minute, in its own unit (undefined: no data, or no such app). */
  private valueAt(minute: number): number | undefined {
    const source = this.source;
    if (!source) return undefined;
    if (this.series?.version !== source.version) {
      const { app, metric, percentile } = this.rule;
      this.series = { version: source.version, value: source.minuteSeries(app, metric, percentile ?? 50, drilldownsOf(this.rule)), kept: new Map() };
    }
    const { kept, value } = this.series;
    if (kept.has(minute)) return kept.get(minute);
    const v = value?.(minute);
    // The oldest go first (a Map keeps the order they were added in).
    if (kept.size >= KEPT_MINUTES) kept.delete(kept.keys().next().value as number);
    kept.set(minute, v);
    return v;
  }

  private meets(value: number | undefined): boolean {
    if (value === undefined) return false;
    return this.rule.comparison === 'above' ? value > this.threshold : value < this.threshold;
  }

  private shown(value: number | undefined): number | null {
    return value === undefined ? null : Math.round((value / this.scale) * 1000) / 1000;
  }

  /**
   * Brings `status` (absent: the rule starts watching now) up to `now`, handing each change
   * of the condition to `change` in time order, and answers the new status. A status behind
   * by more than RULE_CATCHUP_MINUTES starts again from a lookback over the window.
   */
  advance(status: RuleStatus | undefined, now: number, change: (c: RuleChange) => void): RuleStatus {
    const last = Math.floor(now / MINUTE) * MINUTE;
    let s = status;
    // A status ahead of the clock (an import on an earlier clock) waits for it.
    if (s && s.evaluatedAt > now) return s;
    // A status off the minutes (moved by an import on another clock) or too far behind starts
    // again, from a lookback over the window, as a rule that starts watching does.
    if (!s || s.evaluatedAt % MINUTE !== 0 || last - s.evaluatedAt > RULE_CATCHUP_MINUTES * MINUTE) {
      // From the start of the minute it was loaded in (or stood at), or from RULE_CATCHUP_MINUTES before now.
      const start = Math.max(Math.floor((s ? s.evaluatedAt : this.from) / MINUTE) * MINUTE, last - RULE_CATCHUP_MINUTES * MINUTE);
      const window = this.rule.windowMinutes;
      let breaching = 0;
      let value: number | undefined;
      for (let m = start / MINUTE - window; m < start / MINUTE; m++) {
        value = this.valueAt(m);
        breaching = this.meets(value) ? Math.min(breaching + 1, window) : 0;
      }
      const holding = breaching >= window;
      const was = s?.holding ?? false;
      s = { evaluatedAt: start, value: this.shown(value), breaching, holding };
      if (holding !== was) change({ holding, at: Math.max(start, this.from), value: s.value });
    } else s = { ...s };
    // Bounded: at most RULE_CATCHUP_MINUTES steps.
    while (s.evaluatedAt + MINUTE <= now) {
      const changed = this.step(s);
      if (changed) change({ holding: s.holding, at: Math.max(s.evaluatedAt, this.from), value: s.value });
    }
    return s;
  }

  /** Evaluates the minute after `s.evaluatedAt` into `s`; whether the condition changed. */
  private step(s: RuleStatus): boolean {
    const value = this.valueAt(s.evaluatedAt / MINUTE);
    const window = this.rule.windowMinutes;
    s.breaching = this.meets(value) ? Math.min(s.breaching + 1, window) : 0;
    s.value = this.shown(value);
    s.evaluatedAt += MINUTE;
    const holding = s.breaching >= window;
    if (holding === s.holding) return false;
    s.holding = holding;
    return true;
  }

  /**
   * The first instant after `status.evaluatedAt` at which the condition will change, looking
   * RULE_LOOKAHEAD_MINUTES ahead; undefined when it does not change in that time. The data is
   * a function of the minute, so what is found stays true until the data changes: it is kept,
   * and looked for again only then, or once the status has gone past it.
   */
  nextChange(status: RuleStatus): number | undefined {
    const version = this.source?.version ?? 0;
    const p = this.predicted;
    if (p && p.version === version && status.evaluatedAt < (p.at ?? p.until)) return p.at;
    const s = { ...status };
    const until = s.evaluatedAt + RULE_LOOKAHEAD_MINUTES * MINUTE;
    let at: number | undefined;
    // Bounded: RULE_LOOKAHEAD_MINUTES steps.
    while (s.evaluatedAt < until) {
      if (this.step(s)) {
        at = s.evaluatedAt;
        break;
      }
    }
    this.predicted = { version, until, at };
    return at;
  }

  /** Where the last look ahead ended (nextChange first): beyond it, a change is not known yet. */
  lookedUntil(): number | undefined {
    return this.predicted?.until;
  }
}

/**
 * The problems of the alerts' rules that their schema cannot see, each as
 * `$.alerts[i].rule.<field>: what is wrong` (check, the loader and an import report them with
 * file and line). `apps` are the apps' names (the domains'); absent, apps are not checked.
 */
export function ruleProblems(
  alerts: ReadonlyArray<{ rule?: AlertRule; ruleStatus?: RuleStatus }>,
  apps: readonly string[] | undefined,
  problem: (text: () => string) => void,
): void {
  let rules = 0;
  alerts.forEach(({ rule, ruleStatus }, i) => {
    const at = `$.alerts[${i}]`;
    if (rule) rules++;
    if (!rule) {
      if (ruleStatus) problem(() => `${at}.ruleStatus: the alert has no rule`);
      return;
    }
    if (apps && !apps.includes(rule.app)) {
      problem(() => `${at}.rule.app: no app is named '${rule.app}'${didYouMean(rule.app, apps)}; the apps are the domains: ${apps.slice(0, 10).join(', ')}`);
    }
    if (rules > RULE_MAX) problem(() => `${at}.rule: at most ${RULE_MAX} alerts may have a rule`);
    if (rule.percentile !== undefined && !isTimer(rule.metric)) problem(() => `${at}.rule.percentile: ${rule.metric} is not a timer; only timers have percentiles`);
    const units = METRIC_UNITS[rule.metric];
    if (rule.unit !== undefined && !units.includes(rule.unit)) problem(() => `${at}.rule.unit: ${rule.metric} is measured in ${units.join(' or ')}, not ${rule.unit}`);
    if (ruleStatus && ruleStatus.breaching > rule.windowMinutes) problem(() => `${at}.ruleStatus.breaching: ${ruleStatus.breaching} is more than the window (${rule.windowMinutes} minutes)`);
  });
}
