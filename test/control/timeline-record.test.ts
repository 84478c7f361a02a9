import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { loadFixtures, type State } from '../../src/state.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';

/**
 * A presenter rehearses once while the timeline records; the recording, saved as a fixture
 * file and loaded with the seed, tells the same story on its own.
 */

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const AUTH = { 'x-auth-token': 'demo-token' };
const TYPES = 'transition,annotation.created,alert.fired,alert.cleared,fault.added';

const apps: FastifyInstance[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function start(fixtures: State): Promise<{ app: FastifyInstance; events: SseReader }> {
  const app = await buildApp({ clock: new ManualClock(T0), fixtures });
  apps.push(app);
  const url = await listen(app);
  const events = await openSse(`${url}/_emulator/events?types=${TYPES}`);
  return { app, events };
}

/** The events up to the sentinel fault rule, as offsets from T0 with what they were about. */
async function story(app: FastifyInstance, events: SseReader): Promise<unknown[]> {
  await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { id: 'the-end', path: '/nowhere', action: { status: 500 } } });
  const told: unknown[] = [];
  for (;;) {
    const { data } = await events.next(10_000);
    if (data.type === 'fault.added') break;
    told.push([data.type, (data.at as number) - T0, data.kind, data.resourceId, data.state ?? null]);
  }
  events.close();
  return told;
}

describe('a recorded rehearsal', () => {
  it('saved as a fixture and loaded with the seed, plays the same events', { timeout: 120_000 }, async () => {
    // The bundled seed without its own story: the rehearsal makes one.
    const { timeline: _story, ...seed } = await loadFixtures(BUNDLED_FIXTURES_DIR);
    const rehearsal = await start(seed as State);
    const { app } = rehearsal;
    const send = (method: 'POST' | 'PUT', url: string, payload?: object, headers: Record<string, string> = {}) =>
      app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    const advance = (ms: number) => send('POST', '/_emulator/clock/advance', { ms });

    expect((await send('POST', '/_emulator/timeline/record', { on: true })).json()).toMatchObject({ recording: true, steps: [] });
    await advance(30_000);
    expect((await send('POST', `${CLOUD}/grid/101/action`, { action: 'start' }, AUTH)).statusCode).toBe(202);
    await advance(60_000);
    const annotation = { title: 'Outage', text: 'the CDN is down', start: T0 + 90_000, domainIds: [12346] };
    expect((await send('POST', `${ANNOTATIONS}/`, annotation, AUTH)).statusCode).toBe(200);
    // Refused: nothing changed, so nothing is recorded.
    expect((await send('POST', `${ALERTS}/no-such-alert/fire`, {}, AUTH)).statusCode).toBe(404);
    await advance(60_000);
    expect((await send('POST', `${ALERTS}/demo-alert/fire`, { message: 'rehearsal' }, AUTH)).statusCode).toBe(204);
    await advance(3 * 60_000);
    expect((await send('POST', `${ALERTS}/demo-alert/clear`, undefined, AUTH)).statusCode).toBe(204);
    const recorded = (await send('POST', '/_emulator/timeline/record', { on: false })).json();
    expect(recorded.recording).toBe(false);
    expect(recorded.steps.map((s: { at: string; done: boolean }) => [s.at, s.done])).toEqual([
      ['+30s', true],
      ['+1m30s', true],
      ['+2m30s', true],
      ['+5m30s', true],
    ]);
    await advance(10 * 60_000 - 330_000);
    const told = await story(app, rehearsal.events);
    expect(told.length).toBeGreaterThan(4);

    // Saved as a fixture file beside the seed's, and loaded.
    const fixture = (await app.inject({ url: '/_emulator/timeline/fixture' })).json();
    const dir = await mkdtemp(join(tmpdir(), 'rehearsal-'));
    dirs.push(dir);
    await cp(BUNDLED_FIXTURES_DIR, dir, { recursive: true });
    // The rehearsal stands in for the bundled story: a folder holds one timeline.
    await rm(join(dir, 'timeline.json'), { force: true });
    await writeFile(join(dir, 'rehearsal.json'), JSON.stringify(fixture, null, 2));
    const replay = await start(await loadFixtures(dir));
    const before = (await replay.app.inject({ url: '/_emulator/timeline' })).json();
    expect(before).toMatchObject({ next: 0, offsetMs: 0, recording: false });
    expect(before.steps).toHaveLength(4);
    await replay.app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 10 * 60_000 } });
    expect(await story(replay.app, replay.events)).toEqual(told);
  });
});
