import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';
import type { State } from '../../src/state.js';
import { RateCounters, durationText } from '../../src/http/rate-limit.js';

const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';

let app: FastifyInstance;
afterEach(async () => app?.close());

const OTHER = { 'x-auth-token': 'other-token' };

function seed(): Partial<State> {
  const auth = authSeed();
  return {
    users: [...auth.users, { userName: 'other@example.com', password: 'pw', tenant: 'Default' }],
    tokens: [...auth.tokens, { token: 'other-token', userName: 'other@example.com', neverExpires: true }],
    domains: [{ id: 1, name: 'www.example.com' }],
    annotations: [{ id: 1, title: 't', text: 'x', start: T0, domainIds: [], source: 'REST API', type: 'USER_ENTERED', user: 'a' }],
    alerts: [
      { uid: 'one', name: 'One', enabled: true, channels: [], state: 'cleared', history: [] },
      { uid: 'two', name: 'Two', enabled: true, channels: [], state: 'cleared', history: [] },
    ],
  };
}

function expectLimited(res: LightMyRequestResponse, max: number, windowText: string, per: string): void {
  expect(res.statusCode).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json()).toEqual({
    statusCode: 429,
    error: 'Too Many Requests',
    message: expect.stringMatching(new RegExp(`^rate limit exceeded: at most ${max} requests? per ${windowText} per ${per}; retry in `)),
  });
  expect(res.headers['x-ratelimit-limit']).toBe(String(max));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
}

describe('annotations: per user', () => {
  it('answers 429 with the JSON body and headers once a user exceeds the limit', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 3, rateLimitWindowMs: 30_000 }));
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ url: ANNOTATIONS, headers: AUTH });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      remaining.push(String(res.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await app.inject({ url: ANNOTATIONS, headers: AUTH });
    expectLimited(limited, 3, '30 seconds', 'user');
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(30);
  });

  it('counts every operation of the interface together', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 4 }));
    const json = { ...AUTH, 'content-type': 'application/json' };
    const created = await app.inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: { title: 't', start: T0, text: 'x' } });
    expect(created.statusCode).toBe(200);
    expect((await app.inject({ url: `${ANNOTATIONS}/1`, headers: AUTH })).statusCode).toBe(200);
    expect((await app.inject({ method: 'PUT', url: `${ANNOTATIONS}/1`, headers: json, payload: { text: 'y' } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `${ANNOTATIONS}/${created.json().id}`, headers: AUTH })).statusCode).toBe(204);
    const limited = await app.inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: { title: 't', start: T0, text: 'x' } });
    expectLimited(limited, 4, '1 minute', 'user');
    // The refused create made nothing.
    expect((await app.inject({ url: ANNOTATIONS, headers: OTHER })).json()).toHaveLength(1);
  });

  it('counts a create refused for its Content-Type (415), and refuses a create over the limit (429) before looking at it', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 2 }));
    const text = { ...AUTH, 'content-type': 'text/plain' };
    const refused = await app.inject({ method: 'POST', url: ANNOTATIONS, headers: text, payload: 'x' });
    expect(refused.statusCode).toBe(415);
    expect(refused.headers['x-ratelimit-remaining']).toBe('1');
    expect((await app.inject({ method: 'PUT', url: `${ANNOTATIONS}/1`, headers: text, payload: 'x' })).headers['x-ratelimit-remaining']).toBe('0');
    expectLimited(await app.inject({ method: 'POST', url: ANNOTATIONS, headers: text, payload: 'x' }), 2, '1 minute', 'user');
  });

  it('keeps a separate count for each token', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 1 }));
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(200);
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(429);
    expect((await app.inject({ url: ANNOTATIONS, headers: OTHER })).statusCode).toBe(200);
  });

  it('does not count requests refused for a missing or invalid token', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 1 }));
    for (let i = 0; i < 3; i++) expect((await app.inject({ url: ANNOTATIONS })).statusCode).toBe(401);
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(200);
  });

  it('defaults to 100 requests per minute', async () => {
    ({ app } = await makeApp(seed()));
    const first = await app.inject({ url: ANNOTATIONS, headers: AUTH });
    expect(first.headers['x-ratelimit-limit']).toBe('100');
    expect(first.headers['x-ratelimit-reset']).toBe('60');
    for (let i = 1; i < 100; i++) await app.inject({ url: ANNOTATIONS, headers: AUTH });
    expectLimited(await app.inject({ url: ANNOTATIONS, headers: AUTH }), 100, '1 minute', 'user');
  });
});

describe('alerts: per alert uid', () => {
  it('answers 429 once one alert is called too often; fire and clear count together', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 2, rateLimitWindowMs: 10_000 }));
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` })).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/clear` })).statusCode).toBe(204);
    const limited = await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` });
    expectLimited(limited, 2, '10 seconds', 'alert');
    expect(app.world.stores.alerts.get('one').history).toHaveLength(2);
    // Another alert has its own count, whoever calls.
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/two/fire` })).statusCode).toBe(204);
  });

  it('counts only alerts that exist: a flood of unknown uids cannot lift a real alert\'s limit', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 2, rateLimitWindowMs: 60_000 }));
    for (let i = 0; i < 2; i++) expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` })).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` })).statusCode).toBe(429);
    // More unknown uids than the counters remember keys (RATE_LIMIT_KEYS).
    for (let batch = 0; batch < 11; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => app.inject({ method: 'POST', url: `${ALERTS}/nope-${batch}-${i}/fire` })),
      );
      for (const res of answers) expect(res.statusCode).toBe(404);
    }
    expect(app.world.stores.alerts.rateLimits.size).toBe(1);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/nope-0-0/fire` })).json().message).toBe("alert 'nope-0-0' does not exist");
    expectLimited(await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` }), 2, '1 minute', 'alert');
    expect(app.world.stores.alerts.get('one').history).toHaveLength(2);
  }, 60_000);

  it('limits per uid even when tokens are required, across callers', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 1, alertsRequireToken: true }));
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire`, headers: AUTH })).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire`, headers: OTHER })).statusCode).toBe(429);
  });
});

describe('scope and reset', () => {
  it('never limits provisioning, the repository service or the control API', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 1 }));
    const urls = [
      '/concerto/services/rest/CloudService/v1/grid/',
      '/concerto/services/rest/CloudService/v1/cloudserver/',
      '/concerto/services/rest/RepositoryService/v1/Objects/domain',
      '/_emulator/health',
    ];
    for (const url of urls) {
      for (let i = 0; i < 4; i++) {
        const res = await app.inject({ url, headers: AUTH });
        expect(res.statusCode, url).not.toBe(429);
        expect(res.headers, url).not.toHaveProperty('x-ratelimit-limit');
      }
    }
  });

  it('starts every window afresh when the emulator is reset or its state replaced', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 1 }));
    await app.inject({ url: ANNOTATIONS, headers: AUTH });
    await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` });
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(429);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` })).statusCode).toBe(429);
    app.world.reset();
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/one/fire` })).statusCode).toBe(204);
    app.world.replace(app.world.exportState());
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(200);
  });

  it('runs on real time: moving the emulator clock does not end a window', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed(), { rateLimitMax: 1, rateLimitWindowMs: 60_000 }));
    await app.inject({ url: ANNOTATIONS, headers: AUTH });
    clock.advance(3_600_000);
    expect((await app.inject({ url: ANNOTATIONS, headers: AUTH })).statusCode).toBe(429);
  });
});

describe('RateCounters', () => {
  it('counts in fixed windows that end windowMs after their first request', () => {
    let now = 1000;
    const counters = new RateCounters(10, () => now);
    expect(counters.hit('k', 500)).toEqual({ current: 1, ttl: 500 });
    now += 200;
    expect(counters.hit('k', 500)).toEqual({ current: 2, ttl: 300 });
    expect(counters.peek('k', 500)).toEqual({ current: 2, ttl: 300 });
    now += 299;
    expect(counters.hit('k', 500).current).toBe(3);
    now += 1;
    expect(counters.hit('k', 500)).toEqual({ current: 1, ttl: 500 });
    now += 500;
    expect(counters.peek('k', 500)).toEqual({ current: 0, ttl: 0 });
  });

  it('remembers at most `capacity` keys, forgetting the least recently used', () => {
    const counters = new RateCounters(3, () => 0);
    for (const key of ['a', 'b', 'c']) counters.hit(key, 1000);
    counters.hit('a', 1000);
    counters.hit('d', 1000);
    expect(counters.size).toBe(3);
    expect(counters.peek('b', 1000).current).toBe(0);
    expect(counters.peek('a', 1000).current).toBe(2);
    counters.clear();
    expect(counters.size).toBe(0);
  });

  it('keeps the order of use when a key is hit several times in a row', () => {
    const counters = new RateCounters(2, () => 0);
    counters.hit('a', 1000);
    counters.hit('a', 1000);
    counters.hit('b', 1000);
    counters.hit('a', 1000);
    // 'b' is now the least recently used.
    counters.hit('c', 1000);
    expect(counters.peek('b', 1000).current).toBe(0);
    expect(counters.peek('a', 1000).current).toBe(3);
    counters.hit('c', 1000);
    counters.hit('d', 1000);
    expect(counters.peek('a', 1000).current).toBe(0);
    expect(counters.peek('c', 1000).current).toBe(2);
    counters.clear();
    counters.hit('d', 1000);
    expect(counters.peek('d', 1000)).toEqual({ current: 1, ttl: 1000 });
  });

  it('words windows the way a person reads them', () => {
    expect(durationText(60_000)).toBe('1 minute');
    expect(durationText(120_000)).toBe('2 minutes');
    expect(durationText(1000)).toBe('1 second');
    expect(durationText(3_600_000)).toBe('1 hour');
    expect(durationText(1500)).toBe('1500 ms');
  });
});
