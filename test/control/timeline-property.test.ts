import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { T0, makeDemoApp } from '../helpers/app.js';
import { replayable } from '../helpers/property.js';

/**
 * Seeking is a pure function of the seed, the timeline and the offset: for offsets drawn at
 * random, the world a seek gives equals the world played from the start to that offset by
 * advancing the clock (its export, but for the instant the stores were built).
 */

const CLOUD = '/concerto/services/rest/CloudService/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const AUTH = { 'x-auth-token': 'demo-token' };
const MIN = 60_000;

const STEPS = [
  { at: '+30s', name: 'start the grid', request: { method: 'POST', path: `${CLOUD}/grid/101/action`, headers: AUTH, body: { action: 'start' } } },
  {
    at: '+1m',
    name: 'an incident',
    request: { method: 'POST', path: '/_emulator/incidents', body: { domainId: 12346, title: 'drill', startAgoMs: 0, endAgoMs: -10 * MIN, loadTimeFactor: 2 } },
  },
  {
    at: '+2m',
    name: 'a failing interface',
    request: { method: 'POST', path: '/_emulator/faults', body: { id: 'drill-503', path: `${ANNOTATIONS}/*`, method: 'DELETE', action: { status: 503 }, untilMs: 5 * MIN, seed: 7 } },
  },
  {
    at: '+3m',
    name: 'an annotation',
    request: { method: 'POST', path: `${ANNOTATIONS}/`, headers: AUTH, body: { title: 'Drill', text: 'the incident starts', start: '{{at-2m}}', domainIds: [12346] } },
  },
  { at: '+4m', name: 'the alert fires', request: { method: 'POST', path: `${ALERTS}/demo-alert/fire`, headers: AUTH, body: { message: 'drill' } } },
  { at: '+10m', name: 'the alert clears', request: { method: 'POST', path: `${ALERTS}/demo-alert/clear`, headers: AUTH } },
  { at: '+12m', name: 'the grid stops', request: { method: 'POST', path: `${CLOUD}/grid/101/action`, headers: AUTH, body: { action: 'terminate' } } },
];
const LENGTH = 12 * MIN;

const apps: FastifyInstance[] = [];
afterAll(async () => Promise.all(apps.map((a) => a.close())));

async function withTimeline(): Promise<FastifyInstance> {
  const { app } = await makeDemoApp();
  apps.push(app);
  const res = await app.inject({ method: 'PUT', url: '/_emulator/timeline', payload: { steps: STEPS } });
  expect(res.statusCode, res.body).toBe(200);
  return app;
}

/** The world's export, but for the instants its stores were built at (a seek builds them again). */
async function exported(app: FastifyInstance): Promise<unknown> {
  const res = await app.inject({ url: '/_emulator/state' });
  expect(res.statusCode).toBe(200);
  const state = res.json();
  delete state.clock.loadedAt;
  return state;
}

describe('seeking a timeline', () => {
  it('gives the world that playing from the start to the offset gives', { timeout: 300_000 }, async () => {
    const played = await withTimeline();
    const sought = await withTimeline();
    // Every step was answered as a client's request would be.
    await played.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 0 } });
    const offsets = fc.sample(fc.integer({ min: 0, max: LENGTH + 5 * MIN }), replayable({ numRuns: 8 }) as fc.Parameters<number>);
    offsets.push(0, 30_000, LENGTH);
    const ascending = [...new Set(offsets)].sort((a, b) => a - b);
    // The world seeks in another order (backwards too) than the one played in.
    const order = [...ascending].reverse();
    const expected = new Map<number, unknown>();
    for (const t of ascending) {
      const res = await played.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { to: T0 + t } });
      expect(res.statusCode, res.body).toBe(200);
      expected.set(t, await exported(played));
    }
    // The offsets tell worlds apart: the property is not met by a world that never changes.
    expect(expected.get(LENGTH)).not.toEqual(expected.get(0));
    const timeline = (await played.inject({ url: '/_emulator/timeline' })).json();
    expect(timeline.steps.map((s: { status: number }) => s.status)).toEqual([202, 201, 201, 200, 204, 204, 202]);
    for (const t of order) {
      const res = await sought.inject({ method: 'POST', url: '/_emulator/timeline/seek', payload: { to: t } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().offsetMs).toBe(t);
      expect(await exported(sought), `offset ${t}`).toEqual(expected.get(t));
    }
  });
});
