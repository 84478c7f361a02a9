import { invalid } from '../core/errors.js';
import type { QueryQuery } from './schemas.js';

/**
 * The Query API's parameters, read from the query string into what the store needs. Pure:
 * every problem is a DomainError('invalid') naming the parameter and the value, in the
 * words the service uses ("Invalid parameter: <name> ...: <value>"), which clients parse.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The longest range a query may span: beyond it the answer would be too coarse to mean anything. */
export const MAX_RANGE_DAYS = 93;

export const DRILLDOWNS = ['page-group', 'browser', 'country', 'ab-test', 'bandwith-block', 'beacon-type'] as const;
export type Drilldown = (typeof DRILLDOWNS)[number];

/** Drill-downs the service knows and the model does not: a filter on one of them keeps no beacon. */
const UNMODELLED = [
  'browser-family',
  'region',
  'device-type',
  'device-model',
  'device-manufacturer',
  'os',
  'os-family',
  'connection-type',
  'isp',
  'network-error-code',
  'site-version',
];

const KNOWN = new Set([
  'format',
  'date',
  'date-comparator',
  'date-start',
  'date-end',
  'trailing-seconds',
  'timezone',
  'timer',
  'custom-timer',
  'metric',
  'metrics',
  'dimension',
  'percentile',
  'series-format',
  'limit',
  'sortby',
  'interval',
  ...DRILLDOWNS,
  ...UNMODELLED,
]);

const COMPARATORS: Record<string, number> = {
  Last30Minutes: 30 * MINUTE,
  LastHour: HOUR,
  Last3Hours: 3 * HOUR,
  Last6Hours: 6 * HOUR,
  Last12Hours: 12 * HOUR,
  Last24Hours: DAY,
  Last48Hours: 2 * DAY,
  Last7Days: 7 * DAY,
  Last30Days: 30 * DAY,
};
const CALENDAR = ['Today', 'Yesterday', 'ThisWeek', 'ThisMonth', 'Last', 'Between'];
export const DATE_COMPARATORS = [...Object.keys(COMPARATORS), ...CALENDAR];

export interface QueryRequest {
  /** The time range, UTC epoch ms, end exclusive (not yet cut at "now"). */
  from: number;
  to: number;
  timezone: string;
  timers: string[];
  customTimer?: string;
  metrics: string[];
  /** metrics-by-dimension's comma-separated list. */
  columns?: string[];
  dimension?: string;
  percentile: number;
  seriesJson: boolean;
  drilldowns: Partial<Record<Drilldown, string[]>>;
  /** A filter on a dimension the model does not have, or a custom dimension: no beacon matches. */
  unmodelledFilter: boolean;
}

const badValue = (name: string, value: string, why: string) => invalid(`Invalid parameter: ${name} ${why}: ${value}`);

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The one value of a parameter (the first of repeats, as the service reads a single one). */
function one(query: QueryQuery, name: string): string | undefined {
  return list(query[name])[0];
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter of a time zone; throws for a name Intl does not know. */
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    // Bounded: a flood of made-up (but valid) zone names cannot grow it past this.
    if (formatters.size > 600) formatters.clear();
    formatters.set(tz, f);
  }
  return f;
}

/** How far the zone's wall clock is ahead of UTC at `at`, in ms. */
export function offsetMs(tz: string, at: number): number {
  if (tz === 'UTC') return 0;
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - (at - (((at % 1000) + 1000) % 1000));
}

/** The instant the zone's wall clock shows y-m-d h:00. */
function wallToUtc(tz: string, y: number, m: number, d: number, h = 0, mi = 0, s = 0): number {
  const guess = Date.UTC(y, m, d, h, mi, s);
  const first = guess - offsetMs(tz, guess);
  return guess - offsetMs(tz, first);
}

/** The zone's calendar fields at an instant. */
function wallOf(tz: string, at: number): { y: number; m: number; d: number; weekday: number } {
  const shifted = new Date(at + offsetMs(tz, at));
  return { y: shifted.getUTCFullYear(), m: shifted.getUTCMonth(), d: shifted.getUTCDate(), weekday: shifted.getUTCDay() };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function calendarDate(text: string): { y: number; m: number; d: number } | undefined {
  const match = DATE.exec(text);
  if (!match) return undefined;
  const [y, m, d] = [Number(match[1]), Number(match[2]) - 1, Number(match[3])];
  const check = new Date(Date.UTC(y, m, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m || check.getUTCDate() !== d) return undefined;
  return { y, m, d };
}

/** A time as `date-start`/`date-end` take it: a date, an ISO date-time, or epoch ms. */
function instant(name: string, text: string, tz: string): number {
  if (/^\d{1,15}$/.test(text)) return Number(text);
  const date = calendarDate(text);
  if (date) return wallToUtc(tz, date.y, date.m, date.d);
  const match = DATE_TIME.exec(text);
  if (match) {
    const [, y, m, d, h, mi, s, zone] = match;
    if (zone) {
      const parsed = Date.parse(`${y}-${m}-${d}T${h}:${mi}:${s ?? '00'}${zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`);
      if (Number.isFinite(parsed)) return parsed;
    } else if (calendarDate(`${y}-${m}-${d}`) && Number(h) < 24 && Number(mi) < 60 && Number(s ?? 0) < 60) {
      return wallToUtc(tz, Number(y), Number(m) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
    }
  }
  throw badValue(name, text, 'must be a date (YYYY-MM-DD), an ISO 8601 date-time or epoch milliseconds');
}

function integer(name: string, text: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) throw badValue(name, text, `must be an integer from ${min} to ${max}`);
  return Number(text);
}

/** The time range a query asks for, given the emulator's now. */
function rangeOf(query: QueryQuery, tz: string, now: number): { from: number; to: number } {
  const date = one(query, 'date');
  if (date !== undefined) {
    const day = calendarDate(date);
    if (!day) throw badValue('date', date, 'must be a calendar date (YYYY-MM-DD)');
    return { from: wallToUtc(tz, day.y, day.m, day.d), to: wallToUtc(tz, day.y, day.m, day.d + 1) };
  }
  const comparator = one(query, 'date-comparator') ?? 'Today';
  const span = COMPARATORS[comparator];
  if (span !== undefined) return { from: now - span, to: now };
  const today = wallOf(tz, now);
  switch (comparator) {
    case 'Today':
      return { from: wallToUtc(tz, today.y, today.m, today.d), to: now };
    case 'Yesterday':
      return { from: wallToUtc(tz, today.y, today.m, today.d - 1), to: wallToUtc(tz, today.y, today.m, today.d) };
    case 'ThisWeek':
      // Weeks start on Monday.
      return { from: wallToUtc(tz, today.y, today.m, today.d - ((today.weekday + 6) % 7)), to: now };
    case 'ThisMonth':
      return { from: wallToUtc(tz, today.y, today.m, 1), to: now };
    case 'Last': {
      const seconds = one(query, 'trailing-seconds');
      if (seconds === undefined) throw invalid('Invalid parameter: trailing-seconds is required with date-comparator Last: (missing)');
      return { from: now - integer('trailing-seconds', seconds, 1, MAX_RANGE_DAYS * 86_400) * 1000, to: now };
    }
    case 'Between': {
      const start = one(query, 'date-start');
      const end = one(query, 'date-end');
      if (start === undefined || end === undefined) {
        throw invalid(`Invalid parameter: ${start === undefined ? 'date-start' : 'date-end'} is required with date-comparator Between: (missing)`);
      }
      const from = instant('date-start', start, tz);
      const to = instant('date-end', end, tz);
      if (to <= from) throw badValue('date-end', end, 'must be later than date-start');
      return { from, to };
    }
    default:
      throw badValue('date-comparator', comparator, `must be one of ${DATE_COMPARATORS.join(', ')}`);
  }
}

/** Reads and checks every parameter of a query. */
export function parseQuery(query: QueryQuery, now: number): QueryRequest {
  // Bounded by the query string, which the HTTP parser bounds.
  for (const name of Object.keys(query)) {
    if (!KNOWN.has(name) && !name.startsWith('custom-dimension-')) throw invalid(`Invalid parameter: ${name} is not a parameter of this query: ${list(query[name])[0] ?? ''}`);
  }
  const format = one(query, 'format');
  if (format !== undefined && format !== 'json' && format !== 'legacy') throw badValue('format', format, 'must be json');
  const seriesFormat = one(query, 'series-format');
  if (seriesFormat !== undefined && seriesFormat !== 'json' && seriesFormat !== 'js') throw badValue('series-format', seriesFormat, 'must be js or json');
  const timezone = one(query, 'timezone') ?? 'UTC';
  try {
    formatter(timezone);
  } catch {
    throw badValue('timezone', timezone, 'must be a time zone name such as UTC or Europe/London');
  }
  const { from, to } = rangeOf(query, timezone, now);
  if (to - from > MAX_RANGE_DAYS * DAY) throw badValue('date-end', one(query, 'date-end') ?? String(to), `spans more than ${MAX_RANGE_DAYS} days`);
  const percentileText = one(query, 'percentile');
  const percentile = percentileText === undefined ? 50 : integer('percentile', percentileText, 1, 99);
  const drilldowns: QueryRequest['drilldowns'] = {};
  for (const name of DRILLDOWNS) {
    const values = list(query[name]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
    if (values.length > 100) throw badValue(name, values[100], 'is repeated more than 100 times');
    if (values.length) drilldowns[name] = values;
  }
  const unmodelledFilter =
    UNMODELLED.some((name) => query[name] !== undefined) || Object.keys(query).some((name) => name.startsWith('custom-dimension-'));
  const metricsText = one(query, 'metrics');
  return {
    from,
    to,
    timezone,
    timers: list(query.timer).slice(0, 50),
    customTimer: one(query, 'custom-timer'),
    metrics: list(query.metric).slice(0, 50),
    columns: metricsText === undefined ? undefined : metricsText.split(',').map((m) => m.trim()).filter(Boolean).slice(0, 50),
    dimension: one(query, 'dimension'),
    percentile,
    seriesJson: seriesFormat === 'json',
    drilldowns,
    unmodelledFilter,
  };
}
