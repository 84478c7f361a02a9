import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, authSeed, makeApp, type TestApp } from '../helpers/app.js';

const ALERTS = '/concerto/mpulse/api/alerts';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const start = () =>
  makeApp({
    ...authSeed(),
    alerts: [
      { uid: 'cpu-high', name: 'CPU high', enabled: true, message: 'CPU above 90%', channels: [{ type: 'email', target: 'ops@example.com' }], state: 'cleared', history: [] },
      { uid: 'quiet', name: 'Quiet', enabled: true, channels: [], state: 'cleared', history: [] },
    ],
  });

describe('alerts in the control API', () => {
  it('lists every alert, and reads one with what each fire carried', async () => {
    ({ app, clock } = await start());
    await app.inject({ method: 'POST', url: `${ALERTS}/cpu-high/fire`, payload: { message: 'CPU at 97% on lg-3', subject: 'CPU!' } });
    clock.advance(1000);
    await app.inject({ method: 'POST', url: `${ALERTS}/cpu-high/clear` });
    clock.advance(1000);
    await app.inject({ method: 'POST', url: `${ALERTS}/cpu-high/fire` });

    const list = await app.inject({ url: '/_emulator/alerts' });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((a: { uid: string }) => a.uid)).toEqual(['cpu-high', 'quiet']);

    const one = (await app.inject({ url: '/_emulator/alerts/cpu-high' })).json();
    expect(one).toMatchObject({ uid: 'cpu-high', state: 'firing', lastTriggered: T0 + 2000, lastCleared: T0 + 1000 });
    expect(one.history).toEqual([
      { action: 'fire', at: T0, message: 'CPU at 97% on lg-3', subject: 'CPU!' },
      { action: 'clear', at: T0 + 1000 },
      { action: 'fire', at: T0 + 2000, message: 'CPU above 90%', subject: 'CPU high' },
    ]);
  });

  it('disables an alert, so fire answers 409, and enables it again', async () => {
    ({ app, clock } = await start());
    const off = await app.inject({ method: 'PATCH', url: '/_emulator/alerts/cpu-high', payload: { enabled: false } });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ uid: 'cpu-high', enabled: false, lastUpdated: T0 });
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/cpu-high/fire` })).statusCode).toBe(409);
    await app.inject({ method: 'PATCH', url: '/_emulator/alerts/cpu-high', payload: { enabled: true } });
    expect((await app.inject({ method: 'POST', url: `${ALERTS}/cpu-high/fire` })).statusCode).toBe(204);
  });

  it('answers 404 for an unknown uid and 400 for a bad body', async () => {
    ({ app, clock } = await start());
    expect((await app.inject({ url: '/_emulator/alerts/nope' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'PATCH', url: '/_emulator/alerts/nope', payload: { enabled: false } })).statusCode).toBe(404);
    for (const [payload, message] of [
      [{}, /missing required field 'enabled'/],
      [{ enabled: 'no' }, /field 'enabled'/],
      [{ enabled: false, name: 'x' }, /unknown field 'name'/],
    ] as const) {
      const res = await app.inject({ method: 'PATCH', url: '/_emulator/alerts/cpu-high', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(message);
    }
  });
});
