import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { BlockCache, QueryStore, type QueryType } from '../../src/query/store.js';
import type { QuerySections } from '../../src/query/schemas.js';

/**
 * The answers of a fixed set of queries, byte for byte, as the minute-by-minute model gave
 * them (`answers.snapshot.txt`, written by the build before the day and hour tables and
 * the faster split path): several query types, ranges of an hour to 93 days, filters on
 * page groups and on split dimensions, breakdowns by a dimension, dimension-over-time, a
 * custom dimension and percentile, and incidents (on every page group and on one, with
 * traffic and errors changed). A change to how the numbers are worked out must leave every
 * one of them as it was. The snapshot is only ever rewritten on purpose (`vitest -u`), when
 * the model itself is meant to change.
 */

/** An emulated now in the middle of an hour, so that ranges have partial hours and days at both ends. */
const NOW = Date.UTC(2026, 10, 22, 9, 17, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DOMAINS = [
  { id: 7, name: 'a.example.com', apiKey: 'KEY-A' },
  { id: 8, name: 'shop.example.com', apiKey: 'KEY-S' },
];

const STATE: QuerySections = {
  rumModels: [
    {
      domainId: 8,
      beaconsPerMinute: 900,
      pageLoadMedianMs: 2600,
      customDimensions: [
        {
          name: 'plan',
          values: [
            { name: 'free', share: 0.7 },
            { name: 'pro', share: 0.25, loadTimeFactor: 0.8 },
            { name: 'enterprise', share: 0.05, loadTimeFactor: 0.7 },
          ],
        },
      ],
    },
  ],
  incidents: [
    // Every page group of the shop: slower, more errors, less traffic, from 30 to 26 hours ago.
    { id: 1, domainId: 8, start: NOW - 30 * HOUR + 17 * 60_000, end: NOW - 26 * HOUR, loadTimeFactor: 2.5, errorFactor: 4, trafficFactor: 0.6 },
    // Only Checkout, 40 days ago for a day and a half: the 93-day ranges hold it, the 30-day ones do not.
    { id: 2, domainId: 8, pageGroup: 'Checkout', start: NOW - 40 * DAY, end: NOW - 38.5 * DAY, loadTimeFactor: 3, errorFactor: 10, trafficFactor: 1.3 },
    // Domain 7 (a model derived from its id), 3 hours ago for 70 minutes.
    { id: 3, domainId: 7, start: NOW - 3 * HOUR, end: NOW - 3 * HOUR + 70 * 60_000, loadTimeFactor: 1.8, errorFactor: 2, trafficFactor: 1 },
  ],
};

const LAST_93_DAYS = { 'date-comparator': 'Last', 'trailing-seconds': String(93 * 86_400) };
const LAST_7_DAYS = { 'date-comparator': 'Last', 'trailing-seconds': String(7 * 86_400) };

/** [app key, type, query]: a dimension-over-time or app-error-summary goes to emptyQuery, as the route does. */
const QUERIES: Array<[string, QueryType | 'dimension-over-time' | 'app-error-summary', Record<string, string | string[]>]> = [
  ['KEY-A', 'summary', { 'date-comparator': 'LastHour' }],
  ['KEY-A', 'summary', { 'date-comparator': 'Last24Hours' }],
  ['KEY-A', 'summary', { 'date-comparator': 'Last30Days' }],
  ['KEY-A', 'summary', LAST_93_DAYS],
  ['KEY-S', 'summary', LAST_93_DAYS],
  ['KEY-S', 'summary', { ...LAST_93_DAYS, percentile: '90' }],
  ['KEY-S', 'summary', { 'date-comparator': 'Last30Days', 'page-group': ['Checkout', 'Home'] }],
  ['KEY-S', 'summary', { ...LAST_93_DAYS, 'page-group': 'Checkout' }],
  ['KEY-S', 'summary', { 'date-comparator': 'Between', 'date-start': String(NOW - 45 * DAY + 123_456), 'date-end': String(NOW - 2 * DAY - 7 * 60_000) }],
  ['KEY-S', 'summary', { ...LAST_93_DAYS, country: 'DE' }],
  ['KEY-S', 'summary', { 'date-comparator': 'Last30Days', browser: ['Chrome/120', 'Firefox/121'], country: 'US' }],
  ['KEY-S', 'summary', { ...LAST_7_DAYS, 'custom-dimension-plan': 'pro', 'device-type': 'Mobile' }],
  ['KEY-S', 'summary', { 'date-comparator': 'Last24Hours', 'page-group': 'Checkout', os: 'iOS', timer: 'FirstByte' }],
  ['KEY-S', 'histogram', { 'date-comparator': 'Last30Days' }],
  ['KEY-S', 'histogram', { ...LAST_7_DAYS, country: 'IN' }],
  ['KEY-A', 'histogram', { 'date-comparator': 'Last24Hours', timer: 'DomReady' }],
  ['KEY-S', 'by-minute', { 'date-comparator': 'Between', 'date-start': String(NOW - 31 * HOUR), 'date-end': String(NOW - 25 * HOUR), 'series-format': 'json' }],
  ['KEY-S', 'by-minute', { ...LAST_7_DAYS, 'series-format': 'json' }],
  ['KEY-S', 'by-minute', { ...LAST_93_DAYS, 'series-format': 'json' }],
  ['KEY-S', 'by-minute', { ...LAST_7_DAYS, 'series-format': 'json', browser: 'Safari/17' }],
  ['KEY-A', 'timers-metrics', { 'date-comparator': 'Last30Days', metric: ['Beacons', 'AppErrors', 'BounceRate'], timer: ['PageLoad', 'DNS'] }],
  ['KEY-S', 'timers-metrics', { ...LAST_7_DAYS, metric: 'Sessions', country: 'GB' }],
  ['KEY-S', 'page-groups', LAST_93_DAYS],
  ['KEY-S', 'page-groups', { 'date-comparator': 'Last30Days', country: 'FR', sortby: 'beacons' }],
  ['KEY-S', 'browsers', { 'date-comparator': 'Last30Days' }],
  ['KEY-S', 'browsers', { ...LAST_7_DAYS, 'page-group': 'Checkout', limit: '3' }],
  ['KEY-S', 'geography', { 'date-comparator': 'Last30Days' }],
  ['KEY-A', 'geography', { 'date-comparator': 'Last24Hours', 'ab-test': 'Control' }],
  ['KEY-S', 'ab-tests', LAST_7_DAYS],
  ['KEY-S', 'bandwidth', LAST_7_DAYS],
  ['KEY-S', 'metrics-by-dimension', { ...LAST_7_DAYS, dimension: 'isp', metrics: 'beacons,page_load,bounce_rate,errors_per_page' }],
  ['KEY-S', 'metrics-by-dimension', { 'date-comparator': 'Last24Hours', dimension: 'custom_dimension_plan', metrics: 'beacons,page_load' }],
  ['KEY-S', 'dimension-values', { 'date-comparator': 'Last24Hours', dimension: 'connection_type' }],
  ['KEY-S', 'sessions-per-page-load-time', { 'date-comparator': 'Last30Days' }],
  ['KEY-S', 'metric-per-page-load-time', { ...LAST_7_DAYS, country: 'JP' }],
  ['KEY-S', 'dimension-over-time', { ...LAST_7_DAYS, dimension: 'device_type', 'series-format': 'json' }],
  ['KEY-S', 'dimension-over-time', { 'date-comparator': 'Last24Hours', dimension: 'page_group', 'series-format': 'json', interval: '15' }],
  ['KEY-A', 'dimension-over-time', { 'date-comparator': 'Last30Days', dimension: 'country', 'series-format': 'json', os: 'Android' }],
  ['KEY-S', 'app-error-summary', { 'date-comparator': 'Last24Hours' }],
  ['KEY-S', 'app-error-summary', { ...LAST_7_DAYS, browser: 'Edge/120' }],
];

async function answer(store: QueryStore, [key, type, query]: (typeof QUERIES)[number]): Promise<unknown> {
  if (type === 'dimension-over-time' || type === 'app-error-summary') return await store.emptyQuery(key, type, query);
  return await store.query(key, type, query);
}

describe('the Query API answers as the minute-by-minute model gave them', () => {
  it(
    'every query of the set, cold (a fresh store and cache for each) and again from what the first ones kept',
    async () => {
      const cold: unknown[] = [];
      for (const q of QUERIES) cold.push(await answer(new QueryStore(STATE, new ManualClock(NOW), { domains: () => DOMAINS }, new BlockCache(8 << 20)), q));
      // One store for all: later queries read the days and hours the earlier ones kept.
      const shared = new QueryStore(STATE, new ManualClock(NOW), { domains: () => DOMAINS }, new BlockCache(8 << 20));
      const warm: unknown[] = [];
      for (const q of QUERIES) warm.push(await answer(shared, q));
      expect(warm).toEqual(cold);
      const text = QUERIES.map((q, i) => `${JSON.stringify(q)}\n${JSON.stringify(cold[i])}`).join('\n\n');
      await expect(`${text}\n`).toMatchFileSnapshot('./answers.snapshot.txt');
    },
    10 * 60_000,
  );
});
