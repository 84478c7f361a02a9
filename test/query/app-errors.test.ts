import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';
import type { QuerySections } from '../../src/query/schemas.js';

/** app-error-summary: the JavaScript errors of the model, by message. */

const T0 = Date.UTC(2026, 10, 22, 9);
const storeOf = (state: Partial<QuerySections> = {}) =>
  new QueryStore({ rumModels: [], incidents: [], ...state }, new ManualClock(T0), { domains: () => [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }] });
type Row = [string, number];
const sum = (rows: Row[]) => rows.reduce((a, r) => a + r[1], 0);
const appErrors = async (s: QueryStore, q: Record<string, string>) =>
  ((await s.query('KEY-A', 'timers-metrics', { ...q, metric: 'AppErrors' })).values as Array<{ latest: number }>)[0].latest;

describe('the Query API: app-error-summary', () => {
  it('answers the errors by message, most first, adding up to the AppErrors of the same beacons', async () => {
    const s = storeOf();
    const queries: Array<Record<string, string>> = [{ date: '2026-11-21' }, { date: '2026-11-21', 'device-type': 'Desktop' }, { 'date-comparator': 'Last3Hours', os: 'Android' }];
    for (const q of queries) {
      const body = await s.emptyQuery('KEY-A', 'app-error-summary', q);
      expect(body.columnNames).toEqual(['Error', 'Count']);
      const rows = body.data as Row[];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.map((r) => r[1])).toEqual(rows.map((r) => r[1]).sort((a, b) => b - a));
      expect(sum(rows)).toBe(await appErrors(s, q));
    }
    const day = (await s.emptyQuery('KEY-A', 'app-error-summary', { date: '2026-11-21' })).data as Row[];
    expect(day).toHaveLength(10);
    expect(day[0][0]).toBe("Uncaught TypeError: Cannot read properties of undefined (reading 'length')");
    expect((await s.emptyQuery('KEY-A', 'app-error-summary', { date: '2026-11-23' })).data).toEqual([]);
  });

  it('an incident with an errorFactor raises the counts for its span', async () => {
    const range = { 'date-comparator': 'LastHour' };
    const calm = sum((await storeOf().emptyQuery('KEY-A', 'app-error-summary', range)).data as Row[]);
    const incident = { id: 1, domainId: 7, startAgoMs: 3_600_000, endAgoMs: 0, loadTimeFactor: 1, errorFactor: 10, trafficFactor: 1 };
    const stormy = sum((await storeOf({ incidents: [incident] }).emptyQuery('KEY-A', 'app-error-summary', range)).data as Row[]);
    expect(stormy).toBeGreaterThan(8 * calm);
  });

  it('takes limit and sortby (Count, the default, or Error: A to Z), and refuses another sortby', async () => {
    const s = storeOf();
    const q = { date: '2026-11-21' };
    const all = (await s.emptyQuery('KEY-A', 'app-error-summary', q)).data as Row[];
    expect((await s.emptyQuery('KEY-A', 'app-error-summary', { ...q, limit: '3' })).data).toEqual(all.slice(0, 3));
    const byName = ((await s.emptyQuery('KEY-A', 'app-error-summary', { ...q, sortby: 'Error' })).data as Row[]).map((r) => r[0]);
    expect(byName).toEqual(all.map((r) => r[0]).sort());
    await expect(s.emptyQuery('KEY-A', 'app-error-summary', { ...q, sortby: 'beacons' })).rejects.toThrow('Invalid parameter: sortby must be one of Error, Count: beacons');
  });
});
