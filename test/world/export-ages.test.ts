import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { loadFixtures, parseState, type State } from '../../src/state.js';
import { T0 } from '../helpers/app.js';
import { watchResponses } from '../helpers/conformance.js';

/**
 * A demo saved as an export keeps what was added on stage as it stood: an annotation added,
 * an incident added and an alert fired at the same emulated instant read the same age in a
 * world made from the export, whether it is loaded on its clock or on real time
 * (docs/fixtures.md, "Time").
 */

const DEMO = { 'x-auth-token': 'demo-token' };
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const apps: FastifyInstance[] = [];
afterEach(async () => {
  // Closing twice is harmless: a test closes the ones it is done with.
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

let demo: State | undefined;
async function start(clock: ManualClock, fixtures?: State, config = {}): Promise<FastifyInstance> {
  demo ??= await loadFixtures(BUNDLED_FIXTURES_DIR);
  const app = await buildApp({ clock, fixtures: fixtures ?? demo, config });
  watchResponses(app);
  apps.push(app);
  return app;
}

const ok = async (app: FastifyInstance, options: InjectOptions) => {
  const res = await app.inject(options);
  expect(res.statusCode, JSON.stringify(options)).toBeLessThan(300);
  return res.body ? res.json() : undefined;
};

/** The ages (now minus the instant) of what was added on stage, as the world answers them. */
async function ages(app: FastifyInstance, prefix = '') {
  const world = prefix ? app.sandboxes.find(prefix.slice('/sandbox/'.length))! : app.world;
  const now = world.clock.now();
  const annotations = (await ok(app, { url: `${prefix}${ANNOTATIONS}?date-start=0&date-end=${now + DAY}`, headers: DEMO })) as Array<{ title: string; start: number; end?: number }>;
  const point = annotations.find((a) => a.title === 'On stage')!;
  const window = annotations.find((a) => a.title === 'Stage window')!;
  const alert = await ok(app, { url: `${prefix}/_emulator/alerts/demo-alert` });
  const incidents = (await ok(app, { url: `${prefix}/_emulator/incidents` })) as Array<{ title?: string; start: number; end: number }>;
  const incident = incidents.find((i) => i.title === 'On stage')!;
  return {
    alert: now - alert.lastTriggered,
    annotation: now - point.start,
    windowStart: now - window.start,
    windowEnd: now - window.end!,
    incidentStart: now - incident.start,
    incidentEnd: now - incident.end,
  };
}

describe('an export of a demo with things added on stage', () => {
  it('keeps their ages alike, loaded on its clock or on real time, as the seed of a later start or into a world', async () => {
    const clock = new ManualClock(T0);
    const app = await start(clock);
    clock.advance(HOUR);
    const now = clock.now();
    // At one emulated instant: the alert fires, an annotation is added at now, another for a
    // window from 10 min ago to 50 min ahead, and an incident from 5 min ago to 1 h ahead.
    await ok(app, { method: 'POST', url: `${ALERTS}/demo-alert/fire`, headers: DEMO, payload: {} });
    await ok(app, { method: 'POST', url: ANNOTATIONS, headers: DEMO, payload: { title: 'On stage', text: 'deployed', start: now, domainIds: 12345 } });
    await ok(app, {
      method: 'POST',
      url: ANNOTATIONS,
      headers: DEMO,
      payload: { title: 'Stage window', text: 'planned', start: now - 600_000, end: now + 3_000_000, domainIds: 12345 },
    });
    await ok(app, { method: 'POST', url: '/_emulator/incidents', payload: { domainId: 12345, title: 'On stage', start: now - 300_000, end: now + HOUR } });
    clock.advance(2_000);
    const expected = { alert: 2_000, annotation: 2_000, windowStart: 602_000, windowEnd: -2_998_000, incidentStart: 302_000, incidentEnd: -HOUR + 2_000 };
    expect(await ages(app)).toEqual(expected);
    const exported = (await app.inject({ url: '/_emulator/state' })).json() as State;

    // As the seed of a start 18.5 hours later, on real time (the default) and on its clock.
    for (const seedClock of ['real', 'keep'] as const) {
      const later = await start(new ManualClock(clock.now() + 18.5 * HOUR), parseState(exported, 'export'), { seedClock });
      expect(await ages(later), `SEED_CLOCK=${seedClock}`).toEqual(expected);
      await later.close();
    }
    // Into a running world a week apart, on its clock and on real time; and as a sandbox.
    for (const mode of ['keep', 'real'] as const) {
      const other = await start(new ManualClock(T0 + 7 * DAY));
      await ok(other, { method: 'PUT', url: `/_emulator/state?clock=${mode}`, payload: exported as object });
      expect(await ages(other), `PUT ?clock=${mode}`).toEqual(expected);
      await ok(other, { method: 'PUT', url: `/_emulator/sandboxes/saved?clock=${mode}`, payload: exported as object });
      expect(await ages(other, '/sandbox/saved'), `sandbox ?clock=${mode}`).toEqual(expected);
      await other.close();
    }
    // Six worlds of the demo seed built and read: more than the default 20 s on a busy machine.
  }, 90_000);

  it('writes what was given on stage relative to its clock, and what a fixture gave absolute as it was', async () => {
    const clock = new ManualClock(T0);
    const fixtures = parseState(
      {
        ...(demo ??= await loadFixtures(BUNDLED_FIXTURES_DIR)),
        annotations: [{ id: 1, title: 'Fixed date', text: 'absolute', start: Date.UTC(2026, 0, 1), domainIds: [12345], user: 'demo@example.com' }],
      },
      'seed',
    );
    const app = await start(clock, fixtures);
    const { id } = await ok(app, { method: 'POST', url: ANNOTATIONS, headers: DEMO, payload: { title: 'On stage', text: 'x', start: T0 - 1_000 } });
    // A title changed on stage leaves the fixture's absolute start as it was; a start given makes it the stage's.
    await ok(app, { method: 'PUT', url: `${ANNOTATIONS}/1`, headers: DEMO, payload: { title: 'Fixed date, renamed' } });
    clock.advance(5_000);
    let annotations = ((await app.inject({ url: '/_emulator/state' })).json() as State).annotations;
    expect(annotations.find((a) => a.id === 1)).toMatchObject({ start: Date.UTC(2026, 0, 1) });
    expect(annotations.find((a) => a.id === id)).toMatchObject({ startAgoMs: 6_000 });
    expect(annotations.find((a) => a.id === id)!.start).toBeUndefined();
    await ok(app, { method: 'PUT', url: `${ANNOTATIONS}/1`, headers: DEMO, payload: { start: T0 + 4_000 } });
    annotations = ((await app.inject({ url: '/_emulator/state' })).json() as State).annotations;
    expect(annotations.find((a) => a.id === 1)).toMatchObject({ startAgoMs: 1_000 });
  });
});
