import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, makeApp, type TestApp } from '../helpers/app.js';
import { ENV_DURATIONS, GRID_DURATIONS, environment, grid, rsdb, seed, template } from '../provisioning/seed.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const start = () => makeApp(seed({ grids: [grid({ servers: [template()] })], rsdbs: [rsdb()], environments: [environment()] }));
const act = (path: string, action: string) => app.inject({ method: 'POST', url: `${CLOUD}${path}/action`, headers: AUTH, payload: { action } });
const read = async (path: string) => (await app.inject({ url: `${CLOUD}${path}`, headers: AUTH })).json();
const control = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url: `/_emulator${url}`, ...(payload ? { payload } : {}) });
const settle = (kind: string, id: number) => control('POST', '/clock/advance', { until: { kind, id } });

describe('next-start outcome', () => {
  it('makes the next start of a grid fail, once; the start after that succeeds again', async () => {
    ({ app, clock } = await start());
    const set = await control('PUT', '/lifecycles/grid/101/next-start', { outcome: 'ALLOCATE_FAILED' });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ kind: 'grid', id: 101, outcome: 'ALLOCATE_FAILED' });

    await act('/grid/101', 'start');
    await settle('grid', 101);
    expect((await read('/grid/101')).state).toBe('ALLOCATE_FAILED');

    await act('/grid/101', 'start');
    await settle('grid', 101);
    expect((await read('/grid/101')).state).toBe('CHECKED');
  });

  it('chooses any failure outcome of a test environment, and a DELETE forgets the choice', async () => {
    ({ app, clock } = await start());
    await control('PUT', '/lifecycles/environment/301/next-start', { outcome: 'VOLUME_NOT_FORMATTED' });
    await act('/environment/301', 'start');
    await settle('environment', 301);
    expect((await read('/environment/301/')).state).toBe('VOLUME_NOT_FORMATTED');

    await control('PUT', '/lifecycles/environment/301/next-start', { outcome: 'PROCESS_FAILED' });
    expect((await control('DELETE', '/lifecycles/environment/301/next-start')).statusCode).toBe(204);
    await act('/environment/301', 'start');
    await settle('environment', 301);
    expect((await read('/environment/301/')).state).toBe('RUNNING');
  });

  it('accepts success for an RSDB, whose only outcome it is', async () => {
    ({ app, clock } = await start());
    expect((await control('PUT', '/lifecycles/rsdb/201/next-start', { outcome: 'ALLOCATED_DATABASE' })).statusCode).toBe(200);
    const bad = await control('PUT', '/lifecycles/rsdb/201/next-start', { outcome: 'ALLOCATE_FAILED' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/ALLOCATED_DATABASE/);
  });

  it('refuses unknown kinds, outcomes, ids and bodies with 400 or 404', async () => {
    ({ app, clock } = await start());
    const cases: Array<[string, object | undefined, number, RegExp]> = [
      ['/lifecycles/planet/1/next-start', { outcome: 'CHECKED' }, 400, /unknown resource kind 'planet': use grid, environment, rsdb, cloudServer/],
      ['/lifecycles/cloudServer/1/next-start', { outcome: 'RUNNING' }, 400, /not possible for a cloudServer/],
      ['/lifecycles/grid/abc/next-start', { outcome: 'CHECKED' }, 400, /grid id 'abc' is not an integer/],
      ['/lifecycles/grid/101/next-start', { outcome: 'EXPLODED' }, 400, /unknown start outcome 'EXPLODED' for a grid: use CHECKED, ALLOCATE_FAILED/],
      ['/lifecycles/grid/101/next-start', {}, 400, /missing required field 'outcome'/],
      ['/lifecycles/grid/101/next-start', { outcome: 1 }, 400, /field 'outcome'/],
      ['/lifecycles/grid/999/next-start', { outcome: 'CHECKED' }, 404, /grid 999 does not exist/],
    ];
    for (const [url, payload, status, message] of cases) {
      const res = await control('PUT', url, payload);
      expect(res.statusCode, url).toBe(status);
      expect(res.json().message, url).toMatch(message);
    }
  });
});

describe('externally terminate and fail', () => {
  it('makes a RUNNING environment EXTERNALLY_TERMINATED, and only a RUNNING one', async () => {
    ({ app, clock } = await start());
    const early = await control('POST', '/lifecycles/environment/301/externally-terminate');
    expect(early.statusCode).toBe(400);
    expect(early.json().message).toMatch(/is LOADED: only a RUNNING environment/);

    await act('/environment/301', 'start');
    await settle('environment', 301);
    const res = await control('POST', '/lifecycles/environment/301/externally-terminate');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'environment', id: 301, state: 'EXTERNALLY_TERMINATED', isFinal: true, since: clock.now() });
    expect((await read('/environment/301/')).state).toBe('EXTERNALLY_TERMINATED');
    expect((await control('POST', '/lifecycles/grid/101/externally-terminate')).statusCode).toBe(400);
    expect((await control('POST', '/lifecycles/environment/999/externally-terminate')).statusCode).toBe(404);
  });

  it('makes a cloud server FAILED', async () => {
    ({ app, clock } = await start());
    const started = (await act('/grid/101', 'start')).json();
    const serverId = started.cloudServers[0].id;
    await settle('grid', 101);
    const res = await control('POST', `/lifecycles/cloudServer/${serverId}/fail`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'cloudServer', id: serverId, state: 'FAILED' });
    expect((await read(`/cloudserver/${serverId}`)).state).toBe('FAILED');
    expect((await control('POST', '/lifecycles/cloudServer/999999/fail')).statusCode).toBe(404);
    expect((await control('POST', '/lifecycles/grid/101/fail')).statusCode).toBe(400);
  });
});

describe('GET /_emulator/lifecycles', () => {
  it('lists every table, the default durations, and each resource with its next transition', async () => {
    ({ app, clock } = await start());
    await act('/environment/301', 'start');
    const res = await control('GET', '/lifecycles');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.now).toBe(T0);
    expect(body.timeScale).toBe(1);
    expect(body.nextTransitionAt).toBe(T0 + ENV_DURATIONS.allocatingDatabase);
    expect(body.tables.grid.start.CHECKED.map((r: { state: string }) => r.state)).toEqual(['ALLOCATING', 'ALLOCATED', 'STARTING_MONITORS', 'CHECKING', 'CHECKED']);
    expect(body.tables.grid.start.CHECKED[0]).toEqual({ state: 'ALLOCATING', holds: 'allocating' });
    expect(Object.keys(body.tables.environment.start)).toContain('EXTERNALLY_TERMINATED');
    expect(body.defaultDurations.grid.allocating).toBeGreaterThan(0);
    const env = body.resources.find((r: { kind: string }) => r.kind === 'environment');
    expect(env).toEqual({
      kind: 'environment',
      id: 301,
      name: 'Staging Environment',
      state: 'ALLOCATING_DATABASE',
      isFinal: false,
      since: T0,
      next: { state: 'ALLOCATED_DATABASE', at: T0 + ENV_DURATIONS.allocatingDatabase },
      settlesAt: expect.any(Number),
      nextStart: { outcome: 'RUNNING', once: false },
      currentStart: { outcome: 'RUNNING', startedAt: T0 },
    });
    const loadedGrid = body.resources.find((r: { kind: string }) => r.kind === 'grid');
    expect(loadedGrid).toMatchObject({ id: 101, state: 'LOADED', isFinal: true });
    expect(loadedGrid.next).toBeUndefined();
  });

  it('reads one resource, and answers 404 for one that does not exist', async () => {
    ({ app, clock } = await start());
    await act('/grid/101', 'start');
    const one = await control('GET', '/lifecycles/grid/101');
    expect(one.json()).toMatchObject({ kind: 'grid', id: 101, state: 'ALLOCATING', next: { state: 'ALLOCATED', at: T0 + GRID_DURATIONS.allocating } });
    const missing = await control('GET', '/lifecycles/rsdb/7');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('rsdb 7 does not exist');
  });
});
