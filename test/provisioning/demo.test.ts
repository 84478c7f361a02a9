import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp, type TestApp } from '../helpers/app.js';
import { CLOUD } from './seed.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

describe('the bundled demo seed', () => {
  it('walks the README path: log in, find a grid by name, start it, reach CHECKED, terminate it, reach TERMINATED', async () => {
    ({ app, clock } = await makeDemoApp());
    const login = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'demo@example.com', password: 'demo' } });
    expect(login.statusCode).toBe(200);
    const headers = { 'x-auth-token': login.json().token };

    const found = await app.inject({ url: `${REPO}/Objects/grid?name=${encodeURIComponent('Load Test Grid - US East')}`, headers });
    expect(found.statusCode).toBe(200);
    const id = found.json().objects[0].id;

    const started = await app.inject({ method: 'POST', url: `${CLOUD}/grid/${id}/action`, headers, payload: { action: 'start' } });
    expect(started.statusCode).toBe(202);
    expect(started.json().state).toBe('ALLOCATING');
    const begun = clock.now();

    // Poll like a client would, a second at a time.
    let grid = started.json();
    while (!grid.isFinal) {
      clock.advance(1000);
      grid = (await app.inject({ url: `${CLOUD}/grid/${id}`, headers })).json();
    }
    expect(grid.state).toBe('CHECKED');
    // Watchable at TIME_SCALE=1: neither instant nor tedious.
    expect(clock.now() - begun).toBeGreaterThanOrEqual(10_000);
    expect(clock.now() - begun).toBeLessThanOrEqual(20_000);
    expect(grid.cloudServers.every((s: { publicHostname?: string }) => s.publicHostname)).toBe(true);

    const terminated = await app.inject({ method: 'POST', url: `${CLOUD}/grid/${id}/action`, headers, payload: { action: 'terminate' } });
    expect(terminated.statusCode).toBe(202);
    expect(terminated.json().state).toBe('TERMINATING');
    while (grid.state !== 'TERMINATED') {
      clock.advance(1000);
      grid = (await app.inject({ url: `${CLOUD}/grid/${id}`, headers })).json();
      expect(['TERMINATING', 'TERMINATED']).toContain(grid.state);
    }
    const servers = (await app.inject({ url: `${CLOUD}/cloudserver/`, headers })).json();
    const ours = servers.filter((s: { id: number }) => grid.cloudServers.some((g: { id: number }) => g.id === s.id));
    expect(ours.map((s: { state: string }) => s.state)).toEqual(['TERMINATED', 'TERMINATED', 'TERMINATED']);
  });

  it('opens with one grid already CHECKED and one RSDB already running, with the demo token', async () => {
    ({ app, clock } = await makeDemoApp());
    const headers = { 'x-auth-token': 'demo-token' };
    const grids = (await app.inject({ url: `${CLOUD}/grid/`, headers })).json();
    expect(grids.map((g: { state: string }) => g.state)).toEqual(['CHECKED']);
    expect(grids[0].maestroInstances + grids[0].resultsServiceInstances + grids[0].collectorInstances).toBe(grids[0].cloudServers.length);
    expect((await app.inject({ url: `${CLOUD}/rsdb/201`, headers })).json().state).toBe('ALLOCATED_DATABASE');
    expect((await app.inject({ url: `${CLOUD}/rsdb/202`, headers })).json().state).toBe('LOADED');
  });

  it('brings every demo resource to the final state its fixture promises', async () => {
    ({ app, clock } = await makeDemoApp());
    const store = app.world.stores.provisioning;
    const user = 'demo@example.com';
    for (const id of [101, 103, 104, 105]) store.startGrid(id, user);
    for (const id of [301, 302, 303]) store.startEnvironment(id, user);
    store.startRsdb(202);
    for (let next = store.nextTransitionAt(); next !== undefined; next = store.nextTransitionAt()) clock.advanceTo(next);
    expect([101, 102, 103, 104, 105].map((id) => store.getGrid(id).state)).toEqual([
      'CHECKED', 'CHECKED', 'CHECKED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKED',
    ]);
    expect([301, 302, 303].map((id) => store.getEnvironment(id).state)).toEqual(['RUNNING', 'ERROR_BUILD_MISMATCH', 'VOLUME_NOT_FORMATTED']);
    expect(store.getRsdb(202).state).toBe('ALLOCATED_DATABASE');
    const cloudTypes = new Set(store.listCloudServers().map((s) => s.cloudType));
    expect([...cloudTypes].sort()).toEqual(['AZURE', 'COMPUTE_ENGINE', 'EC2']);
  });
});
