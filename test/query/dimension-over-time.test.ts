import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';

/** dimension-over-time: the beacons of each value of a dimension per point of the range. */

const T0 = Date.UTC(2026, 10, 22, 9);
const store = () =>
  new QueryStore({ rumModels: [], incidents: [] }, new ManualClock(T0), { domains: () => [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }] });
type Series = { name: string; aPoints: Array<{ x: number; y: number }>; pointCount: number; statistics: { ySum: number } };
const seriesOf = async (s: QueryStore, q: Record<string, string>) =>
  ((await s.emptyQuery('KEY-A', 'dimension-over-time', { ...q, 'series-format': 'json' })).series as { series: Series[] }).series;

describe('the Query API: dimension-over-time', () => {
  it('answers one series per value, most beacons first, adding up at every point to the beacons of the whole', async () => {
    const s = store();
    const q = { 'date-comparator': 'LastHour', dimension: 'device_type', 'page-group': 'Product' };
    const series = await seriesOf(s, q);
    expect(series.map((r) => r.name)).toEqual(['Desktop', 'Mobile', 'Tablet']);
    expect(series.every((r) => r.pointCount === 60)).toBe(true);
    expect(series[0].aPoints[0].x).toBe(T0 - 3_600_000);
    const beacons = ((await s.query('KEY-A', 'timers-metrics', { ...q, metric: 'Beacons' })).values as Array<{ history: number[] }>)[0].history;
    expect(beacons.map((_, i) => series.reduce((a, r) => a + r.aPoints[i].y, 0))).toEqual(beacons);
  });

  it('takes limit (the first series) and interval (minutes per point)', async () => {
    const s = store();
    const all = await seriesOf(s, { 'date-comparator': 'Last3Hours', dimension: 'isp' });
    const two = await seriesOf(s, { 'date-comparator': 'Last3Hours', dimension: 'isp', limit: '2' });
    expect(two).toEqual(all.slice(0, 2));
    const hourly = await seriesOf(s, { 'date-comparator': 'Last3Hours', dimension: 'isp', interval: '60' });
    expect(hourly[0].pointCount).toBe(3);
    expect(hourly[0].statistics.ySum).toBe(all.find((r) => r.name === hourly[0].name)!.statistics.ySum);
  });

  it('answers no series for a dimension the model lacks, and refuses no dimension, an unknown one, and sortby', async () => {
    const s = store();
    expect(await seriesOf(s, { dimension: 'device_manufacturer' })).toEqual([]);
    await expect(s.emptyQuery('KEY-A', 'dimension-over-time', {})).rejects.toThrow('Invalid parameter: dimension is required: (missing)');
    await expect(s.emptyQuery('KEY-A', 'dimension-over-time', { dimension: 'shoeSize' })).rejects.toThrow('Invalid parameter: dimension is not a dimension: shoeSize');
    await expect(s.emptyQuery('KEY-A', 'dimension-over-time', { dimension: 'os', sortby: 'os' })).rejects.toThrow(
      'Invalid parameter: sortby does not apply to dimension-over-time (its series are ordered by beacons): os',
    );
  });
});
