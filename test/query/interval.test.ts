import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';

/** `interval`: the minutes per point of by-minute and timers-metrics. */

const T0 = Date.UTC(2026, 10, 22, 9);
const store = () =>
  new QueryStore({ rumModels: [], incidents: [] }, new ManualClock(T0), { domains: () => [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }] });

describe('the Query API: interval', () => {
  it('by-minute answers one point per interval, each the median of its minutes', async () => {
    const s = store();
    const body = await s.query('KEY-A', 'by-minute', { 'date-comparator': 'LastHour', interval: '5', 'series-format': 'json' });
    const points = (body.series as { series: Array<{ aPoints: Array<{ x: number; y: number }> }> }).series[0].aPoints;
    expect(points).toHaveLength(12);
    expect(points.map((p) => p.x)).toEqual(Array.from({ length: 12 }, (_, i) => T0 - 3_600_000 + i * 300_000));
    for (const p of [points[0], points[7]]) {
      const summary = await s.query('KEY-A', 'summary', { 'date-comparator': 'Between', 'date-start': String(p.x), 'date-end': String(p.x + 300_000) });
      expect(p.y).toBe(Number(summary.median));
    }
  });

  it('timers-metrics answers one history value per interval; the beacons add up to latest', async () => {
    const body = await store().query('KEY-A', 'timers-metrics', { 'date-comparator': 'Last3Hours', interval: '15' });
    const [beacons, pageLoad] = body.values as Array<{ id: string; history: number[]; latest: number }>;
    expect(beacons.history).toHaveLength(12);
    expect(beacons.history.reduce((a, b) => a + b, 0)).toBe(beacons.latest);
    expect(pageLoad.history).toHaveLength(12);
  });

  it.each([
    [{ interval: '7' }, 'by-minute', 'Invalid parameter: interval must be a number of minutes that divides a day (1, 5, 15, 60, 1440, ...): 7'],
    [{ interval: '0' }, 'by-minute', 'Invalid parameter: interval must be an integer from 1 to 1440: 0'],
    [{ interval: '1', 'date-comparator': 'Last7Days' }, 'timers-metrics', 'Invalid parameter: interval gives 10080 points over this range, more than 1440: 1'],
    [{ interval: '60' }, 'summary', 'Invalid parameter: interval applies only to by-minute, timers-metrics, dimension-over-time, not to summary: 60'],
  ] as const)('%o on %s is refused with a message naming the problem', async (query, type, message) => {
    await expect(store().query('KEY-A', type, { 'date-comparator': 'LastHour', ...query })).rejects.toThrow(message);
  });
});
