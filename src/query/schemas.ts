import { Type, type Static } from '@sinclair/typebox';
import { repeatable } from '../core/schema.js';

/**
 * The Query API's own fixture sections: a model of each domain's real users (`rumModels`,
 * one per domain id; a domain without one gets a model derived from its id) and the
 * incidents that bend its numbers (`incidents`).
 */

const share = Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'share of the beacons (0 to 1)' });
const factor = Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'multiplies the load time of these beacons' });

const DimensionValueSchema = (what: string) =>
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 100, description: what }),
      share,
      loadTimeFactor: Type.Optional(factor),
    },
    { additionalProperties: false },
  );

export const RumModelSeedSchema = Type.Object(
  {
    domainId: Type.Integer({ minimum: 1, description: 'the domain this model describes' }),
    beaconsPerMinute: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'beacons per minute at the daily peak' })),
    peakHourUtc: Type.Optional(Type.Integer({ minimum: 0, maximum: 23, description: 'hour of the daily peak (UTC)' })),
    weekendFactor: Type.Optional(Type.Number({ minimum: 0, maximum: 10, description: 'traffic on Saturdays and Sundays, relative to weekdays' })),
    pageLoadMedianMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000, description: 'median page load time' })),
    pageLoadSigma: Type.Optional(Type.Number({ minimum: 0.05, maximum: 3, description: 'spread of the log-normal page load time' })),
    errorRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'JavaScript errors per beacon' })),
    bounceRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'share of sessions that bounce at the median load time' })),
    pageGroups: Type.Optional(Type.Array(DimensionValueSchema('page group name'), { minItems: 1, maxItems: 50 })),
    browsers: Type.Optional(Type.Array(DimensionValueSchema('browser, e.g. Chrome/120'), { minItems: 1, maxItems: 50 })),
    countries: Type.Optional(Type.Array(DimensionValueSchema('ISO 3166 alpha-2 country code'), { minItems: 1, maxItems: 50 })),
    abTests: Type.Optional(Type.Array(DimensionValueSchema('A/B test name'), { maxItems: 20 })),
    isps: Type.Optional(Type.Array(DimensionValueSchema('internet service provider, e.g. Comcast Cable'), { minItems: 1, maxItems: 50 })),
    connectionTypes: Type.Optional(Type.Array(DimensionValueSchema('effective connection type, e.g. 4g'), { minItems: 1, maxItems: 20 })),
    deviceTypes: Type.Optional(Type.Array(DimensionValueSchema('device type, e.g. Mobile'), { minItems: 1, maxItems: 20 })),
    operatingSystems: Type.Optional(Type.Array(DimensionValueSchema('operating system, e.g. Android'), { minItems: 1, maxItems: 50 })),
    customDimensions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({
              pattern: '^[A-Za-z][A-Za-z0-9_]{0,39}$',
              description: 'queried as the filter custom-dimension-<name> and the dimension custom_dimension_<name>; not a built-in dimension\'s name',
            }),
            values: Type.Array(DimensionValueSchema('a value of the dimension'), { minItems: 1, maxItems: 50 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10, description: 'custom dimensions of the app, each splitting its beacons as the built-in ones do' },
      ),
    ),
    customTimers: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            medianMs: Type.Integer({ minimum: 1, maximum: 600_000 }),
            sigma: Type.Optional(Type.Number({ minimum: 0.05, maximum: 3 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10, description: 'CustomTimer0, CustomTimer1, ... in this order' },
      ),
    ),
    customMetrics: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            ratePercent: Type.Number({ minimum: 0, maximum: 100, description: 'its value (a rate, in percent) at the median load time; it falls as pages get slower' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10, description: 'CustomMetric0, CustomMetric1, ... in this order' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type RumModelSeed = Static<typeof RumModelSeedSchema>;

export const IncidentSeedSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    domainId: Type.Integer({ minimum: 1 }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    start: Type.Optional(Type.Integer({ minimum: 0, description: 'UTC epoch ms' })),
    startAgoMs: Type.Optional(Type.Integer({ description: 'start = the time the seed loads minus this many ms (negative: in the future)' })),
    end: Type.Optional(Type.Integer({ minimum: 0, description: 'UTC epoch ms (exclusive)' })),
    endAgoMs: Type.Optional(Type.Integer({ description: 'end = the time the seed loads minus this many ms (negative: in the future)' })),
    pageGroup: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only this page group; absent: every page group' })),
    loadTimeFactor: Type.Number({ exclusiveMinimum: 0, maximum: 100, default: 1, description: 'multiplies every timer' }),
    errorFactor: Type.Number({ minimum: 0, maximum: 1000, default: 1, description: 'multiplies the error rate' }),
    trafficFactor: Type.Number({ minimum: 0, maximum: 100, default: 1, description: 'multiplies the beacons per minute' }),
  },
  { additionalProperties: false },
);
export type IncidentSeed = Static<typeof IncidentSeedSchema>;

/** An incident as the control API takes it: times absolute or relative to now. */
export const IncidentCreateBodySchema = Type.Object(
  {
    domainId: Type.Integer({ minimum: 1 }),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    start: Type.Optional(Type.Integer({ minimum: 0, description: 'UTC epoch ms' })),
    startAgoMs: Type.Optional(Type.Integer({ minimum: 0, description: 'start = now minus this many ms' })),
    end: Type.Optional(Type.Integer({ minimum: 0, description: 'UTC epoch ms (exclusive)' })),
    endAgoMs: Type.Optional(Type.Integer({ description: 'end = now minus this many ms (negative: in the future)' })),
    pageGroup: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    loadTimeFactor: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100 })),
    errorFactor: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
    trafficFactor: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type IncidentCreateBody = Static<typeof IncidentCreateBodySchema>;

/** An incident as the control API answers it: absolute times. */
export const IncidentSchema = Type.Object(
  {
    id: Type.Integer(),
    domainId: Type.Integer(),
    title: Type.Optional(Type.String()),
    start: Type.Integer(),
    end: Type.Integer(),
    pageGroup: Type.Optional(Type.String()),
    loadTimeFactor: Type.Number(),
    errorFactor: Type.Number(),
    trafficFactor: Type.Number(),
  },
  { additionalProperties: false },
);
export type Incident = Static<typeof IncidentSchema>;

/** This interface's sections of the state (world/state.ts composes every interface's). */
export const QuerySectionsSchema = {
  rumModels: Type.Array(RumModelSeedSchema, { default: [], description: 'real-user models of the domains (Query API)' }),
  incidents: Type.Array(IncidentSeedSchema, { default: [], description: 'spans that bend a domain\'s real-user numbers' }),
};
export type QuerySections = { rumModels: RumModelSeed[]; incidents: IncidentSeed[] };

/** What the Query API needs to know of a domain, handed in by the wiring. */
export interface QueryDomain {
  id: number;
  name: string;
  apiKey: string;
  /** The tenant that owns it (a domain of the seed without one: Default); absent: every tenant may query it. */
  tenant?: string;
}

/** The narrow functions through which the store reaches what other interfaces own. */
export interface QueryPorts {
  domains: () => readonly QueryDomain[];
}

export const QueryParamsSchema = Type.Object({
  apiKey: Type.String({ description: "the domain's app key (its apiKey attribute)" }),
  queryType: Type.String({ description: 'summary, histogram, by-minute, timers-metrics, page-groups, browsers, ...' }),
});

const param = (description: string) => Type.Optional(repeatable({ description }));

/** The documented parameters; others are refused with 400 (custom-dimension-<name>, a custom dimension's filter, aside). */
export const QueryQuerySchema = Type.Object(
  {
    format: param('json (default: legacy, answered as json)'),
    date: param('YYYY-MM-DD: one calendar day in the timezone'),
    'date-comparator': param('Today, Yesterday, Last30Minutes, LastHour, Last3Hours, Last6Hours, Last12Hours, Last24Hours, Last7Days, Last30Days, ThisWeek, ThisMonth, Last, Between'),
    'date-start': param('with Between: ISO 8601 date or date-time, or epoch ms'),
    'date-end': param('with Between: exclusive end'),
    'trailing-seconds': param('with Last: how many seconds back'),
    timezone: param('IANA time zone name (default UTC)'),
    timer: param('PageLoad (default), DNS, TCP, SSL, FirstByte, DomLoad, DomReady, FirstLastByte, ..., CustomTimer<n>; repeatable on timers-metrics'),
    'custom-timer': param('a custom timer by name'),
    metric: param('Beacons (default), AppErrors, ErrorsPerPage, Sessions, BounceRate, CustomMetric<n>; repeatable on timers-metrics'),
    metrics: param('metrics-by-dimension: comma-separated column names'),
    dimension: param('metrics-by-dimension, dimension-values and dimension-over-time: page_group, browser, country, ab_test, bw_block, beacon_type, isp, connection_type, device_type, os, custom_dimension_<name>'),
    percentile: param('1 to 99 (default 50)'),
    'series-format': param('js (default: the series as a JavaScript literal in a string) or json'),
    'page-group': param('drill down to page groups (repeatable)'),
    browser: param('drill down to browsers (repeatable)'),
    country: param('drill down to countries (repeatable)'),
    'ab-test': param('drill down to A/B tests (repeatable)'),
    'bandwith-block': param('drill down to bandwidth blocks 0 to 6 (the service spells it so)'),
    'beacon-type': param('drill down to beacon types; every modelled beacon is a "page view"'),
    isp: param('drill down to internet service providers (repeatable)'),
    'connection-type': param('drill down to effective connection types: 4g, 3g, 2g, slow-2g, (No Value) (repeatable)'),
    'device-type': param('drill down to device types: Desktop, Mobile, Tablet (repeatable)'),
    os: param('drill down to operating systems (repeatable)'),
    limit: param('the most rows of a breakdown, 1 to 100000 (page-groups, browsers, ab-tests, geography, bandwidth, metrics-by-dimension, dimension-values, app-error-summary; the series of dimension-over-time)'),
    sortby: param("a breakdown's column to order its rows by: the dimension's name (A to Z), beacons (the default), page_load, or a metrics-by-dimension column (largest first)"),
    interval: param('by-minute, timers-metrics and dimension-over-time: minutes per point, a divisor of a day (1, 5, 15, 60, 1440, ...), at most 1440 points'),
  },
  { additionalProperties: true },
);
export type QueryQuery = Record<string, string | string[] | undefined>;
