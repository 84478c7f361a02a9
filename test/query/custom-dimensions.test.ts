import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';
import type { QuerySections, RumModelSeed } from '../../src/query/schemas.js';

/**
 * Custom dimensions a fixture declares for an app: each splits the beacons as the built-in
 * ones do (a filter on one value keeps that value's share; all values add up to the whole),
 * is listed by dimension-values and taken by every query type that takes a dimension.
 */

const T0 = Date.UTC(2026, 10, 22, 9);
const DOMAINS = [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }];
const PLAN = { name: 'Plan', values: [{ name: 'Free', share: 0.6 }, { name: 'Pro', share: 0.3, loadTimeFactor: 0.8 }, { name: 'Enterprise', share: 0.1, loadTimeFactor: 0.6 }] };
const REGION = { name: 'store_region', values: [{ name: 'EU', share: 0.5 }, { name: 'NA', share: 0.5, loadTimeFactor: 1.2 }] };
const storeOf = (model: Partial<RumModelSeed> = { customDimensions: [PLAN, REGION] }) =>
  new QueryStore({ rumModels: [{ domainId: 7, ...model }], incidents: [] } as QuerySections, new ManualClock(T0), { domains: () => DOMAINS });

type Body = Record<string, unknown>;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const n = (body: Body) => Number(body.n ?? 0);

describe('the Query API: custom dimensions declared per app', () => {
  it('a filter on one value keeps its share; a value or a dimension the app lacks keeps none', async () => {
    const store = storeOf();
    const range = { date: '2026-11-21' };
    const all = n(await store.query('KEY-A', 'summary', range));
    const free = n(await store.query('KEY-A', 'summary', { ...range, 'custom-dimension-Plan': 'Free' }));
    expect(free / all).toBeGreaterThan(0.55);
    expect(free / all).toBeLessThan(0.65);
    expect(n(await store.query('KEY-A', 'summary', { ...range, 'custom-dimension-Plan': 'Gold' }))).toBe(0);
    expect(n(await store.query('KEY-A', 'summary', { ...range, 'custom-dimension-Shoe': 'Free' }))).toBe(0);
    const enterprise = await store.query('KEY-A', 'summary', { ...range, 'custom-dimension-Plan': 'Enterprise' });
    expect(Number(enterprise.median)).toBeLessThan(Number((await store.query('KEY-A', 'summary', range)).median));
  });

  it('dimension-values, metrics-by-dimension and dimension-over-time take custom_dimension_<name>', async () => {
    const store = storeOf();
    const range = { date: '2026-11-21' };
    expect(await store.query('KEY-A', 'dimension-values', { ...range, dimension: 'custom_dimension_Plan' })).toEqual({ values: ['Free', 'Pro', 'Enterprise'] });
    const rows = (await store.query('KEY-A', 'metrics-by-dimension', { ...range, dimension: 'custom_dimension_store_region', metrics: 'beacons' })).data as Array<[string, number]>;
    expect(rows.map((r) => r[0]).sort()).toEqual(['EU', 'NA']);
    expect(sum(rows.map((r) => r[1]))).toBe(n(await store.query('KEY-A', 'summary', range)));
    const over = await store.emptyQuery('KEY-A', 'dimension-over-time', { ...range, dimension: 'custom_dimension_Plan', 'series-format': 'json' });
    expect((over.series as { series: Array<{ name: string }> }).series.map((s) => s.name)).toEqual(['Free', 'Pro', 'Enterprise']);
  });

  it('refuses a custom dimension the app does not declare, naming the nearest one', async () => {
    await expect(storeOf().query('KEY-A', 'dimension-values', { dimension: 'custom_dimension_Plam' })).rejects.toThrow(
      "Invalid parameter: dimension is not a dimension (did you mean 'custom_dimension_Plan'?): custom_dimension_Plam",
    );
    await expect(storeOf({}).query('KEY-A', 'dimension-values', { dimension: 'custom_dimension_Plan' })).rejects.toThrow(/is not a dimension: custom_dimension_Plan/);
  });

  it('refuses a query filtering on more than 20 custom dimensions, naming the one too many', async () => {
    const query = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`custom-dimension-D${i}`, 'Gold']));
    await expect(storeOf().query('KEY-A', 'summary', query)).rejects.toThrow(
      'Invalid parameter: custom-dimension-D20 is one custom dimension filter more than 20: Gold',
    );
    const twenty = Object.fromEntries(Object.entries(query).slice(0, 20));
    expect(n(await storeOf().query('KEY-A', 'summary', { ...twenty, 'custom-dimension-D0': 'Gold' }))).toBe(0);
  });

  it('a model refuses a custom dimension named as a built-in one, named twice, or with a value named twice', () => {
    expect(() => storeOf({ customDimensions: [{ name: 'device_type', values: [{ name: 'x', share: 1 }] }] })).toThrow(
      "$.rumModels[0].customDimensions[0].name: 'device_type' is a built-in dimension's name",
    );
    expect(() => storeOf({ customDimensions: [{ name: 'PageGroup', values: [{ name: 'x', share: 1 }] }] })).toThrow(/is a built-in dimension's name/);
    expect(() => storeOf({ customDimensions: [PLAN, { ...PLAN, name: 'plan' }] })).toThrow("$.rumModels[0].customDimensions[1].name: 'plan' names another custom dimension");
    expect(() => storeOf({ customDimensions: [{ name: 'Tier', values: [{ name: 'A', share: 0.5 }, { name: 'A', share: 0.5 }] }] })).toThrow(
      "$.rumModels[0].customDimensions[0].values[1].name: 'A' is a value of this dimension already",
    );
  });

  it('declaring a custom dimension changes no number of a query that does not use it', async () => {
    const range = { 'date-comparator': 'Last3Hours', browser: 'Chrome/120' };
    expect(await storeOf().query('KEY-A', 'histogram', range)).toEqual(await storeOf({}).query('KEY-A', 'histogram', range));
  });
});

describe('the Query API: custom and built-in dimensions add up (properties)', () => {
  const store = storeOf();
  /** Each dimension: its filter parameter, its `dimension` name and its values. */
  const DIMENSIONS = [
    { param: 'custom-dimension-Plan', dimension: 'custom_dimension_Plan', values: PLAN.values.map((v) => v.name) },
    { param: 'custom-dimension-store_region', dimension: 'custom_dimension_store_region', values: REGION.values.map((v) => v.name) },
    { param: 'isp', dimension: 'isp', values: ['Comcast Cable', 'AT&T Internet', 'Verizon Wireless', 'Charter Communications', 'T-Mobile USA', 'British Telecommunications', 'Deutsche Telekom', 'Orange', 'Bharti Airtel', 'Telstra', 'NTT', 'Vivo', '(No Value)'] },
    { param: 'connection-type', dimension: 'connection_type', values: ['4g', '3g', '2g', 'slow-2g', '(No Value)'] },
    { param: 'device-type', dimension: 'device_type', values: ['Desktop', 'Mobile', 'Tablet'] },
    { param: 'os', dimension: 'os', values: ['Windows', 'iOS', 'Android', 'Mac OS X', 'Linux', 'Chrome OS'] },
  ];
  const ranges = fc.constantFrom<Record<string, string>>(
    { 'date-comparator': 'LastHour' },
    { 'date-comparator': 'Between', 'date-start': String(T0 - 5 * 3_600_000 - 17 * 60_000), 'date-end': String(T0 - 4 * 3_600_000) },
  );
  const others = fc.constantFrom<Record<string, string>>({}, { 'page-group': 'Checkout' }, { 'custom-dimension-Plan': 'Pro' }, { os: 'iOS', 'custom-dimension-store_region': 'EU' });

  it('the values of a dimension add up to the whole, and a filter on some equals the sum of their rows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...DIMENSIONS).chain((d) => fc.tuple(fc.constant(d), fc.subarray(d.values, { minLength: 1 }))),
        ranges,
        others,
        async ([{ param, dimension, values }, picked], range, filter) => {
          // A filter on the dimension under test would be replaced by each value's.
          fc.pre(!(param in filter));
          const base = { ...range, ...filter };
          const whole = n(await store.query('KEY-A', 'summary', base));
          let parts = 0;
          for (const value of values) parts += n(await store.query('KEY-A', 'summary', { ...base, [param]: value }));
          expect(parts).toBe(whole);
          const rows = (await store.query('KEY-A', 'metrics-by-dimension', { ...base, dimension, metrics: 'beacons' })).data as Array<[string, number]>;
          const byName = new Map(rows.map((r) => [r[0], r[1]]));
          expect(sum(rows.map((r) => r[1]))).toBe(whole);
          expect(n(await store.query('KEY-A', 'summary', { ...base, [param]: picked }))).toBe(sum(picked.map((v) => byName.get(v) ?? 0)));
        },
      ),
      replayable({ numRuns: 12 }),
    );
  });
});
