import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';
import type { State } from '../../src/state.js';
import type { World } from '../../src/interfaces.js';

const BASE = '/concerto/mpulse/api/alerts';

let app: FastifyInstance;
afterEach(async () => app?.close());

function seed(): Partial<State> {
  return {
    ...authSeed(),
    alerts: [
      {
        uid: 'a1b2c3',
        name: 'Checkout errors',
        enabled: true,
        message: 'Checkout error rate above 5%',
        subject: '[ALERT] Checkout errors',
        channels: [
          { type: 'email', target: 'ops@example.com' },
          { type: 'webhook', target: 'https://hooks.example.com/alerts' },
        ],
        state: 'cleared',
        history: [],
      },
      { uid: 'bare', name: 'No defaults', enabled: true, channels: [], state: 'cleared', history: [] },
      { uid: 'off', name: 'Retired alert', enabled: false, channels: [], state: 'cleared', history: [] },
    ],
  };
}

const emulatorOf = (a: FastifyInstance): World => a.world;
const alert = (uid: string) => emulatorOf(app).stores.alerts.get(uid);
const post = (url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `${BASE}${url}`,
    headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
    payload: payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

describe('fire and clear', () => {
  it('fires with no body: 204, the default content is recorded and the alert is firing', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed()));
    clock.advance(5000);
    const res = await post('/a1b2c3/fire');
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(alert('a1b2c3')).toMatchObject({
      state: 'firing',
      lastTriggered: T0 + 5000,
      history: [{ action: 'fire', at: T0 + 5000, message: 'Checkout error rate above 5%', subject: '[ALERT] Checkout errors' }],
    });
    expect(alert('a1b2c3')).not.toHaveProperty('lastCleared');
  });

  it('fires with a message and subject, and fills a missing field from the defaults', async () => {
    ({ app } = await makeApp(seed()));
    expect((await post('/a1b2c3/fire', { message: 'custom', subject: 'custom subject' })).statusCode).toBe(204);
    expect((await post('/a1b2c3/fire', { message: 'only a message' })).statusCode).toBe(204);
    expect((await post('/a1b2c3/fire', {})).statusCode).toBe(204);
    expect(alert('a1b2c3').history.map(({ message, subject }) => ({ message, subject }))).toEqual([
      { message: 'custom', subject: 'custom subject' },
      { message: 'only a message', subject: '[ALERT] Checkout errors' },
      { message: 'Checkout error rate above 5%', subject: '[ALERT] Checkout errors' },
    ]);
  });

  it('derives default content from the name when the alert has none', async () => {
    ({ app } = await makeApp(seed()));
    await post('/bare/fire');
    expect(alert('bare').history[0]).toMatchObject({ message: 'No defaults is firing', subject: 'No defaults' });
  });

  it('treats an empty body as no body, whatever its Content-Type', async () => {
    ({ app } = await makeApp(seed()));
    for (const type of ['application/json', 'application/x-www-form-urlencoded', 'text/plain']) {
      const res = await app.inject({ method: 'POST', url: `${BASE}/a1b2c3/fire`, headers: { 'content-type': type }, payload: '' });
      expect(res.statusCode, type).toBe(204);
    }
    expect(alert('a1b2c3').history.every((e) => e.message === 'Checkout error rate above 5%')).toBe(true);
    expect(alert('a1b2c3').history).toHaveLength(3);
  });

  it('clears: 204, recorded, state cleared; clearing again is recorded too', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed()));
    await post('/a1b2c3/fire');
    clock.advance(60_000);
    expect((await post('/a1b2c3/clear')).statusCode).toBe(204);
    clock.advance(1000);
    const again = await post('/a1b2c3/clear', {});
    expect(again.statusCode).toBe(204);
    expect(again.body).toBe('');
    expect(alert('a1b2c3')).toMatchObject({
      state: 'cleared',
      lastTriggered: T0,
      lastCleared: T0 + 61_000,
      history: [
        { action: 'fire', at: T0 },
        { action: 'clear', at: T0 + 60_000 },
        { action: 'clear', at: T0 + 61_000 },
      ],
    });
  });

  it('keeps only the last 1000 events of an alert', async () => {
    ({ app } = await makeApp(seed(), { rateLimitMax: 5000 }));
    const store = emulatorOf(app).stores.alerts;
    for (let i = 0; i < 1001; i++) store.fire('bare', { message: `m${i}` });
    const history = store.get('bare').history;
    expect(history).toHaveLength(1000);
    expect(history[0].message).toBe('m1');
    expect(history[999].message).toBe('m1000');
  });

  it('needs no token by default', async () => {
    ({ app } = await makeApp(seed()));
    expect((await post('/a1b2c3/fire', undefined, { 'x-auth-token': 'not-a-token' })).statusCode).toBe(204);
  });

  it('requires a valid X-Auth-Token when alertsRequireToken is set', async () => {
    ({ app } = await makeApp(seed(), { alertsRequireToken: true }));
    const missing = await post('/a1b2c3/fire');
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    expect((await post('/a1b2c3/clear', undefined, { 'x-auth-token': 'nope' })).statusCode).toBe(401);
    expect(alert('a1b2c3').history).toEqual([]);
    expect((await post('/a1b2c3/fire', undefined, AUTH)).statusCode).toBe(204);
    expect((await post('/a1b2c3/clear', undefined, AUTH)).statusCode).toBe(204);
  });
});

describe('errors', () => {
  it('404 for an unknown uid, on fire and on clear', async () => {
    ({ app } = await makeApp(seed()));
    for (const action of ['fire', 'clear']) {
      const res = await post(`/nope/${action}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: "alert 'nope' does not exist" });
    }
  });

  it('409 for a disabled alert, on fire and on clear, and nothing is recorded', async () => {
    ({ app } = await makeApp(seed()));
    for (const action of ['fire', 'clear']) {
      const res = await post(`/off/${action}`, action === 'fire' ? { message: 'x' } : undefined);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ statusCode: 409, error: 'Conflict' });
      expect(res.json().message).toMatch(/alert 'off' \(Retired alert\) is disabled/);
    }
    expect(alert('off')).toMatchObject({ state: 'cleared', history: [] });
  });

  it('setEnabled switches the 409 on and off', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed()));
    const store = () => emulatorOf(app).stores.alerts;
    clock.advance(10);
    expect(store().setEnabled('off', true)).toMatchObject({ enabled: true, lastUpdated: T0 + 10 });
    expect((await post('/off/fire')).statusCode).toBe(204);
    store().setEnabled('off', false);
    expect((await post('/off/clear')).statusCode).toBe(409);
    expect(() => store().setEnabled('nope', true)).toThrow(expect.objectContaining({ kind: 'not-found', message: "alert 'nope' does not exist" }));
  });

  it('400 for invalid JSON, a non-JSON body and bad body fields; nothing is recorded', async () => {
    ({ app } = await makeApp(seed()));
    const cases: Array<[string, { payload: string; type?: string }, RegExp]> = [
      ['/a1b2c3/fire', { payload: '{"message":', type: 'application/json' }, /not valid JSON/],
      ['/a1b2c3/fire', { payload: 'fire!', type: 'text/plain' }, /unsupported Content-Type 'text\/plain'/],
      ['/a1b2c3/fire', { payload: 'message=x', type: 'application/x-www-form-urlencoded' }, /send the body as application\/json/],
      ['/a1b2c3/fire', { payload: '{"message":5}', type: 'application/json' }, /body field 'message' must be a string/],
      ['/a1b2c3/fire', { payload: '{"subject":null}', type: 'application/json' }, /body field 'subject' must be a string/],
      ['/a1b2c3/fire', { payload: '{"msg":"x"}', type: 'application/json' }, /body: unknown field 'msg'/],
      ['/a1b2c3/fire', { payload: '["x"]', type: 'application/json' }, /body must be a JSON object or null/],
      ['/a1b2c3/clear', { payload: '{"message":"x"}', type: 'application/json' }, /body: unknown field 'message'/],
      ['/a1b2c3/clear', { payload: 'x', type: 'text/plain' }, /unsupported Content-Type/],
    ];
    for (const [url, { payload, type }, message] of cases) {
      const res = await app.inject({ method: 'POST', url: `${BASE}${url}`, headers: type ? { 'content-type': type } : {}, payload });
      expect(res.statusCode, `${url} ${payload}`).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.json().message, payload).toMatch(message);
    }
    expect(alert('a1b2c3').history).toEqual([]);
  });

  it('does not serve other methods or paths', async () => {
    ({ app } = await makeApp(seed()));
    expect((await app.inject({ method: 'GET', url: `${BASE}/a1b2c3/fire` })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: `${BASE}/a1b2c3/explode` })).statusCode).toBe(404);
  });
});
