import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';

/** `limit` caps the rows of a breakdown, `sortby` orders them by a column. */

const T0 = Date.UTC(2026, 10, 22, 9);
const store = () =>
  new QueryStore({ rumModels: [], incidents: [] }, new ManualClock(T0), { domains: () => [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }] });
const DAY = { date: '2026-11-21' };
type Row = [string, ...number[]];

describe('the Query API: limit and sortby', () => {
  it('limit keeps the first rows of a breakdown; % of total stays the share of every beacon', async () => {
    const s = store();
    const all = (await s.query('KEY-A', 'page-groups', DAY)).data as unknown[][];
    const three = (await s.query('KEY-A', 'page-groups', { ...DAY, limit: '3' })).data as unknown[][];
    expect(all.length).toBeGreaterThan(3);
    expect(three).toEqual(all.slice(0, 3));
    expect((await s.query('KEY-A', 'geography', { ...DAY, limit: '2' })).data).toEqual(((await s.query('KEY-A', 'geography', DAY)).data as unknown[]).slice(0, 2));
    expect((await s.query('KEY-A', 'dimension-values', { ...DAY, dimension: 'os', limit: '1' })).values).toEqual(['Windows']);
    const mbd = (await s.query('KEY-A', 'metrics-by-dimension', { ...DAY, dimension: 'isp', metrics: 'beacons', limit: '5' })).data as Row[];
    expect(mbd).toHaveLength(5);
  });

  it('sortby orders by a column: metrics largest first, the dimension by name', async () => {
    const s = store();
    const q = { ...DAY, dimension: 'browser', metrics: 'beacons,page_load,Conversion' };
    const byLoad = (await s.query('KEY-A', 'metrics-by-dimension', { ...q, sortby: 'page_load' })).data as Row[];
    const loads = byLoad.map((r) => r[2]);
    expect(loads).toEqual([...loads].sort((a, b) => b - a));
    expect(loads[0]).toBeGreaterThan(loads[loads.length - 1]);
    const byConversion = (await s.query('KEY-A', 'metrics-by-dimension', { ...q, sortby: 'Conversion', limit: '2' })).data as Row[];
    const conversions = ((await s.query('KEY-A', 'metrics-by-dimension', q)).data as Row[]).map((r) => r[3]).sort((a, b) => b - a);
    expect(byConversion.map((r) => r[3])).toEqual(conversions.slice(0, 2));
    const byName = ((await s.query('KEY-A', 'metrics-by-dimension', { ...q, sortby: 'browser' })).data as Row[]).map((r) => r[0]);
    expect(byName).toEqual([...byName].sort());
    const groups = ((await s.query('KEY-A', 'page-groups', { ...DAY, sortby: 'page_load' })).data as Row[]).map((r) => r[1]);
    expect(groups).toEqual([...groups].sort((a, b) => b - a));
    const blocks = (await s.query('KEY-A', 'bandwidth', { ...DAY, sortby: 'bw_block', 'series-format': 'json' })).series as { series: Array<{ aPoints: Array<{ x: string }> }> };
    expect(blocks.series[0].aPoints[0].x).toBe('< 64 Kbps');
    expect((await s.query('KEY-A', 'dimension-values', { ...DAY, dimension: 'country', sortby: 'country', limit: '3' })).values).toEqual(['(No Value)', 'AU', 'BR']);
  });

  it.each([
    [{ limit: '0' }, 'page-groups', 'Invalid parameter: limit must be an integer from 1 to 100000: 0'],
    [{ limit: 'ten' }, 'page-groups', 'Invalid parameter: limit must be an integer from 1 to 100000: ten'],
    [{ sortby: 'nope' }, 'page-groups', 'Invalid parameter: sortby must be one of page_group, beacons, page_load: nope'],
    [{ sortby: 'sessions', dimension: 'browser', metrics: 'beacons' }, 'metrics-by-dimension', 'Invalid parameter: sortby must be one of browser, beacons, page_load: sessions'],
    [{ limit: '5' }, 'summary', 'Invalid parameter: limit applies only to page-groups, browsers, ab-tests, geography, bandwidth, metrics-by-dimension, dimension-values, app-error-summary, dimension-over-time, not to summary: 5'],
    [{ sortby: 'beacons' }, 'by-minute', 'Invalid parameter: sortby applies only to page-groups, browsers, ab-tests, geography, bandwidth, metrics-by-dimension, dimension-values, app-error-summary, dimension-over-time, not to by-minute: beacons'],
  ] as const)('%o on %s is refused with a message naming the problem', async (query, type, message) => {
    await expect(store().query('KEY-A', type, { ...DAY, ...query })).rejects.toThrow(message);
  });
});
