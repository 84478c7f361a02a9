import { Type, type Static, type TOptional } from '@sinclair/typebox';
import { literals } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

/**
 * A threshold rule: the condition over one app's real-user data (the Query API's) that fires
 * and clears an alert by itself, e.g. "median page load time above 4 s for 5 minutes".
 */

/** The timers a rule may watch, by the Query API's ids (`timer`): a percentile of their load times. */
export const RULE_TIMERS = [
  'PageLoad',
  'DNS',
  'TCP',
  'SSL',
  'FirstByte',
  'FirstLastByte',
  'DomLoad',
  'DomReady',
  'FirstPaint',
  'FirstContentfulPaint',
  'LargestContentfulPaint',
  'TimeToInteractive',
  'FirstInputDelay',
] as const;
/** The metrics a rule may watch, by the Query API's ids (timers-metrics `metric`): a count or a rate of the minute. */
export const RULE_COUNTS = ['Beacons', 'AppErrors', 'Sessions', 'ErrorsPerPage', 'BounceRate'] as const;
export const RULE_METRICS = [...RULE_TIMERS, ...RULE_COUNTS] as const;
export type RuleMetric = (typeof RULE_METRICS)[number];

/** The drill-downs a rule may narrow its beacons by: the Query API's filter names. */
export const RULE_FILTERS = ['page-group', 'browser', 'country', 'ab-test', 'bandwith-block', 'beacon-type', 'isp', 'connection-type', 'device-type', 'os'] as const;
export type RuleFilter = (typeof RULE_FILTERS)[number];

export const RULE_UNITS = ['ms', 's', 'count', 'percent', 'perPage'] as const;
export type RuleUnit = (typeof RULE_UNITS)[number];

/**
 * The units each metric's threshold may be given in, the first the default, and what one of
 * each unit is in the Query API's own unit (ms; a count; errors per page view; percent).
 */
export const METRIC_UNITS: Readonly<Record<RuleMetric, ReadonlyArray<RuleUnit>>> = {
  ...(Object.fromEntries(RULE_TIMERS.map((t) => [t, ['ms', 's']])) as Record<(typeof RULE_TIMERS)[number], RuleUnit[]>),
  Beacons: ['count'],
  AppErrors: ['count'],
  Sessions: ['count'],
  ErrorsPerPage: ['perPage', 'percent'],
  BounceRate: ['percent'],
};
/** What one of a unit is worth in the metric's own unit. */
export function unitScale(metric: RuleMetric, unit: RuleUnit): number {
  if (unit === 's') return 1000;
  if (unit === 'percent' && metric === 'ErrorsPerPage') return 0.01;
  return 1;
}

/** The most minutes a window may span: a day. */
export const RULE_WINDOW_MAX_MINUTES = 1440;

const FilterValuesSchema = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 })]);

const FILTER_PROPERTIES = Object.fromEntries(RULE_FILTERS.map((f) => [f, Type.Optional(FilterValuesSchema)])) as Record<
  RuleFilter,
  TOptional<typeof FilterValuesSchema>
>;

export const AlertRuleSchema = Type.Object(
  {
    app: Type.String({ minLength: 1, description: 'the app whose data is watched: its name, as GET /_emulator/apps lists it' }),
    metric: literals(RULE_METRICS, { description: 'a timer (a percentile of its times) or a metric of the Query API' }),
    percentile: Type.Optional(Type.Integer({ minimum: 1, maximum: 99, description: 'timers only: the percentile watched; absent: 50, the median' })),
    comparison: literals(['above', 'below'] as const, { description: "the condition: the minute's value is above (below) the threshold" }),
    threshold: Type.Number({ description: 'in `unit`' }),
    unit: Type.Optional(literals(RULE_UNITS, { description: "the threshold's unit: ms or s for timers, count, percent, perPage (ErrorsPerPage); absent: the metric's own" })),
    windowMinutes: Type.Integer({
      minimum: 1,
      maximum: RULE_WINDOW_MAX_MINUTES,
      description: 'how many consecutive complete minutes the condition must hold before the alert fires',
    }),
    filters: Type.Optional(
      Type.Object(FILTER_PROPERTIES, { additionalProperties: false, description: "drill-downs, as the Query API's filters: only these beacons are counted" }),
    ),
  },
  { additionalProperties: false },
);
export type AlertRule = Static<typeof AlertRuleSchema>;

/**
 * Where a rule's evaluation stands: shown by the control API, and written by an export so that
 * an import goes on from it (a seed leaves it out: the rule starts watching when it is loaded).
 */
export const RuleStatusSchema = Type.Object(
  {
    evaluatedAt: emulatedTime(Type.Integer({ description: 'UTC epoch ms, emulated: the end of the last complete minute evaluated' })),
    value: Type.Union([Type.Number(), Type.Null()], { description: "that minute's value, in the rule's unit; null: no beacons (the condition does not hold)" }),
    breaching: Type.Integer({ minimum: 0, description: 'how many consecutive minutes up to evaluatedAt met the condition (counted up to the window)' }),
    holding: Type.Boolean({ description: 'whether the condition held over the whole window at evaluatedAt' }),
  },
  { additionalProperties: false },
);
export type RuleStatus = Static<typeof RuleStatusSchema>;
