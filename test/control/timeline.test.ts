import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, makeApp, makeDemoApp } from '../helpers/app.js';
import { GRID_DURATIONS, grid, seed } from '../provisioning/seed.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';
const TL = '/_emulator/timeline';

let app: FastifyInstance;
let reader: SseReader | undefined;
afterEach(async () => {
  reader?.close();
  reader = undefined;
  await app?.close();
});

const startStep = (at: string | number, name?: string) => ({
  at,
  ...(name ? { name } : {}),
  request: { method: 'POST', path: `${CLOUD}/grid/101/action`, headers: AUTH, body: { action: 'start' } },
});
const stopStep = (at: string) => ({ at, request: { method: 'POST', path: `${CLOUD}/grid/101/action`, headers: AUTH, body: { action: 'terminate' } } });
const put = (body: unknown) => app.inject({ method: 'PUT', url: TL, payload: body as object });
const get = async () => (await app.inject({ url: TL })).json();
const advance = (ms: number) => app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms } });
const seek = (to: unknown) => app.inject({ method: 'POST', url: `${TL}/seek`, payload: { to } });
const gridView = async () => (await app.inject({ url: `${CLOUD}/grid/101`, headers: AUTH })).json();

describe('the timeline routes', () => {
  it('answers an empty timeline at first', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    expect(await get()).toEqual({ steps: [], startedAt: T0, offsetMs: 0, next: null, lengthMs: 0, recording: false });
  });

  it('plays a step when the clock passes it, at its own instant, and marks it in the journal', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    const res = await put({ steps: [startStep('+30s', 'start the grid')] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ steps: [{ at: '+30s', atMs: 30_000, name: 'start the grid', done: false }], next: 0, lengthMs: 30_000 });
    expect((await gridView()).state).not.toBe('ALLOCATING');
    // One advance past the step and past the grid's first transition: the step ran at +30s, so
    // the grid's schedule counts from there.
    await advance(30_000 + GRID_DURATIONS.allocating);
    expect((await gridView()).state).toBe('ALLOCATED');
    const view = await get();
    expect(view).toMatchObject({ steps: [{ done: true, status: 202 }], next: null, offsetMs: 30_000 + GRID_DURATIONS.allocating });
    const journal = (await app.inject({ url: '/_emulator/journal' })).json();
    const entry = journal.entries.find((e: { path: string }) => e.path === `${CLOUD}/grid/101/action`);
    expect(entry).toMatchObject({ method: 'POST', origin: 'timeline', time: T0 + 30_000 });
  });

  it('plays its steps on a running clock while an event stream listens, with no request to the world', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    await put({ steps: [startStep('+30s', 'start the grid'), stopStep('+90s')] });
    reader = await openSse(`${await listen(app)}/_emulator/events?types=timeline.step`);
    // 90 s at 1000x: 90 ms of real time. No request after this one: the stream's timer plays the steps.
    await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 1000, frozen: false } });
    const steps = await reader.take(2, 30_000);
    expect(steps.map((e) => e.data)).toMatchObject([
      { type: 'timeline.step', atMs: 30_000, name: 'start the grid', status: 202 },
      { type: 'timeline.step', atMs: 90_000, status: 202 },
    ]);
  });

  it('refuses a timeline naming the step and field, and keeps the one there was', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    await put({ steps: [startStep('+1m')] });
    const bad = await put({ steps: [startStep('+10s'), startStep('soon')] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('steps[1].at');
    const reset = await put({ steps: [{ at: '+1s', request: { method: 'POST', path: '/_emulator/reset' } }] });
    expect(reset.statusCode).toBe(400);
    expect(reset.json().message).toContain('steps[0].request.path');
    const before = await put({ steps: [startStep(T0 - 1)] });
    expect(before.statusCode).toBe(400);
    expect(before.json().message).toContain("before the timeline's start");
    expect((await get()).steps).toMatchObject([{ at: '+1m', atMs: 60_000 }]);
  });

  it('seeks backwards and forwards', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    await put({ steps: [startStep('+30s'), stopStep('+20m')] });
    await advance(30 * 60_000);
    expect((await gridView()).state).not.toBe('CHECKED');
    const back = await seek('+35s');
    expect(back.statusCode).toBe(200);
    expect(back.json()).toMatchObject({ offsetMs: 35_000, next: 1, steps: [{ done: true }, { done: false }] });
    expect((await gridView()).state).toBe('ALLOCATING');
    const forth = await seek(25 * 60_000);
    expect(forth.json()).toMatchObject({ offsetMs: 25 * 60_000, next: null });
    expect((await gridView()).state).toBe('TERMINATED');
    const start = await seek('+0s');
    expect(start.json()).toMatchObject({ offsetMs: 0, next: 0 });
    expect((await gridView()).state).not.toBe('ALLOCATING');
  });

  it('refuses a seek that cannot be read', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    for (const to of ['-1m', -5, 'soon']) {
      const res = await seek(to);
      expect(res.statusCode, String(to)).toBe(400);
      expect(res.json().message).toContain('to');
    }
  });
});

describe('the bundled demo seed', () => {
  it('tells its story on its own as the clock passes: the grid, the outage, the alert, the recovery', { timeout: 60_000 }, async () => {
    ({ app } = await makeDemoApp());
    const first = await get();
    expect(first).toMatchObject({ next: 0, lengthMs: 3_600_000, recording: false });
    await advance(3 * 60_000);
    const alert = async () => (await app.inject({ url: '/_emulator/alerts/demo-alert' })).json();
    expect(await alert()).toMatchObject({ state: 'firing' });
    await advance(60 * 60_000);
    expect(await alert()).toMatchObject({ state: 'cleared' });
    const done = await get();
    expect(done.next).toBeNull();
    for (const step of done.steps) expect(step.status, step.name).toBeLessThan(300);
    const annotations = (
      await app.inject({ url: `/concerto/mpulse/api/annotations/v1/?date-start=${T0}&date-end=${T0 + 2 * 3_600_000}`, headers: { 'x-auth-token': 'demo-token' } })
    ).json();
    expect(JSON.stringify(annotations)).toContain('CDN recovered');
  });
});

describe('each world its own timeline', () => {
  it('a sandbox plays and seeks its own, the default world keeps its own; steps of /_emulator carry the admin token', { timeout: 60_000 }, async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] }), { adminToken: 'secret', sandboxes: 'auto' }));
    const admin = { authorization: 'Bearer secret' };
    const incident = { at: '+1m', name: 'a fault rule', request: { method: 'POST', path: '/_emulator/faults', body: { id: 'drill', path: '/nowhere', action: { status: 503 } } } };
    expect((await app.inject({ url: TL })).statusCode).toBe(401);
    const set = await app.inject({ method: 'PUT', url: `/sandbox/w1${TL}`, headers: admin, payload: { steps: [startStep('+30s'), incident] } });
    expect(set.statusCode, set.body).toBe(200);
    expect((await app.inject({ url: TL, headers: admin })).json().steps).toEqual([]);
    await app.inject({ method: 'POST', url: '/sandbox/w1/_emulator/clock/advance', headers: admin, payload: { ms: 2 * 60_000 } });
    const played = (await app.inject({ url: `/sandbox/w1${TL}`, headers: admin })).json();
    expect(played.steps.map((s: { status: number }) => s.status)).toEqual([202, 201]);
    expect((await app.inject({ url: `/sandbox/w1${CLOUD}/grid/101`, headers: AUTH })).json().state).not.toBe('LOADED');
    // The default world's grid never started.
    expect((await gridView()).state).toBe('LOADED');
    const back = await app.inject({ method: 'POST', url: `/sandbox/w1${TL}/seek`, headers: admin, payload: { to: '+0s' } });
    expect(back.json()).toMatchObject({ next: 0, offsetMs: 0 });
    expect((await app.inject({ url: '/sandbox/w1/_emulator/faults', headers: admin })).json()).toEqual([]);
    expect((await app.inject({ url: `/sandbox/w1${CLOUD}/grid/101`, headers: AUTH })).json().state).toBe('LOADED');
  });

  it("a sandbox's steps play while a stream on the sandbox listens, with no request to it", async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] }), { sandboxes: 'auto' }));
    expect((await app.inject({ method: 'PUT', url: `/sandbox/w2${TL}`, payload: { steps: [startStep('+30s', 'in w2')] } })).statusCode).toBe(200);
    reader = await openSse(`${await listen(app)}/sandbox/w2/_emulator/events?types=timeline.step`);
    await app.inject({ method: 'PUT', url: '/sandbox/w2/_emulator/clock', payload: { scale: 1000, frozen: false } });
    const [step] = await reader.take(1, 30_000);
    expect(step.data).toMatchObject({ type: 'timeline.step', atMs: 30_000, name: 'in w2', status: 202 });
    expect((await app.inject({ url: `/sandbox/w2${CLOUD}/grid/101`, headers: AUTH })).json().state).not.toBe('LOADED');
    expect((await gridView()).state).toBe('LOADED');
  });
});
