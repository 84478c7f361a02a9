import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeDemoApp } from '../helpers/app.js';

const MIN = 60_000;
let app: FastifyInstance;
afterEach(async () => app?.close());

/** The bundled demo seed's story: a CDN outage two minutes after the load fires the shop's page load rule, which clears once it ends. */
describe('the demo seed', () => {
  it("fires the shop's page load rule five minutes into the CDN outage and clears it a minute after the outage ends", async () => {
    let clock;
    ({ app, clock } = await makeDemoApp());
    const incidents = (await app.inject({ url: '/_emulator/incidents' })).json();
    expect(incidents).toContainEqual(expect.objectContaining({ domainId: 12346, start: T0 + 2 * MIN, end: T0 + 17 * MIN, loadTimeFactor: 2.5 }));
    const before = (await app.inject({ url: '/_emulator/alerts/shop-page-load' })).json();
    expect(before).toMatchObject({ state: 'cleared', history: [], ruleStatus: { holding: false } });
    expect(before.ruleStatus.value).toBeLessThan(4);
    expect(before.channels.map((c: { type: string }) => c.type)).toEqual(['webhook', 'email']);
    clock.advance(30 * MIN);
    const after = (await app.inject({ url: '/_emulator/alerts/shop-page-load' })).json();
    expect(after.history.map((e: { action: string; at: number; by: string }) => [e.action, e.at, e.by])).toEqual([
      ['fire', T0 + 7 * MIN, 'rule'],
      ['clear', T0 + 18 * MIN, 'rule'],
    ]);
    expect(after.history[0].message).toMatch(/^Shop page load time: median PageLoad above 4 s for 5 minutes on shop\.example\.com \(\d+(\.\d+)? s\)$/);
  });

  it("makes the rule's deliveries, one per channel at the rule's instants, seen by a read of the outbox alone", async () => {
    let clock;
    ({ app, clock } = await makeDemoApp());
    clock.advance(30 * MIN);
    // No read of the alerts first: the outbox brings the rules up to now itself.
    const { deliveries } = (await app.inject({ url: '/_emulator/deliveries?alert=shop-page-load' })).json();
    type Seen = { action: string; channel: string; createdAt: number; status: string };
    expect(deliveries.map((d: Seen) => [d.action, d.channel, d.createdAt, d.status]).sort()).toEqual([
      ['clear', 'email', T0 + 18 * MIN, 'stored'],
      ['clear', 'webhook', T0 + 18 * MIN, 'stored'],
      ['fire', 'email', T0 + 7 * MIN, 'stored'],
      ['fire', 'webhook', T0 + 7 * MIN, 'stored'],
    ]);
  });
});
