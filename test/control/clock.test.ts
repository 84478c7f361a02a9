import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, makeApp, type TestApp } from '../helpers/app.js';
import { GRID_DURATIONS, RSDB_DURATIONS, grid, rsdb, seed, template } from '../provisioning/seed.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const advance = (payload: unknown) => app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: payload as object });
const startGrid = () => app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } });
const gridState = async () => (await app.inject({ url: `${CLOUD}/grid/101`, headers: AUTH })).json().state;
// Grid 101 has no monitors: ALLOCATING -> ALLOCATED -> CHECKING -> CHECKED.
const CHECKED_AFTER = GRID_DURATIONS.allocating + GRID_DURATIONS.allocated + GRID_DURATIONS.checking;

describe('GET /_emulator/clock', () => {
  it('reads emulated time, scale, frozen, and when the next transition is due', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()] })));
    expect((await app.inject({ url: '/_emulator/clock' })).json()).toEqual({ now: T0, iso: new Date(T0).toISOString(), scale: 1, frozen: true });
    await startGrid();
    expect((await app.inject({ url: '/_emulator/clock' })).json().nextTransitionAt).toBeGreaterThan(T0);
  });
});

describe('POST /_emulator/clock/advance', () => {
  it('moves time forward by ms, and every lifecycle with it', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()] })));
    await startGrid();
    const res = await advance({ ms: GRID_DURATIONS.allocating });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ now: T0 + GRID_DURATIONS.allocating, advancedMs: GRID_DURATIONS.allocating });
    expect(await gridState()).toBe('ALLOCATED');
  });

  it('steps to the next lifecycle transition with {"to":"next"}', async () => {
    // One server: it comes up exactly when the grid leaves ALLOCATING, so every step is the grid's.
    ({ app, clock } = await makeApp(seed({ grids: [grid({ servers: [template()] })] })));
    await startGrid();
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = (await advance({ to: 'next' })).json();
      seen.push([res.now - T0, await gridState()]);
    }
    expect(seen).toEqual([
      [GRID_DURATIONS.allocating, 'ALLOCATED'],
      [GRID_DURATIONS.allocating + GRID_DURATIONS.allocated, 'CHECKING'],
      [CHECKED_AFTER, 'CHECKED'],
    ]);
    const idle = (await advance({ to: 'next' })).json();
    expect(idle.advancedMs).toBe(0);
    expect(idle.nextTransitionAt).toBeUndefined();
  });

  it('fast-forwards until a resource settles with {"until":{"kind","id"}}, in one call', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()], rsdbs: [rsdb()] })));
    await startGrid();
    const res = await advance({ until: { kind: 'grid', id: 101 } });
    expect(res.json()).toMatchObject({ now: T0 + CHECKED_AFTER, advancedMs: CHECKED_AFTER });
    expect(await gridState()).toBe('CHECKED');
    // Already settled (and a never-started RSDB has nothing to wait for): no move.
    expect((await advance({ until: { kind: 'grid', id: 101 } })).json().advancedMs).toBe(0);
    expect((await advance({ until: { kind: 'rsdb', id: 201 } })).json().advancedMs).toBe(0);
    await app.inject({ method: 'POST', url: `${CLOUD}/rsdb/201/action`, headers: AUTH, payload: { action: 'start' } });
    expect((await advance({ until: { kind: 'rsdb', id: 201 } })).json().advancedMs).toBe(RSDB_DURATIONS.allocating);
  });

  it('moves to an instant given as epoch ms or ISO 8601', async () => {
    ({ app, clock } = await makeApp());
    expect((await advance({ to: T0 + 5000 })).json().now).toBe(T0 + 5000);
    expect((await advance({ to: new Date(T0 + 60_000).toISOString() })).json().now).toBe(T0 + 60_000);
  });

  it('never goes backwards, and refuses bad bodies with 400 naming the field', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()] })));
    const cases: Array<[unknown, RegExp]> = [
      [{ to: T0 - 1 }, /field 'to'.*before the emulator's time.*never goes backwards/],
      [{ ms: -5 }, /field 'ms'/],
      [{ ms: 1.5 }, /field 'ms'/],
      [{ ms: '5' }, /field 'ms'/],
      [{}, /exactly one of ms, to or until \(got none\)/],
      [{ ms: 5, to: 'next' }, /exactly one of ms, to or until \(got ms, to\)/],
      [{ to: 'tomorrow' }, /field 'to'.*neither "next"/],
      [{ until: { kind: 'planet', id: 1 } }, /field 'until.kind'/],
      [{ sm: 5 }, /unknown field 'sm'/],
    ];
    for (const [payload, message] of cases) {
      const res = await advance(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toMatch(message);
    }
    expect(clock.now()).toBe(T0);
    const unknown = await advance({ until: { kind: 'grid', id: 999 } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe("body field 'until': no grid 999");
  });
});

describe('the end of emulated time', () => {
  it('stops a sped-up clock at 9999-12-31T23:59:59.999Z, and every call still works there', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()] })));
    const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    expect((await advance({ to: '9999-12-31T23:59:58.999Z' })).statusCode).toBe(200);
    const fast = await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 1_000_000, frozen: false } });
    expect(fast.statusCode).toBe(200);
    // A thousand emulated seconds pass every real millisecond.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const read = await app.inject({ url: '/_emulator/clock' });
    expect(read.json()).toMatchObject({ now: latest, iso: '9999-12-31T23:59:59.999Z', scale: 1_000_000, frozen: false });
    const still = await advance({ ms: 0 });
    expect(still.statusCode).toBe(200);
    expect(still.json()).toMatchObject({ now: latest, advancedMs: 0 });
    const past = await advance({ ms: 1 });
    expect(past.statusCode).toBe(400);
    expect(past.json().message).toMatch(/^the clock cannot move past 9999-12-31T23:59:59\.999Z/);
    expect((await app.inject({ url: '/_emulator/health' })).json().now).toBe(latest);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    expect((await app.inject({ url: `${CLOUD}/grid/101`, headers: AUTH })).statusCode).toBe(200);
  });
});

describe('PUT /_emulator/clock', () => {
  it('sets the scale and freezes or thaws time', async () => {
    ({ app, clock } = await makeApp());
    const res = await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 60, frozen: false } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ scale: 60, frozen: false });
    expect(clock.status()).toMatchObject({ scale: 60, frozen: false });
    const frozen = await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { frozen: true } });
    expect(frozen.json()).toMatchObject({ scale: 60, frozen: true });
    const now = frozen.json().now;
    expect((await app.inject({ url: '/_emulator/clock' })).json().now).toBe(now);
  });

  it('refuses an empty body, a negative scale and unknown fields', async () => {
    ({ app, clock } = await makeApp());
    for (const [payload, message] of [
      [{}, /body/],
      [{ scale: -1 }, /field 'scale'/],
      [{ frozen: 'yes' }, /field 'frozen'/],
      [{ sclae: 2 }, /unknown field 'sclae'/],
    ] as const) {
      const res = await app.inject({ method: 'PUT', url: '/_emulator/clock', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toMatch(message);
    }
    expect(clock.status()).toMatchObject({ scale: 1, frozen: true });
  });
});
