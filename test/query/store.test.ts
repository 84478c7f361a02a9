import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import { ManualClock } from '../../src/core/clock.js';
import { BlockCache, QUERY_CACHE_BYTES, QueryStore } from '../../src/query/store.js';
import { BUCKETS, BUCKET_EDGES, RumGenerator, modelOf, percentileOf, statsOf } from '../../src/query/model.js';
import type { QuerySections } from '../../src/query/schemas.js';
import { makeApp, makeDemoApp } from '../helpers/app.js';

const T0 = Date.UTC(2026, 10, 22, 9);
const DOMAINS = [
  { id: 7, name: 'a.example.com', apiKey: 'KEY-A' },
  { id: 8, name: 'b.example.com', apiKey: 'KEY-B' },
];
const storeOf = (state: Partial<QuerySections> = {}, clock = new ManualClock(T0)) =>
  new QueryStore({ rumModels: [], incidents: [], ...state }, clock, { domains: () => DOMAINS });

describe('the Query API store', () => {
  it('gives a domain without a model one derived from its id: different domains, different numbers', async () => {
    const store = storeOf();
    const a = await store.query('KEY-A', 'summary', { 'date-comparator': 'Last24Hours' });
    const b = await store.query('KEY-B', 'summary', { 'date-comparator': 'Last24Hours' });
    expect(a.n).not.toBe(b.n);
    expect(store.modelOf(7).pageGroups.length).toBeGreaterThan(1);
  });

  it('follows a fixture model: more traffic, a slower median', async () => {
    const base = await storeOf().query('KEY-A', 'summary', { date: '2026-11-21' });
    const busy = await storeOf({ rumModels: [{ domainId: 7, beaconsPerMinute: 5000, pageLoadMedianMs: 8000 }] }).query('KEY-A', 'summary', { date: '2026-11-21' });
    expect(Number(busy.n)).toBeGreaterThan(Number(base.n));
    expect(Number(busy.median)).toBeGreaterThan(6000);
  });

  it('has data only up to now: a day in the future has none, and a weekday has more than a weekend day', async () => {
    const store = storeOf();
    expect((await store.query('KEY-A', 'summary', { date: '2026-11-23' })).n).toBeNull();
    const saturday = Number((await store.query('KEY-A', 'summary', { date: '2026-11-21' })).n);
    const thursday = Number((await store.query('KEY-A', 'summary', { date: '2026-11-19' })).n);
    expect(thursday).toBeGreaterThan(saturday);
  });

  it('refuses seed incidents without exactly one start and one end, or ending before they start', () => {
    expect(() => storeOf({ incidents: [{ id: 1, domainId: 7, loadTimeFactor: 2, errorFactor: 1, trafficFactor: 1, endAgoMs: 0 }] })).toThrow(
      /give exactly one of start and startAgoMs/,
    );
    expect(() => storeOf({ incidents: [{ id: 1, domainId: 7, loadTimeFactor: 2, errorFactor: 1, trafficFactor: 1, start: 5, end: 5 }] })).toThrow(
      /end \(5\) is not after start \(5\)/,
    );
  });

  it('exports incidents with their times relative to the export, those of the seed as given, those added on stage always; and counts them', () => {
    const store = storeOf({ incidents: [{ id: 3, domainId: 7, loadTimeFactor: 2, errorFactor: 1, trafficFactor: 1, startAgoMs: 60_000, endAgoMs: 0 }] });
    store.createIncident({ domainId: 8, start: T0 - 10, end: T0, title: 'x' });
    store.createIncident({ domainId: 8, startAgoMs: 1000, endAgoMs: -1000 });
    // Exported 5 s after the load: the relative times have aged by as much.
    expect(store.export(T0 + 5000).incidents).toEqual([
      { id: 3, domainId: 7, loadTimeFactor: 2, errorFactor: 1, trafficFactor: 1, startAgoMs: 65_000, endAgoMs: 5000 },
      // Given absolute while the world ran: relative too, so that it keeps its age (docs/fixtures.md, "Time").
      { id: 4, domainId: 8, title: 'x', startAgoMs: 5010, endAgoMs: 5000, loadTimeFactor: 1, errorFactor: 1, trafficFactor: 1 },
      { id: 5, domainId: 8, startAgoMs: 6000, endAgoMs: 4000, loadTimeFactor: 1, errorFactor: 1, trafficFactor: 1 },
    ]);
    expect(store.counts()).toEqual({ rumModels: 0, incidents: 3 });
    store.deleteIncident(3);
    expect(store.counts().incidents).toBe(2);
    expect(() => store.deleteIncident(3)).toThrow(/incident 3 does not exist/);
  });

  it('is deterministic whatever the order of queries, and the cache does not change an answer', async () => {
    const queries = ['Last24Hours', 'Last7Days', 'Last30Days', 'LastHour', 'Yesterday'];
    const answers = new Map<string, unknown>();
    for (const q of queries) answers.set(q, await storeOf().query('KEY-A', 'timers-metrics', { 'date-comparator': q }));
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(queries, { minLength: 1 }), async (order) => {
        const store = storeOf();
        for (const q of order) expect(await store.query('KEY-A', 'timers-metrics', { 'date-comparator': q })).toEqual(answers.get(q));
      }),
      replayable({ numRuns: 5 }),
    );
  });

  it('lets other work in while it works out a long range, and answers the same as at once', async () => {
    const store = storeOf();
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const answer = await store.query('KEY-A', 'browsers', { 'date-comparator': 'Last30Days' });
    counting = false;
    // Thirty days of fresh data split by browser are worked out six hours at a time, with the event loop turning between.
    expect(turns).toBeGreaterThanOrEqual(25);
    expect(await storeOf().query('KEY-A', 'browsers', { 'date-comparator': 'Last30Days' })).toEqual(answer);
  });

  it('answers a range it answered from the cache until the next minute completes, and afresh once an incident changes it', async () => {
    const clock = new ManualClock(T0 + 30 * 60_000 + 15_000);
    const store = storeOf({}, clock);
    const minutes = () => {
      let n = 0;
      const real = RumGenerator.prototype.addMinute;
      RumGenerator.prototype.addMinute = function (this: RumGenerator, ...args: Parameters<typeof real>) {
        n++;
        return real.apply(this, args);
      };
      return { count: () => n, restore: () => (RumGenerator.prototype.addMinute = real) };
    };
    const first = await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' });
    const counted = minutes();
    try {
      expect(await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' })).toEqual(first);
      // Within the same minute: nothing is worked out again (it was up to 118 minutes a request).
      expect(counted.count()).toBe(0);
      clock.advance(60_000);
      const next = await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' });
      expect(counted.count()).toBeGreaterThan(0);
      expect(next).toEqual(await storeOf({}, new ManualClock(clock.now())).query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' }));
      // Another percentile over the same counts is its own answer, and the first one comes back unchanged.
      const p90 = await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days', percentile: '90' });
      expect(Number(p90.median)).toBeGreaterThan(Number(next.median));
      expect(await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' })).toEqual(next);
      // A drill-down is its own selection: fewer beacons than every one (one of the two tests, 45% of them).
      const control = await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days', 'ab-test': 'Control' });
      expect(Number(control.n)).toBeGreaterThan(0);
      expect(Number(control.n)).toBeLessThan(Number(next.n));
      // An incident over the range changes the numbers: the answer kept for it is not used.
      store.createIncident({ domainId: 7, start: clock.now() - 3_600_000, end: clock.now(), loadTimeFactor: 5, title: 'slow' });
      expect((await store.query('KEY-A', 'summary', { 'date-comparator': 'Last30Days' })).median).not.toBe(next.median);
    } finally {
      counted.restore();
    }
  });
});

describe('the generator', () => {
  it('splits a minute over the page groups and buckets without losing a beacon (property)', () => {
    const model = modelOf(7, undefined);
    const gen = new RumGenerator(model, []);
    fc.assert(
      fc.property(fc.integer({ min: 29_000_000, max: 29_500_000 }), (minute) => {
        const whole = new Float64Array(BUCKETS + 1);
        gen.addMinute(whole, minute, model.timers[0], {});
        const byGroup = new Float64Array(model.pageGroups.length * (BUCKETS + 1));
        gen.addMinute(byGroup, minute, model.timers[0], {}, 'pageGroup');
        const byCountry = new Float64Array(model.dimensions.country.length * (BUCKETS + 1));
        gen.addMinute(byCountry, minute, model.timers[0], {}, 'country');
        for (let k = 0; k <= BUCKETS; k++) {
          let groups = 0;
          for (let g = 0; g < model.pageGroups.length; g++) groups += byGroup[g * (BUCKETS + 1) + k];
          let countries = 0;
          for (let c = 0; c < model.dimensions.country.length; c++) countries += byCountry[c * (BUCKETS + 1) + k];
          expect(groups).toBe(whole[k]);
          expect(countries).toBe(whole[k]);
        }
      }),
      replayable({ numRuns: 50 }),
    );
  });

  it('reads percentiles off the buckets, interpolated within one', () => {
    const block = new Float64Array(BUCKETS + 1);
    const k = BUCKET_EDGES.indexOf(1050);
    block[k] = 10;
    expect(percentileOf(block, 10, 0.5)).toBe(1125);
    expect(statsOf(block).n).toBe(10);
  });
});

describe('the Query API in the world', () => {
  it('keeps its sections in the state: an export imports back to the same answers', async () => {
    const { app } = await makeDemoApp();
    const url = '/concerto/mpulse/api/v2/SHOP9-X4T7K-M2QRB-V8DNE-H5WZC/summary?date-comparator=Last24Hours';
    const before = (await app.inject({ url, headers: { authentication: 'demo-token' } })).json();
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    expect(state.rumModels).toHaveLength(1);
    expect(state.incidents).toHaveLength(4);
    const { app: other } = await makeApp(state);
    expect((await other.inject({ url, headers: { authentication: 'demo-token' } })).json()).toEqual(before);
    await Promise.all([app.close(), other.close()]);
  });

  it('a sandbox has incidents of its own', async () => {
    const { app } = await makeDemoApp();
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1' })).statusCode).toBeLessThan(300);
    const created = await app.inject({ method: 'POST', url: '/sandbox/w1/_emulator/incidents', payload: { domainId: 12345, startAgoMs: 60_000, endAgoMs: 0 } });
    expect(created.statusCode).toBe(201);
    expect((await app.inject({ url: '/sandbox/w1/_emulator/incidents' })).json()).toHaveLength(5);
    expect((await app.inject({ url: '/_emulator/incidents' })).json()).toHaveLength(4);
    await app.close();
  });

  it('bounds its cache in bytes', async () => {
    expect(QUERY_CACHE_BYTES).toBe(16 * 1024 * 1024);
    const cache = new BlockCache(8 * 1024 * 1024);
    const store = new QueryStore({ rumModels: [], incidents: [] }, new ManualClock(T0), { domains: () => DOMAINS }, cache);
    // Enough distinct (timer, day) blocks to overflow the bound several times.
    for (const timer of ['PageLoad', 'DNS', 'TCP', 'SSL', 'FirstByte', 'DomLoad', 'DomReady', 'FirstLastByte']) {
      await store.query('KEY-A', 'geography', { 'date-comparator': 'Last7Days', timer });
    }
    expect(cache.size).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(cache.size).toBeGreaterThan(4 * 1024 * 1024);
  });

  it('shares one bounded cache between the stores of every world, each reading only its own blocks', async () => {
    const cache = new BlockCache(4 * 1024 * 1024);
    const stores = [0, 1, 2, 3].map(() => new QueryStore({ rumModels: [], incidents: [] }, new ManualClock(T0), { domains: () => DOMAINS }, cache));
    const answers: unknown[] = [];
    for (const store of stores) {
      for (const timer of ['PageLoad', 'DNS', 'TCP']) answers.push(await store.query('KEY-A', 'geography', { 'date-comparator': 'Last7Days', timer }));
      // Held by the one cache, not by one cache per store: four stores' blocks stay within its bound.
      expect(cache.size).toBeLessThanOrEqual(4 * 1024 * 1024);
    }
    expect(cache.size).toBeGreaterThan(2 * 1024 * 1024);
    // Each store answers the same as a store of its own would.
    const alone = await storeOf().query('KEY-A', 'geography', { 'date-comparator': 'Last7Days', timer: 'TCP' });
    expect(answers[11]).toEqual(alone);
  });
});
