import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, makeApp, type TestApp } from '../helpers/app.js';
import { CLOUD, act, call, environment, get, grid, rsdb, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

async function start(parts = seed({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] })) {
  ({ app, clock } = await makeApp(parts));
}

const keys = (o: object) => Object.keys(o).sort();
const GRID_KEYS = [
  'cloudServers', 'collectorInstances', 'instanceId', 'isFinal', 'journalEntries', 'maestroInstances', 'resultsServiceInstances',
  'state', 'statistics', 'totalCheckedCollectorServers', 'totalCheckedLoadGeneratorServers', 'totalCheckedResultsServers',
];
const GRID_SERVER_KEYS = ['cloudType', 'id', 'launchCPA', 'locationID', 'name', 'securityGroup', 'serverClassName', 'usingReservedAddress'];
const LOCATION_KEYS = [
  'locationID', 'locationName', 'maxBusyTime', 'maxPendingTime', 'minBusyTime', 'minPendingTime', 'totalServersAllocated', 'totalTimedOutServers',
];
const SERVER_LIST_KEYS = ['cloudType', 'id', 'instanceSize', 'launchCPAName', 'region', 'state', 'vendorID', 'zone'];
const SERVER_KEYS = [...SERVER_LIST_KEYS, 'privateHostName', 'publicHostName'].sort();
const INSTANCE_KEYS = ['cloudType', 'instanceSize', 'privateHostName', 'publicHostName', 'vendorID'];

describe('grid operations', () => {
  it('starts a grid: 202, state ALLOCATING, serverCompleteBeans [] and no public hosts yet', async () => {
    await start();
    const res = await act(app, '/grid/101', 'start');
    expect(res.status).toBe(202);
    expect(keys(res.body)).toEqual([...GRID_KEYS, 'serverCompleteBeans'].sort());
    expect(res.body.serverCompleteBeans).toEqual([]);
    expect(res.body.state).toBe('ALLOCATING');
    expect(res.body.isFinal).toBe(false);
    expect(res.body.cloudServers).toHaveLength(3);
    for (const server of res.body.cloudServers) expect(keys(server)).toEqual(GRID_SERVER_KEYS);
    expect(res.body.journalEntries).toEqual([{ text: 'Starting grid deployment (3 server(s)).', type: 'INFO' }]);
    expect(res.body.instanceId).toMatch(/^15f3f428f1a7adc5:65:[0-9a-f]+:-?[0-9a-f]+$/);
  });

  it('reads a grid with averages in its statistics, and publicHostname once a server runs', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    clock.advance(60_000);
    const res = await get(app, '/grid/101');
    expect(res.status).toBe(200);
    expect(keys(res.body)).toEqual(GRID_KEYS);
    expect(keys(res.body.statistics)).toEqual(['locations', 'totalAllocationTime', 'totalCheckServerTime', 'totalDeploymentTime']);
    for (const location of res.body.statistics.locations) {
      expect(keys(location)).toEqual([...LOCATION_KEYS, 'averageAllocationTime', 'averagePendingTime'].sort());
    }
    for (const server of res.body.cloudServers) expect(keys(server)).toEqual([...GRID_SERVER_KEYS, 'publicHostname'].sort());
  });

  it('reads a never-started grid as LOADED with nothing deployed', async () => {
    await start();
    const res = await get(app, '/grid/101');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      cloudServers: [],
      collectorInstances: 0,
      isFinal: true,
      journalEntries: [],
      maestroInstances: 0,
      resultsServiceInstances: 0,
      state: 'LOADED',
      statistics: { locations: [], totalAllocationTime: 0, totalCheckServerTime: 0, totalDeploymentTime: 0 },
      totalCheckedCollectorServers: 0,
      totalCheckedLoadGeneratorServers: 0,
      totalCheckedResultsServers: 0,
    });
  });

  it('lists only started grids, terminated ones included, without averages', async () => {
    await start(seed({ grids: [grid({ id: 101 }), grid({ id: 102, name: 'Other' }), grid({ id: 103, name: 'Third' })] }));
    expect((await get(app, '/grid/')).body).toEqual([]);
    await act(app, '/grid/103', 'start');
    await act(app, '/grid/101', 'start');
    clock.advance(60_000);
    await act(app, '/grid/103', 'terminate');
    clock.advance(60_000);
    const list = await get(app, '/grid/');
    expect(list.status).toBe(200);
    expect(list.body.map((g: { state: string }) => g.state)).toEqual(['CHECKED', 'TERMINATED']);
    expect(list.body[0].instanceId).toContain(':65:');
    expect(list.body[1].instanceId).toContain(':67:');
    for (const g of list.body) {
      expect(keys(g)).toEqual(GRID_KEYS);
      for (const location of g.statistics.locations) expect(keys(location)).toEqual(LOCATION_KEYS);
    }
  });

  it('terminates a grid: 202 with the grid as it is right after, no serverCompleteBeans', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    clock.advance(60_000);
    const res = await act(app, '/grid/101', 'terminate');
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('TERMINATING');
    expect(keys(res.body)).toEqual(GRID_KEYS);
  });

  it('refuses a start while the grid is deploying, naming its state', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    clock.advance(12_000);
    const res = await act(app, '/grid/101', 'start');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'grid 101 is CHECKING: it cannot be started until it reaches a final state',
    });
  });
});

describe('cloud server operations', () => {
  it('lists every cloud server in the list form and reads one with its host names', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    const list = await get(app, '/cloudserver/');
    expect(list.status).toBe(200);
    expect(list.body.map((s: { id: number }) => s.id)).toEqual([58201, 58202, 58203]);
    for (const server of list.body) expect(keys(server)).toEqual(SERVER_LIST_KEYS);
    expect(list.body[0].state).toBe('PENDING');
    const one = await get(app, '/cloudserver/58201');
    expect(one.status).toBe(200);
    expect(keys(one.body)).toEqual(SERVER_KEYS);
    expect(one.body.privateHostName).toMatch(/^ip-172-31-\d+-\d+\.ec2\.internal$/);
    expect(one.body.publicHostName).toBe('');
  });

  it('restarts a running server (202, RUNNING, host names) and terminates it (202, SHUTTING_DOWN)', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    clock.advance(60_000);
    const restart = await act(app, '/cloudserver/58202', 'restart');
    expect(restart.status).toBe(202);
    expect(keys(restart.body)).toEqual(SERVER_KEYS);
    expect(restart.body.state).toBe('RUNNING');
    expect(restart.body.publicHostName).toMatch(/\.compute-1\.amazonaws\.com$/);
    const terminate = await act(app, '/cloudserver/58202', 'terminate');
    expect(terminate.status).toBe(202);
    expect(terminate.body.state).toBe('SHUTTING_DOWN');
  });

  it('refuses to restart a pending server, naming its state', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    const res = await act(app, '/cloudserver/58203', 'restart');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('cloud server 58203 is PENDING: only a RUNNING, BUSY or FAILED server can be restarted');
  });
});

describe('RSDB operations', () => {
  it('reads, starts (202 ALLOCATING_DATABASE, server PENDING) and terminates (202 TERMINATING, server RUNNING)', async () => {
    await start();
    const read = await get(app, '/rsdb/201');
    expect(read.status).toBe(200);
    expect(keys(read.body)).toEqual(['cloudServer', 'state']);
    expect(keys(read.body.cloudServer)).toEqual(SERVER_KEYS.filter((k) => k !== 'id'));
    const started = await act(app, '/rsdb/201', 'start');
    expect(started.status).toBe(202);
    expect(started.body.state).toBe('ALLOCATING_DATABASE');
    expect(started.body.cloudServer.state).toBe('PENDING');
    const terminated = await act(app, '/rsdb/201', 'terminate');
    expect(terminated.status).toBe(202);
    expect(terminated.body.state).toBe('TERMINATING');
    expect(terminated.body.cloudServer.state).toBe('RUNNING');
  });

  it('refuses to start a running RSDB, naming its state', async () => {
    await start();
    await act(app, '/rsdb/201', 'start');
    const res = await act(app, '/rsdb/201', 'start');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('RSDB 201 is ALLOCATING_DATABASE: only a LOADED or TERMINATED results database can be started');
  });
});

describe('test environment operations', () => {
  it('starts (202, no mainInstance), reads (200, url once the main server exists) and terminates (202)', async () => {
    await start();
    const started = await act(app, '/environment/301', 'start');
    expect(started.status).toBe(202);
    expect(keys(started.body)).toEqual(['databaseInstance', 'lastLaunched', 'lastLaunchedBy', 'state']);
    expect(started.body.state).toBe('ALLOCATING_DATABASE');
    expect(keys(started.body.databaseInstance)).toEqual(INSTANCE_KEYS);
    clock.advance(60_000);
    const read = await get(app, '/environment/301/');
    expect(read.status).toBe(200);
    expect(keys(read.body)).toEqual(['databaseInstance', 'lastLaunched', 'lastLaunchedBy', 'mainInstance', 'state', 'url']);
    expect(keys(read.body.mainInstance)).toEqual(INSTANCE_KEYS);
    expect(read.body.url).toBe(`http://${read.body.mainInstance.publicHostName}/concerto`);
    const terminated = await act(app, '/environment/301', 'terminate');
    expect(terminated.status).toBe(202);
    expect(terminated.body.state).toBe('TERMINATING');
    expect(keys(terminated.body)).toEqual(['databaseInstance', 'lastLaunched', 'lastLaunchedBy', 'lastStopped', 'mainInstance', 'state']);
  });

  it('reads a never-launched environment without dates or url', async () => {
    await start();
    const read = await get(app, '/environment/301');
    expect(read.body).toEqual({
      databaseInstance: { cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)', privateHostName: '', publicHostName: '', vendorID: '' },
      mainInstance: { cloudType: 'EC2', instanceSize: 'EC2 Main Server (Large)', privateHostName: '', publicHostName: '', vendorID: '' },
      state: 'LOADED',
    });
  });
});

describe('errors common to every path', () => {
  const reads = ['/grid/', '/grid/101', '/cloudserver/', '/cloudserver/58201', '/rsdb/201', '/environment/301'];
  const actions = ['/grid/101/action', '/cloudserver/58201/action', '/rsdb/201/action', '/environment/301/action'];

  it('answers 401 without a valid X-Auth-Token', async () => {
    await start();
    for (const url of [...reads, ...actions]) {
      const method = url.endsWith('action') ? 'POST' : 'GET';
      const missing = await app.inject({ method, url: `${CLOUD}${url}`, payload: { action: 'start' } });
      expect(missing.statusCode, url).toBe(401);
      const bad = await app.inject({ method, url: `${CLOUD}${url}`, headers: { 'x-auth-token': 'nope' }, payload: { action: 'start' } });
      expect(bad.statusCode, url).toBe(401);
      expect(bad.json().statusCode).toBe(401);
    }
  });

  it('answers 400 for an id that is not an integer, and 404 naming an unknown one', async () => {
    await start();
    const cases: Array<[string, string, string]> = [
      ['/grid/x', 'grid id', 'grid 999 does not exist'],
      ['/cloudserver/x', 'cloud server id', 'cloud server 999 does not exist'],
      ['/rsdb/x', 'RSDB id', 'RSDB 999 does not exist'],
      ['/environment/x', 'test environment id', 'test environment 999 does not exist'],
    ];
    for (const [path, what, missing] of cases) {
      const bad = await get(app, path);
      expect(bad.status, path).toBe(400);
      expect(bad.body.message).toBe(`${what} 'x' is not an integer`);
      const badAction = await act(app, path, path.startsWith('/cloudserver') ? 'restart' : 'start');
      expect(badAction.status, path).toBe(400);
      const unknown = await get(app, path.replace('x', '999'));
      expect(unknown.status, path).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, error: 'Not Found', message: missing });
      const unknownAction = await act(app, path.replace('x', '999'), 'terminate');
      expect(unknownAction.status, path).toBe(404);
      expect(unknownAction.body.message).toBe(missing);
    }
  });

  it('answers 405 with an Allow header for a method the path does not support', async () => {
    await start();
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/grid/101', 'GET, HEAD'],
      ['POST', '/grid/', 'GET, HEAD'],
      ['GET', '/grid/101/action', 'POST'],
      ['PUT', '/cloudserver/', 'GET, HEAD'],
      ['PATCH', '/cloudserver/58201', 'GET, HEAD'],
      ['DELETE', '/cloudserver/58201/action', 'POST'],
      ['PUT', '/rsdb/201', 'GET, HEAD'],
      ['GET', '/rsdb/201/action', 'POST'],
      ['POST', '/environment/301', 'GET, HEAD'],
      ['PUT', '/environment/301/action', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await app.inject({ method: method as 'GET', url: `${CLOUD}${path}`, headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'x' });
      expect(res.statusCode, `${method} ${path}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toMatchObject({ statusCode: 405, error: 'Method Not Allowed' });
    }
  });

  it('gives the same answer with and without a trailing slash', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    for (const path of ['/grid', '/grid/101', '/cloudserver', '/cloudserver/58201', '/rsdb/201', '/environment/301']) {
      const without = await get(app, path);
      const withSlash = await get(app, `${path}/`);
      expect(without.status, path).toBe(200);
      expect(withSlash.body, path).toEqual(without.body);
    }
    expect((await call(app, 'POST', '/rsdb/201/action/', { action: 'start' })).status).toBe(202);
  });
});

describe('action bodies', () => {
  const bodies: Array<[string, Record<string, string>, string | undefined, RegExp]> = [
    ['text/plain', { 'content-type': 'text/plain' }, 'start', /^unsupported Content-Type 'text\/plain': send application\/json$/],
    ['form data', { 'content-type': 'application/x-www-form-urlencoded' }, 'action=start', /^unsupported Content-Type/],
    ['invalid JSON', { 'content-type': 'application/json' }, '{"action":', /^the body is not valid JSON/],
    ['no body', {}, undefined, /^the body must be a JSON object such as \{"action":"start"\}$/],
    ['an array', { 'content-type': 'application/json' }, '["start"]', /^the body must be a JSON object/],
    ['a string', { 'content-type': 'application/json' }, '"start"', /^the body must be a JSON object/],
    ['null', { 'content-type': 'application/json' }, 'null', /^the body must be a JSON object/],
    ['no action', { 'content-type': 'application/json' }, '{"verb":"start"}', /^the body has no 'action': use start or terminate$/],
    ['a number action', { 'content-type': 'application/json' }, '{"action":5}', /^'action' must be a string: use start or terminate$/],
    ['an unknown action', { 'content-type': 'application/json' }, '{"action":"stop"}', /^unknown action 'stop' for a grid: use start or terminate$/],
    ['a wrong-case action', { 'content-type': 'application/json' }, '{"action":"START"}', /^unknown action 'START' for a grid/],
  ];
  for (const [what, headers, payload, message] of bodies) {
    it(`answers 400 for ${what}`, async () => {
      await start();
      const res = await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: { ...AUTH, ...headers }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.json().message).toMatch(message);
      expect((await get(app, '/grid/101')).body.state).toBe('LOADED');
    });
  }

  it('names the actions each resource accepts', async () => {
    await start();
    expect((await act(app, '/cloudserver/1', 'start')).body.message).toBe("unknown action 'start' for a cloud server: use restart or terminate");
    expect((await act(app, '/rsdb/201', 'restart')).body.message).toBe("unknown action 'restart' for an RSDB: use start or terminate");
    expect((await act(app, '/environment/301', 'stop')).body.message).toBe("unknown action 'stop' for a test environment: use start or terminate");
  });

  it('refuses fields other than action, naming them (never taken and ignored)', async () => {
    await start();
    const res = await call(app, 'POST', '/grid/101/action', { action: 'start', comment: 'hello' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("body: unknown field 'comment': an action body holds only 'action'");
  });
});
