import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, makeApp } from '../helpers/app.js';
import { grid, seed } from '../provisioning/seed.js';

/**
 * A timeline set at run time is a write like any other: an export and the state file hold it
 * with how far it went, and a world loaded from them goes on from there, playing no step twice.
 */

const CLOUD = '/concerto/services/rest/CloudService/v1';
const TL = '/_emulator/timeline';
const step = (at: string, action: string) => ({ at, request: { method: 'POST', path: `${CLOUD}/grid/101/action`, headers: AUTH, body: { action } } });
const timeline = { steps: [step('+1m', 'start'), step('+10m', 'terminate')] };

let dir: string;
let app: FastifyInstance | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-timeline-'));
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

const advance = (a: FastifyInstance, ms: number) => a.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms } });
const journalCount = async (a: FastifyInstance) =>
  (await a.inject({ url: '/_emulator/journal' })).json().entries.filter((e: { origin?: string }) => e.origin === 'timeline').length;

describe('a timeline set at run time', () => {
  it('is kept by the state file: a new process goes on from where it was, without playing a step again', async () => {
    const file = join(dir, 'state.json');
    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file, stateFlushIntervalMs: 0 }));
    expect((await app.inject({ method: 'PUT', url: TL, payload: timeline })).statusCode).toBe(200);
    await advance(app, 2 * 60_000);
    expect((await app.inject({ url: TL })).json()).toMatchObject({ offsetMs: 120_000, next: 1 });
    await app.close();
    const written = JSON.parse(await readFile(file, 'utf8'));
    expect(written.timeline).toEqual({ steps: [step('+1m', 'start'), step('+10m', 'terminate')], elapsedMs: 120_000, played: 1 });

    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file }));
    const view = (await app.inject({ url: TL })).json();
    expect(view).toMatchObject({ next: 1, steps: [{ at: '+1m', done: true }, { at: '+10m', done: false }] });
    expect(view.offsetMs).toBeGreaterThanOrEqual(120_000);
    // The start is not made again; the stop comes at +10m.
    await advance(app, 9 * 60_000);
    expect(await journalCount(app)).toBe(1);
    expect((await app.inject({ url: TL })).json().next).toBeNull();
  });

  it('goes with an export into another emulator, and a refused one changes nothing', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    await app.inject({ method: 'PUT', url: TL, payload: timeline });
    await advance(app, 5 * 60_000);
    const exported = (await app.inject({ url: '/_emulator/state' })).json();
    expect(exported.timeline).toMatchObject({ elapsedMs: 300_000, played: 1 });

    const other = (await makeApp(seed({ grids: [grid()] }))).app;
    try {
      expect((await other.inject({ method: 'PUT', url: '/_emulator/state', payload: exported })).statusCode).toBe(200);
      expect((await other.inject({ url: TL })).json()).toMatchObject({ offsetMs: 300_000, next: 1 });
      const bad = await other.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...exported, timeline: { ...exported.timeline, played: 3 } } });
      expect(bad.statusCode).toBe(400);
      expect(JSON.stringify(bad.json())).toContain('timeline');
      expect((await other.inject({ url: TL })).json()).toMatchObject({ offsetMs: 300_000, next: 1 });
    } finally {
      await other.close();
    }
  });
});
