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

export const DRILLDOWNS = ['page-group', 'browser', 'country', 'ab-test', 'bandwith-block', 'beacon-type', 'isp', 'connection-type', 'device-type', 'os'] as const;
export type Drilldown = (typeof DRILLDOWNS)[number];

/** Drill-downs the service knows and the model does not: a filter on one of them keeps no beacon. */
const UNMODELLED = [
  'browser-family',
  'region',
  'device-model',
  'device-manufacturer',
  'os-family',
  'network-error-code',
  'site-version',
];

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
  /** The filters on custom dimensions (custom-dimension-<name>), by name: checked by the store against the app's model. */
  customDrilldowns?: Record<string, string[]>;
  /** A filter on a dimension the model does not have: no beacon matches. */
  unmodelledFilter: boolean;
  /** The most rows of a breakdown (absent: every row). */
  limit?: number;
  /** The column a breakdown's rows are ordered by (absent: beacons, most first); checked by the store against the query's columns. */
  sortby?: string;
  /** Minutes per point of a series over time (absent: by the range's length). */
  interval?: number;
}

/** The most points `interval` may make a series have. */
export const MAX_POINTS = 1440;

/** The most rows `limit` may ask for. */
export const MAX_LIMIT = 100_000;

const badValue = (name: string, value: string, why: string) => invalid(`Invalid parameter: ${name} ${why}: ${value}`);

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
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

/**
 * The parameters a query gives, read in one pass over the names it has (a handful), not by
 * looking up each of the thirty-odd names it could have: a query string's object has a
 * different shape for every combination of names, so each lookup by name is a slow one.
 */
interface Given {
  /** Each the first value of its parameter (the service reads a single one). */
  format?: string;
  date?: string;
  comparator?: string;
  start?: string;
  end?: string;
  trailingSeconds?: string;
  timezone?: string;
  customTimer?: string;
  metrics?: string;
  dimension?: string;
  percentile?: string;
  seriesFormat?: string;
  limit?: string;
  sortby?: string;
  interval?: string;
  /** Repeatable: every value. */
  timer?: string[];
  metric?: string[];
  drilldowns?: Partial<Record<Drilldown, string | string[]>>;
  /** custom-dimension-<name>, by name. */
  custom?: Record<string, string | string[] | undefined>;
  /** A filter on a dimension the model does not have: no beacon matches. */
  unmodelledFilter: boolean;
}

const CUSTOM_PREFIX = 'custom-dimension-';
/** The most custom dimensions one query may filter on (a model declares at most 10). */
const MAX_CUSTOM_FILTERS = 20;

const UNMODELLED_SET: ReadonlySet<string> = new Set(UNMODELLED);
const DRILLDOWN_SET: ReadonlySet<string> = new Set(DRILLDOWNS);

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the names a query has; refuses the first one that is not a parameter. */
function given(query: QueryQuery): Given {
  const g: Given = { unmodelledFilter: false };
  // Bounded by the query string, which the HTTP parser bounds.
  for (const name of Object.keys(query)) {
    const value = query[name];
    switch (name) {
      case 'format':
        g.format = first(value);
        break;
      case 'date':
        g.date = first(value);
        break;
      case 'date-comparator':
        g.comparator = first(value);
        break;
      case 'date-start':
        g.start = first(value);
        break;
      case 'date-end':
        g.end = first(value);
        break;
      case 'trailing-seconds':
        g.trailingSeconds = first(value);
        break;
      case 'timezone':
        g.timezone = first(value);
        break;
      case 'timer':
        g.timer = list(value);
        break;
      case 'custom-timer':
        g.customTimer = first(value);
        break;
      case 'metric':
        g.metric = list(value);
        break;
      case 'metrics':
        g.metrics = first(value);
        break;
      case 'dimension':
        g.dimension = first(value);
        break;
      case 'percentile':
        g.percentile = first(value);
        break;
      case 'series-format':
        g.seriesFormat = first(value);
        break;
      case 'limit':
        g.limit = first(value);
        break;
      case 'sortby':
        g.sortby = first(value);
        break;
      case 'interval':
        g.interval = first(value);
        break;
      default:
        if (DRILLDOWN_SET.has(name)) (g.drilldowns ??= {})[name as Drilldown] = value;
        else if (UNMODELLED_SET.has(name)) g.unmodelledFilter ||= value !== undefined;
        else if (name.startsWith(CUSTOM_PREFIX)) {
          g.custom ??= {};
          if (Object.keys(g.custom).length >= MAX_CUSTOM_FILTERS) throw invalid(`Invalid parameter: ${name} is one custom dimension filter more than ${MAX_CUSTOM_FILTERS}: ${list(value)[0] ?? ''}`);
          g.custom[name.slice(CUSTOM_PREFIX.length)] = value;
        }
        else throw invalid(`Invalid parameter: ${name} is not a parameter of this query: ${list(value)[0] ?? ''}`);
    }
  }
  return g;
}

/** The time range a query asks for, given the emulator's now. */
function rangeOf(g: Given, tz: string, now: number): { from: number; to: number } {
  const date = g.date;
  if (date !== undefined) {
    const day = calendarDate(date);
    if (!day) throw badValue('date', date, 'must be a calendar date (YYYY-MM-DD)');
    return { from: wallToUtc(tz, day.y, day.m, day.d), to: wallToUtc(tz, day.y, day.m, day.d + 1) };
  }
  const comparator = g.comparator ?? 'Today';
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
      const seconds = g.trailingSeconds;
      if (seconds === undefined) throw invalid('Invalid parameter: trailing-seconds is required with date-comparator Last: (missing)');
      return { from: now - integer('trailing-seconds', seconds, 1, MAX_RANGE_DAYS * 86_400) * 1000, to: now };
    }
    case 'Between': {
      const start = g.start;
      const end = g.end;
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

/** The drill-downs of a query without any: one object, so the store can tell it at once. */
export const NO_DRILLDOWNS: QueryRequest['drilldowns'] = Object.freeze({});
/** Shared by every query without the parameter: frozen, so that nothing can change it. */
const NO_VALUES = Object.freeze([]) as unknown as string[];

/** The minutes per point `interval` asks for: a whole number of minutes that divides a day, giving at most MAX_POINTS points over the range. */
function intervalOf(text: string, span: number): number {
  const minutes = integer('interval', text, 1, DAY / MINUTE);
  if ((DAY / MINUTE) % minutes !== 0) throw badValue('interval', text, 'must be a number of minutes that divides a day (1, 5, 15, 60, 1440, ...)');
  const points = Math.ceil(span / (minutes * MINUTE));
  if (points > MAX_POINTS) throw badValue('interval', text, `gives ${points} points over this range, more than ${MAX_POINTS}`);
  return minutes;
}

/** The values of a drill-down: repeated or comma-separated, at most 100. */
function drilldownValues(name: string, value: string | string[] | undefined): string[] {
  const values = list(value).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
  if (values.length > 100) throw badValue(name, values[100], 'is repeated more than 100 times');
  return values;
}

/** Reads and checks every parameter of a query. */
export function parseQuery(query: QueryQuery, now: number): QueryRequest {
  const g = given(query);
  const format = g.format;
  if (format !== undefined && format !== 'json' && format !== 'legacy') throw badValue('format', format, 'must be json');
  const seriesFormat = g.seriesFormat;
  if (seriesFormat !== undefined && seriesFormat !== 'json' && seriesFormat !== 'js') throw badValue('series-format', seriesFormat, 'must be js or json');
  const timezone = g.timezone ?? 'UTC';
  try {
    formatter(timezone);
  } catch {
    throw badValue('timezone', timezone, 'must be a time zone name such as UTC or Europe/London');
  }
  const { from, to } = rangeOf(g, timezone, now);
  if (to - from > MAX_RANGE_DAYS * DAY) throw badValue('date-end', g.end ?? String(to), `spans more than ${MAX_RANGE_DAYS} days`);
  const percentileText = g.percentile;
  const percentile = percentileText === undefined ? 50 : integer('percentile', percentileText, 1, 99);
  let drilldowns = NO_DRILLDOWNS;
  if (g.drilldowns !== undefined) {
    drilldowns = {};
    for (const name of DRILLDOWNS) {
      const values = drilldownValues(name, g.drilldowns[name]);
      if (values.length) drilldowns[name] = values;
    }
  }
  let customDrilldowns: Record<string, string[]> | undefined;
  for (const [name, value] of Object.entries(g.custom ?? {})) {
    const values = drilldownValues(`${CUSTOM_PREFIX}${name}`, value);
    if (values.length) (customDrilldowns ??= {})[name] = values;
  }
  const metricsText = g.metrics;
  return {
    from,
    to,
    timezone,
    timers: g.timer === undefined ? NO_VALUES : g.timer.slice(0, 50),
    customTimer: g.customTimer,
    metrics: g.metric === undefined ? NO_VALUES : g.metric.slice(0, 50),
    columns: metricsText === undefined ? undefined : metricsText.split(',').map((m) => m.trim()).filter(Boolean).slice(0, 50),
    dimension: g.dimension,
    percentile,
    seriesJson: seriesFormat === 'json',
    drilldowns,
    ...(customDrilldowns ? { customDrilldowns } : {}),
    unmodelledFilter: g.unmodelledFilter,
    ...(g.limit !== undefined ? { limit: integer('limit', g.limit, 1, MAX_LIMIT) } : {}),
    ...(g.sortby !== undefined ? { sortby: g.sortby } : {}),
    ...(g.interval !== undefined ? { interval: intervalOf(g.interval, to - from) } : {}),
  };
}
