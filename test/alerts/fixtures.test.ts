import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, makeDemoApp } from '../helpers/app.js';
import { parseState } from '../../src/state.js';

const BASE = '/concerto/mpulse/api/alerts';

let app: FastifyInstance;
afterEach(async () => app?.close());

describe('demo seed', () => {
  it('has at least 3 alerts, one of them disabled, with channels and default content', async () => {
    ({ app } = await makeDemoApp());
    const alerts = app.world.stores.alerts.list();
    expect(alerts.length).toBeGreaterThanOrEqual(3);
    const disabled = alerts.filter((a) => !a.enabled);
    expect(disabled.length).toBeGreaterThanOrEqual(1);
    for (const a of alerts) {
      expect(a.state).toBe('cleared');
      expect(a.channels.length).toBeGreaterThan(0);
    }
    expect((await app.inject({ method: 'POST', url: `${BASE}/${disabled[0].uid}/fire` })).statusCode).toBe(409);
    expect((await app.inject({ method: 'POST', url: `${BASE}/demo-alert/fire` })).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: `${BASE}/demo-alert/clear` })).statusCode).toBe(204);
    expect(app.world.stores.alerts.get('demo-alert').history.map((e) => e.action)).toEqual(['fire', 'clear']);
  });
});

describe('export', () => {
  it('keeps state, times and history through parseState and a new emulator', async () => {
    let clock;
    ({ app, clock } = await makeDemoApp());
    await app.inject({ method: 'POST', url: `${BASE}/demo-alert/fire`, headers: { 'content-type': 'application/json' }, payload: { message: 'm', subject: 's' } });
    clock.advance(1000);
    await app.inject({ method: 'POST', url: `${BASE}/demo-alert/clear` });
    await app.inject({ method: 'POST', url: `${BASE}/demo-alert/fire` });
    app.world.stores.alerts.setEnabled('disabled-alert', true);

    const exported = app.world.exportState();
    // On the export's clock (SEED_CLOCK=keep), every time as it was; on real time it would keep their ages.
    const copy = await makeApp(parseState(JSON.parse(JSON.stringify(exported)), 'export'), { seedClock: 'keep' });
    try {
      const alerts = copy.app.world.stores.alerts;
      expect(alerts.list()).toEqual(app.world.stores.alerts.list());
      expect(alerts.get('demo-alert')).toMatchObject({
        state: 'firing',
        lastTriggered: T0 + 1000,
        lastCleared: T0 + 1000,
        history: [
          { action: 'fire', at: T0, message: 'm', subject: 's' },
          { action: 'clear', at: T0 + 1000 },
          { action: 'fire', at: T0 + 1000 },
        ],
      });
      expect(alerts.get('disabled-alert')).toMatchObject({ enabled: true, lastUpdated: T0 + 1000 });
      expect((await copy.app.inject({ method: 'POST', url: `${BASE}/disabled-alert/fire` })).statusCode).toBe(204);
    } finally {
      await copy.app.close();
    }
  });
});
