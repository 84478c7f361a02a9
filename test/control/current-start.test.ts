import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, makeApp, makeDemoApp, type TestApp } from '../helpers/app.js';
import { environment, grid, rsdb, seed, template } from '../provisioning/seed.js';
import type { CurrentStart, ResourceLifecycle } from '../../src/client/index.js';

// GET /_emulator/lifecycles says which start a resource is on (`currentStart`): how that start
// ends, from the moment it begins, so that a client can draw the path before it is taken.

const CLOUD = '/concerto/services/rest/CloudService/v1';
const DEMO_TOKEN = { 'x-auth-token': 'demo-token' };

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const control = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) => app.inject({ method, url: `/_emulator${url}`, ...(payload ? { payload } : {}) });
const entry = async (kind: string, id: number): Promise<ResourceLifecycle & { currentStart: CurrentStart }> => {
  const one = await control('GET', `/lifecycles/${kind}/${id}`);
  expect(one.statusCode, one.body).toBe(200);
  const listed = (await control('GET', '/lifecycles')).json().resources.find((r: { kind: string; id: number }) => r.kind === kind && r.id === id);
  // The list and the single entry say the same.
  expect(listed).toEqual(one.json());
  return one.json();
};
const act = async (path: string, action: string, headers: Record<string, string> = AUTH) => {
  const res = await app.inject({ method: 'POST', url: `${CLOUD}${path}/action`, headers, payload: { action } });
  expect(res.statusCode, res.body).toBe(202);
};
const next = () => control('POST', '/clock/advance', { to: 'next' });

describe('the start a resource is on (currentStart)', () => {
  it('gives the failing outcome of the demo grid 103 at every step of its start, its end included', async () => {
    ({ app, clock } = await makeDemoApp());
    const before = await entry('grid', 103);
    expect(before.state).toBe('LOADED');
    expect(before.currentStart).toBeUndefined();
    expect(before.nextStart).toEqual({ outcome: 'CHECKED_WITH_FAILURES', once: false });

    await act('/grid/103', 'start', DEMO_TOKEN);
    const startedAt = clock.now();
    const visited: string[] = [];
    for (let guard = 0; guard < 30; guard++) {
      const position = await entry('grid', 103);
      // "next" is the next transition of any resource: the demo has others moving too.
      if (visited.at(-1) !== position.state) visited.push(position.state);
      expect(position.currentStart, position.state).toEqual({ outcome: 'CHECKED_WITH_FAILURES', startedAt });
      if (!position.next) break;
      await next();
    }
    // Until its failure is plain to see, the path is the one a success takes too.
    expect(visited).toEqual(['ALLOCATING', 'ALLOCATED', 'CHECKING', 'CHECKED_WITH_FAILURES']);
  });

  it('gives the outcome chosen for the start (next-start) while the grid is on it, and the next start has its own', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid({ servers: [template()] })] })));
    await control('PUT', '/lifecycles/grid/101/next-start', { outcome: 'CHECKED_AND_DEPLOYING' });
    await act('/grid/101', 'start');
    const first = await entry('grid', 101);
    expect(first.currentStart).toEqual({ outcome: 'CHECKED_AND_DEPLOYING', startedAt: T0 });
    // Used up by the start: the next one follows the grid's own outcome.
    expect(first.nextStart).toEqual({ outcome: 'CHECKED', once: false });
    await control('POST', '/clock/advance', { until: { kind: 'grid', id: 101 } });
    // Ended in CHECKED, as a success does; the start it came from is still told apart.
    const ended = await entry('grid', 101);
    expect(ended.state).toBe('CHECKED');
    expect(ended.currentStart.outcome).toBe('CHECKED_AND_DEPLOYING');
    await act('/grid/101', 'terminate');
    await control('POST', '/clock/advance', { until: { kind: 'grid', id: 101 } });
    await act('/grid/101', 'start');
    expect((await entry('grid', 101)).currentStart).toEqual({ outcome: 'CHECKED', startedAt: clock.now() });
  });

  it('tells a grid with monitors apart from one without, whatever the outcome', async () => {
    ({ app } = await makeApp(seed({ grids: [grid({ id: 1, servers: [template()] }), grid({ id: 2, monitors: true, servers: [template()] })] })));
    for (const outcome of ['CHECKED', 'ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES', 'CHECKED_AND_DEPLOYING', 'CHECKED_AND_TERMINATING']) {
      for (const id of [1, 2]) {
        await control('PUT', `/lifecycles/grid/${id}/next-start`, { outcome });
        await act(`/grid/${id}`, 'start');
        expect((await entry('grid', id)).currentStart?.outcome, `${outcome}, grid ${id}`).toBe(outcome);
        await control('POST', '/clock/advance', { until: { kind: 'grid', id } });
        expect((await entry('grid', id)).currentStart?.outcome, `${outcome}, grid ${id}, settled`).toBe(outcome);
      }
    }
  });

  it('is gone once a terminate or a cancel changes the schedule', async () => {
    ({ app } = await makeApp(seed({ grids: [grid({ servers: [template()], startOutcome: 'CHECKED_WITH_FAILURES' })] })));
    await act('/grid/101', 'start');
    await next();
    // Cancelled while allocating: the grid is not on that start any more.
    await act('/grid/101', 'terminate');
    const cancelling = await entry('grid', 101);
    expect(cancelling.state).toBe('CANCELLING');
    expect(cancelling.currentStart).toBeUndefined();
    expect(cancelling.nextStart).toEqual({ outcome: 'CHECKED_WITH_FAILURES', once: false });
  });

  it('gives the outcome of a test environment start, not that of an external termination of a success', async () => {
    ({ app, clock } = await makeApp(seed({ environments: [environment()] })));
    await control('PUT', '/lifecycles/environment/301/next-start', { outcome: 'VOLUME_NOT_AVAILABLE' });
    await act('/environment/301', 'start');
    expect((await entry('environment', 301)).currentStart).toEqual({ outcome: 'VOLUME_NOT_AVAILABLE', startedAt: T0 });
    await control('POST', '/clock/advance', { until: { kind: 'environment', id: 301 } });
    const running = await entry('environment', 301);
    expect(running.state).toBe('RUNNING');
    expect(running.currentStart.outcome).toBe('VOLUME_NOT_AVAILABLE');
    // RUNNING, then terminated by someone else: the path of an EXTERNALLY_TERMINATED start,
    // but not its schedule (RUNNING did not last its time).
    await act('/environment/301', 'terminate');
    await control('POST', '/clock/advance', { until: { kind: 'environment', id: 301 } });
    await act('/environment/301', 'start');
    await control('POST', '/clock/advance', { until: { kind: 'environment', id: 301 } });
    expect((await entry('environment', 301)).currentStart.outcome).toBe('RUNNING');
    await control('POST', '/lifecycles/environment/301/externally-terminate');
    const killed = await entry('environment', 301);
    expect(killed.state).toBe('EXTERNALLY_TERMINATED');
    expect(killed.currentStart).toBeUndefined();
  });

  it('gives an RSDB its one outcome, and nothing for a cloud server', async () => {
    ({ app } = await makeApp(seed({ grids: [grid({ servers: [template()] })], rsdbs: [rsdb()] })));
    await act('/rsdb/201', 'start');
    expect((await entry('rsdb', 201)).currentStart).toEqual({ outcome: 'ALLOCATED_DATABASE', startedAt: T0 });
    await act('/grid/101', 'start');
    const servers = (await control('GET', '/lifecycles')).json().resources.filter((r: { kind: string }) => r.kind === 'cloudServer');
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) expect(server.currentStart).toBeUndefined();
  });

  it('survives an export and an import of the state', async () => {
    ({ app } = await makeDemoApp());
    await act('/grid/103', 'start', DEMO_TOKEN);
    await next();
    const before = await entry('grid', 103);
    const state = (await control('GET', '/state')).json();
    const put = await control('PUT', '/state', state);
    expect(put.statusCode, put.body).toBe(200);
    expect((await entry('grid', 103)).currentStart).toEqual(before.currentStart);
  });
});
