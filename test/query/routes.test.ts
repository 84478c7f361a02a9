import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { QueryStore } from '../../src/query/store.js';

const Q = '/concerto/mpulse/api/v2';
const SHOP = 'SHOP9-X4T7K-M2QRB-V8DNE-H5WZC';
const WWW = 'EXMPL-WWW7X-K4R2Q-N8TBD-ZC5HV';
const AUTH = { authentication: 'demo-token' };

let app: FastifyInstance;
let clock: ManualClock;
beforeEach(async () => {
  ({ app, clock } = await makeDemoApp());
});
afterEach(async () => app.close());

const get = async (path: string, headers: Record<string, string> = AUTH) => {
  const r = await app.inject({ url: `${Q}/${path}`, headers });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
};
const sumOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('the Query API: access', () => {
  it('takes the session token as Authentication or X-Auth-Token, and refuses none, a bad one, an unknown key', async () => {
    expect((await get(`${SHOP}/summary`)).status).toBe(200);
    expect((await get(`${SHOP}/summary`, { 'x-auth-token': 'demo-token' })).status).toBe(200);
    const none = await get(`${SHOP}/summary`, {});
    expect(none.status).toBe(401);
    expect(none.body.message).toMatch(/Authentication header is missing/);
    expect((await get(`${SHOP}/summary`, { authentication: 'nope' })).status).toBe(401);
    const unknown = await get('NO-SUCH-KEY/summary');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe("no app has the app key 'NO-SUCH-KEY'; the apiKey attribute of a domain object is its app key");
    expect((await get(`${SHOP}/not-a-type`)).status).toBe(404);
  });

  it('takes Authentication on the Query API only: the other interfaces still need X-Auth-Token', async () => {
    const r = await app.inject({ url: '/concerto/mpulse/api/annotations/v1', headers: AUTH });
    expect(r.statusCode).toBe(401);
    expect(r.json().message).toBe('the X-Auth-Token header is missing');
    // An unknown path under the Query API is refused without a token, like the interface itself.
    expect((await app.inject({ url: `${Q.toUpperCase()}/x/y/z` })).statusCode).toBe(401);
  });

  it('refuses a key of another tenant when the domain port names one', async () => {
    const c = new ManualClock(Date.UTC(2026, 10, 22, 9));
    const store = new QueryStore({ rumModels: [], incidents: [] }, c, { domains: () => [{ id: 1, name: 'a', apiKey: 'K', tenant: 'Acme' }] });
    await expect(store.query('K', 'summary', {}, 'Other')).rejects.toThrow(/belongs to another tenant/);
    expect((await store.query('K', 'summary', { 'date-comparator': 'LastHour' }, 'Acme')).n).not.toBeNull();
  });

  it('rate-limits per user with 429 and Retry-After', async () => {
    await app.close();
    ({ app, clock } = await makeDemoApp({ rateLimitMax: 2 }));
    expect((await get(`${SHOP}/summary?date-comparator=LastHour`)).status).toBe(200);
    expect((await get(`${SHOP}/summary?date-comparator=LastHour`)).status).toBe(200);
    const third = await get(`${SHOP}/summary?date-comparator=LastHour`);
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('the Query API: bodies', () => {
  it('summary: the five fields as strings; all null for a day with no data yet', async () => {
    const { body } = await get(`${SHOP}/summary?format=json&date-comparator=Last24Hours`);
    expect(Object.keys(body)).toEqual(['median', 'moe', 'n', 'p95', 'p98']);
    for (const v of Object.values(body)) expect(typeof v).toBe('string');
    expect(Number(body.p98)).toBeGreaterThan(Number(body.p95));
    expect(Number(body.p95)).toBeGreaterThan(Number(body.median));
    expect((await get(`${SHOP}/summary?date=2026-11-23`)).body).toEqual({ median: null, moe: null, n: null, p95: null, p98: null });
  });

  it('histogram, by-minute, bandwidth: series as a JavaScript literal by default, an object with series-format=json', async () => {
    const js = await get(`${SHOP}/histogram?date-comparator=LastHour`);
    expect(typeof js.body.series).toBe('string');
    expect(js.body.series).toMatch(/^\{series:\[\{name:"Number of Samples",aPoints:\[\{s:\d+,e:\d+,c:\d+\}/);
    const json = await get(`${SHOP}/histogram?date-comparator=LastHour&series-format=json`);
    const s = json.body.series.series[0];
    expect(Object.keys(s)).toEqual(['name', 'aPoints', 'kValue', 'median', 'percentile_name', 'p95', 'p98', 'buckets']);
    const minute = await get(`${SHOP}/by-minute?date-comparator=LastHour&series-format=json`);
    const m = minute.body.series.series[0];
    expect(m.aPoints).toHaveLength(60);
    expect(JSON.parse(m.aPoints[0].userdata)).toMatchObject({ name: 'MoE' });
    expect(minute.body).toMatchObject({ chartTitle: 'Time in ms', datasetName: 'RumPerMinuteLoadTimes' });
    expect((await get(`${SHOP}/bandwidth?series-format=json`)).body.series.series[0].name).toBe('Bandwidth Blocks');
  });

  it('timers-metrics: Beacons and PageLoad by default, 1440 minutes for Last24Hours', async () => {
    const { body } = await get(`${SHOP}/timers-metrics?format=json&date-comparator=Last24Hours`);
    expect(body.dataTimeZone).toBe('UTC');
    expect(body.values.map((v: { id: string }) => v.id)).toEqual(['Beacons', 'PageLoad']);
    expect(body.values[0].history).toHaveLength(1440);
  });

  it('the tables and the other types have the shapes the clients parse', async () => {
    const pg = (await get(`${SHOP}/page-groups?date=2026-11-21`)).body;
    expect(pg.columnNames).toEqual(['Page Group', 'Median Time (ms)', 'MoE (ms)', 'Measurements', '% of total']);
    const [name, median, moe, n, pc] = pg.data[0];
    expect([typeof name, typeof median, typeof moe, typeof n, typeof pc]).toEqual(['string', 'number', 'string', 'number', 'string']);
    expect((await get(`${SHOP}/browsers?date=2026-11-21`)).body.columnNames[0]).toBe('User Agent');
    expect((await get(`${SHOP}/ab-tests?date=2026-11-21`)).body.columnNames[0]).toBe('Test Name');
    const geo = (await get(`${SHOP}/geography?date=2026-11-21`)).body.data[0];
    expect(Object.keys(geo)).toEqual(['country', 'timerN', 'timerMedian', 'timerID']);
    expect((await get(`${SHOP}/metrics-by-dimension?dimension=browser&date=2026-11-21`)).body.columnNames).toEqual([
      'browser',
      'Conversion',
      'Cart Abandonment',
    ]);
    expect((await get(`${SHOP}/dimension-values?dimension=page_group&date=2026-11-21`)).body.values).toContain('Checkout');
    expect((await get(`${SHOP}/sessions-per-page-load-time?series-format=json`)).body.series.series[0].name).toBe('Sessions Per Page Load Time');
    expect((await get(`${SHOP}/metric-per-page-load-time?metric=Nope`)).body.series).toBeNull();
    expect((await get(`${SHOP}/dimension-over-time?dimension=browser&series-format=json`)).body.series.series[0].name).toBe('Chrome/120');
    expect((await get(`${SHOP}/app-error-summary?date=2026-11-23`)).body.data).toEqual([]);
  });
});

describe('the Query API: consistency and determinism', () => {
  it('summary n = histogram total = timers-metrics beacons = sum of its history = sum of every breakdown', async () => {
    const range = 'date=2026-11-21';
    const n = Number((await get(`${SHOP}/summary?${range}`)).body.n);
    expect(n).toBeGreaterThan(100_000);
    const histogram = (await get(`${SHOP}/histogram?${range}&series-format=json`)).body.series.series[0].aPoints;
    expect(sumOf(histogram.map((p: { c: number }) => p.c))).toBe(n);
    const beacons = (await get(`${SHOP}/timers-metrics?${range}`)).body.values[0];
    expect(beacons.latest).toBe(n);
    expect(sumOf(beacons.history)).toBe(n);
    for (const type of ['page-groups', 'browsers', 'ab-tests']) {
      const rows = (await get(`${SHOP}/${type}?${range}`)).body.data;
      expect(sumOf(rows.map((r: number[]) => r[3]))).toBe(n);
    }
    const geo = (await get(`${SHOP}/geography?${range}`)).body.data;
    expect(sumOf(geo.map((r: { timerN: string }) => Number(r.timerN)))).toBe(n);
  });

  it('drill-downs add up to the drill-down above them (property)', async () => {
    const browsers = ['Chrome/120', 'Mobile Safari/17', 'Chrome Mobile/120', 'Safari/17', 'Edge/120', 'Firefox/121', 'Samsung Internet/23'];
    await fc.assert(
      fc.asyncProperty(fc.subarray(browsers, { minLength: 1 }), fc.constantFrom('Checkout', 'Home', 'Search'), async (picked, group) => {
        const query = picked.map((b) => `browser=${encodeURIComponent(b)}`).join('&');
        const total = Number((await get(`${SHOP}/summary?date-comparator=Last3Hours&page-group=${group}&${query}`)).body.n ?? 0);
        const rows = (await get(`${SHOP}/browsers?date-comparator=Last3Hours&page-group=${group}&${query}`)).body.data;
        expect(sumOf(rows.map((r: number[]) => r[3]))).toBe(total);
      }),
      replayable({ numRuns: 8 }),
    );
  });

  it('the same seed and time answer the same; advancing the clock adds minutes', async () => {
    const first = await get(`${WWW}/timers-metrics?date-comparator=LastHour`);
    const other = (await makeDemoApp()).app;
    const again = await other.inject({ url: `${Q}/${WWW}/timers-metrics?date-comparator=LastHour`, headers: AUTH });
    await other.close();
    expect(again.json()).toEqual(first.body);
    const today = Number((await get(`${WWW}/summary?date-comparator=Today`)).body.n);
    clock.advance(10 * 60_000);
    const later = Number((await get(`${WWW}/summary?date-comparator=Today`)).body.n);
    expect(later).toBeGreaterThan(today);
  });

  it('an incident of the seed slows its page group and raises its errors for exactly its span', async () => {
    // The demo seed's checkout slowdown: 6 to 5 hours ago.
    const t0 = clock.now();
    const between = (from: number, to: number, group = 'Checkout') =>
      `date-comparator=Between&date-start=${t0 - from * 3_600_000}&date-end=${t0 - to * 3_600_000}&page-group=${group}`;
    const during = (await get(`${SHOP}/summary?${between(6, 5)}`)).body;
    const before = (await get(`${SHOP}/summary?${between(7, 6)}`)).body;
    expect(Number(during.median)).toBeGreaterThan(2 * Number(before.median));
    const errors = async (range: string) => (await get(`${SHOP}/timers-metrics?${range}&metric=ErrorsPerPage`)).body.values[0].latest;
    expect(await errors(between(6, 5))).toBeGreaterThan(5 * (await errors(between(7, 6))));
    const home = (await get(`${SHOP}/summary?${between(6, 5, 'Home')}`)).body;
    expect(Number(home.median)).toBeLessThan(Number(during.median) / 2);
  });

  it('an incident added through the control API shows at once, and goes when deleted', async () => {
    const q = `${WWW}/summary?date-comparator=Last30Minutes`;
    const before = Number((await get(q)).body.median);
    const created = await app.inject({
      method: 'POST',
      url: '/_emulator/incidents',
      payload: { domainId: 12345, startAgoMs: 1_800_000, endAgoMs: 0, loadTimeFactor: 3 },
    });
    expect(created.statusCode).toBe(201);
    expect(Number((await get(q)).body.median)).toBeGreaterThan(2 * before);
    expect((await app.inject({ method: 'DELETE', url: `/_emulator/incidents/${created.json().id}` })).statusCode).toBe(204);
    expect(Number((await get(q)).body.median)).toBe(before);
  });
});

describe('the Query API: parameters', () => {
  it.each([
    ['invalid-token=foo', 'Invalid parameter: invalid-token is not a parameter of this query: foo'],
    ['date=2026-02-30', 'Invalid parameter: date must be a calendar date (YYYY-MM-DD): 2026-02-30'],
    ['date-comparator=Sometime', 'Invalid parameter: date-comparator must be one of'],
    ['date-comparator=Between&date-start=2026-11-01', 'Invalid parameter: date-end is required with date-comparator Between'],
    ['date-comparator=Between&date-start=2026-01-01&date-end=2026-11-01', 'Invalid parameter: date-end spans more than 93 days'],
    ['date-comparator=Between&date-start=yesterday&date-end=2026-11-01', 'Invalid parameter: date-start must be a date'],
    ['date-comparator=Last', 'Invalid parameter: trailing-seconds is required'],
    ['percentile=0', 'Invalid parameter: percentile must be an integer from 1 to 99: 0'],
    ['timezone=Mars/Olympus', 'Invalid parameter: timezone must be a time zone name'],
    ['format=xml', 'Invalid parameter: format must be json: xml'],
    ['series-format=csv', 'Invalid parameter: series-format must be js or json: csv'],
    ['custom-timer=Nope', 'Invalid parameter: custom-timer is not a custom timer of this app: Nope'],
  ])('%s is refused with 400 and the InvalidParameter code', async (query, message) => {
    const { status, body } = await get(`${SHOP}/summary?${query}`);
    expect(status).toBe(400);
    expect(body.code).toBe('MPulseAPIException.InvalidParameter');
    expect(body.message).toContain(message);
  });

  it('the dimension and metrics of metrics-by-dimension are checked', async () => {
    expect((await get(`${SHOP}/metrics-by-dimension?dimension=some-fake-dimension`)).status).toBe(400);
    expect((await get(`${SHOP}/metrics-by-dimension?dimension=device_manufacturer`)).body.data).toEqual([]);
    expect((await get(`${SHOP}/metrics-by-dimension?dimension=browser&metrics=nope`)).status).toBe(400);
  });

  it('an unknown timer answers the page load; a drill-down to a value the model lacks has no data', async () => {
    const { body } = await get(`${SHOP}/timers-metrics?date-comparator=LastHour&timer=NoSuchTimer`);
    expect(body.values.map((v: { id: string }) => v.id)).toEqual(['PageLoad']);
    expect((await get(`${SHOP}/summary?country=ZZ`)).body.n).toBeNull();
    expect((await get(`${SHOP}/summary?device-model=iPhone`)).body.n).toBeNull();
  });

  it('a time zone moves the day', async () => {
    const utc = (await get(`${SHOP}/summary?date=2026-11-21`)).body.n;
    const tokyo = (await get(`${SHOP}/summary?date=2026-11-21&timezone=Asia/Tokyo`)).body.n;
    expect(tokyo).not.toBe(utc);
  });
});

describe('the requests of the public clients', () => {
  it("the Akamai CLI's default: summary for LastHour with format=json", async () => {
    const { status, body } = await get(`${SHOP}/summary?format=json&date-comparator=LastHour`);
    expect(status).toBe(200);
    expect(Number(body.n)).toBeGreaterThan(0);
  });

  it("the MCP server's smoke test: yesterday's summary of PageLoad", async () => {
    const { body } = await get(`${SHOP}/summary?date=2026-11-21&timer=PageLoad&format=json`);
    expect(Number.isInteger(Number(body.n))).toBe(true);
    expect(Number(body.median)).toBeGreaterThan(0);
  });

  it("the Julia client's calls: Last24Hours, format and series-format json; its parsing holds", async () => {
    const base = 'date-comparator=Last24Hours&format=json&series-format=json';
    const summary = (await get(`${SHOP}/summary?${base}`)).body;
    expect(Object.keys(summary)).toHaveLength(5);
    const histogram = (await get(`${SHOP}/histogram?${base}`)).body.series.series[0];
    for (const p of histogram.aPoints) expect(Object.keys(p)).toEqual(['s', 'e', 'c']);
    const tm = (await get(`${SHOP}/timers-metrics?${base}`)).body;
    expect(tm.values[0].history.length + 1).toBe(1441);
    const byMinute = (await get(`${SHOP}/by-minute?${base}&timer=DNS`)).body.series.series[0];
    expect(byMinute.aPoints).toHaveLength(1440);
    const bounce = (await get(`${SHOP}/metric-per-page-load-time?${base}`)).body.series.series[0];
    expect(bounce.aPoints[0]).toEqual({ x: expect.any(Number), y: expect.any(Number) });
    const groups = (await get(`${SHOP}/timers-metrics?${base}&page-group=Checkout&page-group=Search`)).body;
    expect(groups.values[0].history).toHaveLength(1440);
  });
});

describe('the Query API: hostile input', () => {
  it('answers a JSON error, never a crash, to malformed and oversized parameters', async () => {
    const many = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name}=v${i}`).join('&');
    const cases = [
      many('timer', 2000),
      many('page-group', 150),
      `timezone=${'A'.repeat(2000)}`,
      'date-comparator=Between&date-start=99999999999999&date-end=999999999999999',
      'date-comparator=Between&date-start=2026-11-21T25:00&date-end=2026-11-22',
      'date-comparator=Last&trailing-seconds=99999999999',
      'percentile=1e2',
      '__proto__=x',
      'constructor=x',
      'date=%00',
      `metrics=${'x,'.repeat(500)}&dimension=browser`,
    ];
    for (const query of cases) {
      const r = await app.inject({ url: `${Q}/${SHOP}/metrics-by-dimension?${query}`, headers: AUTH });
      expect(r.statusCode, query.slice(0, 80)).toBeLessThan(500);
      expect(Object.keys(r.json()), query.slice(0, 80)).toContain(r.statusCode === 200 ? 'columnNames' : 'message');
    }
  });

  it('a series longer than a day has hourly points on whole hours, after a partial first one', async () => {
    clock.advance(30 * 60_000 + 17_000);
    const { body } = await get(`${SHOP}/timers-metrics?date-comparator=Last7Days`);
    const history = body.values[0].history;
    // 7 days back from 09:30:17 is 09:30: a half hour, then 167 whole hours, then 09:00 to 09:30.
    expect(history).toHaveLength(169);
    expect(sumOf(history)).toBe(body.values[0].latest);
    expect(history[0]).toBeLessThan(history[1]);
  });
});
