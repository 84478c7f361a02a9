import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';
import { Value } from '@sinclair/typebox/value';
import { RumModelSeedSchema, type QuerySections } from '../../src/query/schemas.js';

/**
 * The split dimensions ISP, connection type, device type and operating system: each splits
 * the beacons as browsers and countries do (a filter on one value keeps that value's share,
 * all values add up to the whole, exactly).
 */

const T0 = Date.UTC(2026, 10, 22, 9);
const DOMAINS = [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }];
const storeOf = (state: Partial<QuerySections> = {}) =>
  new QueryStore({ rumModels: [], incidents: [], ...state }, new ManualClock(T0), { domains: () => DOMAINS });

/** Each new dimension: its filter parameter, its service dimension name, and its default values. */
const DIMENSIONS = [
  {
    param: 'isp',
    dimension: 'isp',
    values: [
      'Comcast Cable',
      'AT&T Internet',
      'Verizon Wireless',
      'Charter Communications',
      'T-Mobile USA',
      'British Telecommunications',
      'Deutsche Telekom',
      'Orange',
      'Bharti Airtel',
      'Telstra',
      'NTT',
      'Vivo',
      '(No Value)',
    ],
  },
  { param: 'connection-type', dimension: 'connection_type', values: ['4g', '3g', '2g', 'slow-2g', '(No Value)'] },
  { param: 'device-type', dimension: 'device_type', values: ['Desktop', 'Mobile', 'Tablet'] },
  { param: 'os', dimension: 'os', values: ['Windows', 'iOS', 'Android', 'Mac OS X', 'Linux', 'Chrome OS'] },
] as const;

type Body = Record<string, unknown>;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const histogramOf = (body: Body) => {
  const series = (body.series as { series: Array<{ aPoints: Array<{ s: number; c: number }> }> }).series;
  const counts = new Map<number, number>();
  for (const p of series[0]?.aPoints ?? []) counts.set(p.s, p.c);
  return counts;
};

describe('the Query API: ISP, connection type, device type and OS', () => {
  it.each(DIMENSIONS)('a filter on one $param keeps beacons, a value the model lacks keeps none', async ({ param, values }) => {
    const store = storeOf();
    const range = { 'date-comparator': 'Last3Hours' };
    const all = Number((await store.query('KEY-A', 'summary', range)).n);
    const one = Number((await store.query('KEY-A', 'summary', { ...range, [param]: values[0] })).n);
    expect(one).toBeGreaterThan(0);
    expect(one).toBeLessThan(all);
    expect((await store.query('KEY-A', 'summary', { ...range, [param]: 'No Such Value' })).n).toBeNull();
  });

  it('by-minute with an ISP draws that ISP\'s series (one line per ISP)', async () => {
    const store = storeOf();
    const body = await store.query('KEY-A', 'by-minute', { 'date-comparator': 'LastHour', isp: 'Comcast Cable', 'series-format': 'json' });
    const series = (body.series as { series: Array<{ pointCount: number; aPoints: Array<{ y: number }> }> }).series;
    expect(series).toHaveLength(1);
    expect(series[0].pointCount).toBeGreaterThan(50);
    expect(series[0].aPoints.every((p) => p.y > 0)).toBe(true);
  });

  it.each(DIMENSIONS)('dimension-values lists the $dimension values with beacons, most first', async ({ dimension, values }) => {
    const body = await storeOf().query('KEY-A', 'dimension-values', { dimension, date: '2026-11-21' });
    expect([...(body.values as string[])].sort()).toEqual([...values].sort());
  });

  it('slower values have slower medians: mobile slower than desktop, 3g slower than 4g', async () => {
    const store = storeOf();
    const rows = async (dimension: string) => {
      const body = await store.query('KEY-A', 'metrics-by-dimension', { dimension, metrics: 'beacons,page_load', date: '2026-11-21' });
      return new Map((body.data as Array<[string, number, number]>).map((r) => [r[0], r[2]]));
    };
    const devices = await rows('device_type');
    expect(devices.get('Mobile')!).toBeGreaterThan(devices.get('Desktop')!);
    const connections = await rows('connection_type');
    expect(connections.get('3g')!).toBeGreaterThan(connections.get('4g')!);
  });

  it('takes the values of a fixture model: isps, connectionTypes, deviceTypes, operatingSystems', async () => {
    const store = storeOf({
      rumModels: [
        {
          domainId: 7,
          isps: [{ name: 'Tiny Telco', share: 0.2, loadTimeFactor: 2 }, { name: 'Big Cable', share: 0.8 }],
          connectionTypes: [{ name: '4g', share: 1 }],
          deviceTypes: [{ name: 'Desktop', share: 0.5 }, { name: 'TV', share: 0.5 }],
          operatingSystems: [{ name: 'Plan 9', share: 1 }],
        },
      ],
    });
    const values = async (dimension: string) => (await store.query('KEY-A', 'dimension-values', { dimension, date: '2026-11-21' })).values;
    expect(await values('isp')).toEqual(['Big Cable', 'Tiny Telco']);
    expect(await values('connection_type')).toEqual(['4g']);
    expect([...((await values('device_type')) as string[])].sort()).toEqual(['Desktop', 'TV']);
    expect(await values('os')).toEqual(['Plan 9']);
    const range = { date: '2026-11-21' };
    const all = Number((await store.query('KEY-A', 'summary', range)).n);
    expect(Number((await store.query('KEY-A', 'summary', { ...range, os: 'Plan 9' })).n)).toBe(all);
    expect((await store.query('KEY-A', 'summary', { ...range, os: 'Windows' })).n).toBeNull();
    const tiny = await store.query('KEY-A', 'summary', { ...range, isp: 'Tiny Telco' });
    const big = await store.query('KEY-A', 'summary', { ...range, isp: 'Big Cable' });
    expect(Number(tiny.median)).toBeGreaterThan(1.5 * Number(big.median));
    expect(Number(tiny.n) + Number(big.n)).toBe(all);
  });

  it('a fixture model\'s lists are checked as browsers and countries are: not empty, a share in (0, 1]', () => {
    expect(Value.Check(RumModelSeedSchema, { domainId: 7, isps: [{ name: 'A', share: 1 }], operatingSystems: [{ name: 'B', share: 0.5 }] })).toBe(true);
    expect(Value.Check(RumModelSeedSchema, { domainId: 7, isps: [] })).toBe(false);
    expect(Value.Check(RumModelSeedSchema, { domainId: 7, deviceTypes: [{ name: 'TV', share: 0 }] })).toBe(false);
    expect(Value.Check(RumModelSeedSchema, { domainId: 7, connectionTypes: [{ name: '5g', share: 0.5, speed: 3 }] })).toBe(false);
  });
});

describe('the Query API: the new dimensions add up (properties)', () => {
  const ranges = fc.constantFrom(
    { 'date-comparator': 'LastHour' },
    { 'date-comparator': 'Last3Hours' },
    { 'date-comparator': 'Between', 'date-start': String(T0 - 5 * 3_600_000 - 17 * 60_000), 'date-end': String(T0 - 4 * 3_600_000) },
  );
  const others = fc.constantFrom<Record<string, string>>({}, { 'page-group': 'Checkout' }, { browser: 'Chrome/120' }, { country: 'US', 'ab-test': 'Control' });

  it('the values of a dimension add up to the whole: summary n, histogram buckets, beacons per minute', async () => {
    const store = storeOf();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...DIMENSIONS), ranges, others, async ({ param, values }, range, filter) => {
        const base = { ...range, ...filter };
        const whole = await store.query('KEY-A', 'summary', base);
        const wholeHistogram = histogramOf(await store.query('KEY-A', 'histogram', { ...base, 'series-format': 'json' }));
        const wholeHistory = ((await store.query('KEY-A', 'timers-metrics', base)).values as Array<{ history: number[] }>)[0].history;
        let n = 0;
        const histogram = new Map<number, number>();
        const history = wholeHistory.map(() => 0);
        for (const value of values) {
          const q = { ...base, [param]: value };
          n += Number((await store.query('KEY-A', 'summary', q)).n ?? 0);
          for (const [s, c] of histogramOf(await store.query('KEY-A', 'histogram', { ...q, 'series-format': 'json' }))) histogram.set(s, (histogram.get(s) ?? 0) + c);
          const part = ((await store.query('KEY-A', 'timers-metrics', q)).values as Array<{ history: number[] }>)[0].history;
          part.forEach((x, i) => (history[i] += x));
        }
        expect(n).toBe(Number(whole.n ?? 0));
        expect(new Map([...histogram].filter(([, c]) => c > 0))).toEqual(wholeHistogram);
        expect(history).toEqual(wholeHistory);
      }),
      replayable({ numRuns: 6 }),
    );
  });

  it('a filter on some values equals the sum of their rows of the drill-down', async () => {
    const store = storeOf();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...DIMENSIONS).chain((d) => fc.tuple(fc.constant(d), fc.subarray([...d.values], { minLength: 1 }))),
        ranges,
        others,
        async ([{ param, dimension }, picked], range, filter) => {
          const base = { ...range, ...filter };
          const rows = (await store.query('KEY-A', 'metrics-by-dimension', { ...base, dimension, metrics: 'beacons,page_load,errors_per_page' })).data as Array<
            [string, number, number, number]
          >;
          const byName = new Map(rows.map((r) => [r[0], r]));
          expect(sum(rows.map((r) => r[1]))).toBe(Number((await store.query('KEY-A', 'summary', base)).n ?? 0));
          const kept = await store.query('KEY-A', 'summary', { ...base, [param]: picked });
          expect(Number(kept.n ?? 0)).toBe(sum(picked.map((v) => byName.get(v)?.[1] ?? 0)));
          if (picked.length === 1 && byName.has(picked[0])) {
            const row = byName.get(picked[0])!;
            expect(Number(kept.median)).toBe(row[2]);
            const one = await store.query('KEY-A', 'metrics-by-dimension', { ...base, [param]: picked[0], dimension, metrics: 'beacons,page_load,errors_per_page' });
            expect(one.data).toEqual([row]);
          }
        },
      ),
      replayable({ numRuns: 10 }),
    );
  });
});
