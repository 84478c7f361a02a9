import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import { FINAL_GRID_STATES, type GridSeed } from '../../src/provisioning/schemas.js';
import { GRID_DURATIONS as D, act, get, grid, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

async function startWith(overrides: Partial<GridSeed> = {}) {
  ({ app, clock } = await makeApp(seed({ grids: [grid(overrides)] })));
  const res = await act(app, '/grid/101', 'start');
  expect(res.status).toBe(202);
  return res.body;
}

/** Moves the clock to `ms` after the start (T0). */
const at = (ms: number) => clock.advanceTo(T0 + ms);
const read = async (path = '/grid/101') => (await get(app, path)).body;

/** The grid's state at each offset (ascending), checking isFinal against section 3.1 each time. */
async function statesAt(offsets: number[]): Promise<string[]> {
  const states: string[] = [];
  for (const t of offsets) {
    at(t);
    const g = await read();
    expect(g.isFinal, `isFinal of ${g.state}`).toBe(FINAL_GRID_STATES.has(g.state));
    states.push(g.state);
  }
  return states;
}
const serverStates = async () => (await read('/cloudserver/')).map((s: { id: number; state: string }) => `${s.id}:${s.state}`);
const texts = (g: { journalEntries: Array<{ text: string; type: string }> }) => g.journalEntries.map((e) => `${e.type} ${e.text}`);

// Three servers: two load generators (location 1) then one results server (location 2).
// Allocation is staggered: server i of n is RUNNING after allocating * (i + 1) / n.
const stagger = (i: number, n: number) => Math.round((D.allocating * (i + 1)) / n);
const CHECKING_AT = D.allocating + D.allocated;
const CHECKED_AT = CHECKING_AT + D.checking;

describe('grid start ending CHECKED', () => {
  it('passes ALLOCATING, ALLOCATED, CHECKING and reaches CHECKED, each on its boundary', async () => {
    await startWith();
    expect(await statesAt([0, D.allocating - 1, D.allocating, CHECKING_AT - 1, CHECKING_AT, CHECKED_AT - 1, CHECKED_AT, CHECKED_AT * 10])).toEqual([
      'ALLOCATING', 'ALLOCATING', 'ALLOCATED', 'ALLOCATED', 'CHECKING', 'CHECKING', 'CHECKED', 'CHECKED',
    ]);
  });

  it('passes STARTING_MONITORS between ALLOCATED and CHECKING when the grid has monitors', async () => {
    await startWith({ monitors: true });
    const monitorsEnd = CHECKING_AT + D.startingMonitors;
    expect(await statesAt([CHECKING_AT - 1, CHECKING_AT, monitorsEnd - 1, monitorsEnd, monitorsEnd + D.checking - 1, monitorsEnd + D.checking])).toEqual([
      'ALLOCATED', 'STARTING_MONITORS', 'STARTING_MONITORS', 'CHECKING', 'CHECKING', 'CHECKED',
    ]);
    expect(texts(await read())).toContain('INFO Starting monitors on 3 server(s).');
  });

  it('allocates servers one after another, each getting its public host and counting as an instance', async () => {
    await startWith();
    at(stagger(0, 3) - 1);
    let g = await read();
    expect(g.maestroInstances).toBe(0);
    expect(g.cloudServers.some((s: object) => 'publicHostname' in s)).toBe(false);
    at(stagger(0, 3));
    g = await read();
    expect(g.maestroInstances).toBe(1);
    expect(g.cloudServers[0].publicHostname).toMatch(/^ec2-\d+-\d+-\d+-\d+\.compute-1\.amazonaws\.com$/);
    expect(g.cloudServers[1].publicHostname).toBeUndefined();
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:PENDING', '58203:PENDING']);
    at(stagger(1, 3));
    expect((await read()).maestroInstances).toBe(2);
    at(stagger(2, 3));
    g = await read();
    expect([g.maestroInstances, g.resultsServiceInstances, g.collectorInstances]).toEqual([2, 1, 0]);
    expect(g.cloudServers[2].publicHostname).toMatch(/\.eu-west-1\.compute\.amazonaws\.com$/);
    // The single read's host names are the ones the grid shows.
    const server = await read('/cloudserver/58203');
    expect(server.publicHostName).toBe(g.cloudServers[2].publicHostname);
    expect(server.privateHostName).toMatch(/\.eu-west-1\.compute\.internal$/);
  });

  it('counts checked servers per role only once health checks finish', async () => {
    await startWith();
    at(CHECKED_AT - 1);
    let g = await read();
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers, g.totalCheckedCollectorServers]).toEqual([0, 0, 0]);
    at(CHECKED_AT);
    g = await read();
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers, g.totalCheckedCollectorServers]).toEqual([2, 1, 0]);
  });

  it('writes the journal as the deployment goes, one line per allocated server', async () => {
    await startWith();
    at(stagger(1, 3));
    expect((await read()).journalEntries).toHaveLength(3);
    at(CHECKED_AT);
    const g = await read();
    const hosts = g.cloudServers.map((s: { publicHostname: string }) => s.publicHostname);
    expect(texts(g)).toEqual([
      'INFO Starting grid deployment (3 server(s)).',
      `INFO Server amazon - EC2 Test Server (Large) allocated: ${hosts[0]}.`,
      `INFO Server amazon - EC2 Test Server (Large) allocated: ${hosts[1]}.`,
      `INFO Server amazon - EC2 Results Server (Large) allocated: ${hosts[2]}.`,
      'INFO All 3 server(s) allocated.',
      'INFO Health checks started on 3 server(s).',
      'INFO Health checks finished: 3 server(s) passed.',
      'INFO Grid deployment complete.',
    ]);
  });

  it('reports statistics per location in milliseconds', async () => {
    await startWith();
    at(CHECKED_AT);
    const { statistics } = await read();
    expect(statistics.totalAllocationTime).toBe(D.allocating);
    expect(statistics.totalCheckServerTime).toBe(D.checking);
    expect(statistics.totalDeploymentTime).toBe(CHECKED_AT);
    const [east, west] = statistics.locations;
    const pending = [stagger(0, 3), stagger(1, 3)];
    expect(east).toEqual({
      locationID: 1,
      locationName: 'amazon - us-east-1',
      totalServersAllocated: 2,
      totalTimedOutServers: 0,
      maxBusyTime: CHECKED_AT - pending[0],
      minBusyTime: CHECKED_AT - pending[1],
      maxPendingTime: pending[1],
      minPendingTime: pending[0],
      averageAllocationTime: Math.round((pending[0] + pending[1]) / 2),
      averagePendingTime: Math.round((pending[0] + pending[1]) / 2),
    });
    expect(west).toMatchObject({ locationID: 2, totalServersAllocated: 1, maxPendingTime: D.allocating, maxBusyTime: CHECKED_AT - D.allocating });
    // Later reads keep the deployment figures and let busy time grow.
    at(CHECKED_AT + 1000);
    const later = (await read()).statistics;
    expect(later.totalDeploymentTime).toBe(CHECKED_AT);
    expect(later.locations[0].maxBusyTime).toBe(east.maxBusyTime + 1000);
  });
});

describe('grid start failure outcomes', () => {
  it('ALLOCATE_FAILED: every server fails to allocate, counted as timed out', async () => {
    await startWith({ startOutcome: 'ALLOCATE_FAILED' });
    expect(await statesAt([D.allocating - 1, D.allocating])).toEqual(['ALLOCATING', 'ALLOCATE_FAILED']);
    expect(await serverStates()).toEqual(['58201:FAILED', '58202:FAILED', '58203:FAILED']);
    const g = await read();
    expect(g.cloudServers.some((s: object) => 'publicHostname' in s)).toBe(false);
    expect(g.maestroInstances).toBe(0);
    type Location = { totalTimedOutServers: number; totalServersAllocated: number };
    expect(g.statistics.locations.map((l: Location) => [l.totalTimedOutServers, l.totalServersAllocated])).toEqual([[2, 0], [1, 0]]);
    expect(texts(g).filter((t) => t.startsWith('ERROR'))).toEqual([
      'ERROR Server amazon - EC2 Test Server (Large) could not be allocated.',
      'ERROR Server amazon - EC2 Test Server (Large) could not be allocated.',
      'ERROR Server amazon - EC2 Results Server (Large) could not be allocated.',
      'ERROR Grid deployment failed: no server could be allocated.',
    ]);
  });

  it('ALLOCATED_WITH_FAILURES: the last failingServers servers fail, the others run', async () => {
    await startWith({ startOutcome: 'ALLOCATED_WITH_FAILURES', failingServers: 1 });
    expect(await statesAt([D.allocating - 1, D.allocating])).toEqual(['ALLOCATING', 'ALLOCATED_WITH_FAILURES']);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:FAILED']);
    const g = await read();
    expect([g.maestroInstances, g.resultsServiceInstances]).toEqual([2, 0]);
    expect(g.statistics.locations[1].totalTimedOutServers).toBe(1);
    expect(texts(g)).toContain('ERROR Grid deployment finished with failures: 1 of 3 server(s) could not be allocated.');
  });

  it('CHECKED_WITH_FAILURES: failing servers run, then fail when health checks end', async () => {
    await startWith({ startOutcome: 'CHECKED_WITH_FAILURES', failingServers: 2 });
    expect(await statesAt([D.allocating, CHECKING_AT, CHECKED_AT - 1])).toEqual(['ALLOCATED', 'CHECKING', 'CHECKING']);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:RUNNING']);
    expect(await statesAt([CHECKED_AT])).toEqual(['CHECKED_WITH_FAILURES']);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:FAILED', '58203:FAILED']);
    const g = await read();
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers]).toEqual([1, 0]);
    expect(g.statistics.locations[1].totalTimedOutServers).toBe(0);
    expect(texts(g)).toContain('ERROR Server amazon - EC2 Results Server (Large) failed its health check.');
    expect(texts(g)).toContain('INFO Health checks finished: 1 server(s) passed, 2 failed.');
  });

  it('CHECKED_AND_DEPLOYING: late servers run partway through and are checked at CHECKED', async () => {
    await startWith({ startOutcome: 'CHECKED_AND_DEPLOYING' });
    const lateAt = D.allocating + D.checking;
    const end = lateAt + D.pendingServers;
    const lateRunning = lateAt + D.pendingServers / 2;
    expect(await statesAt([D.allocating - 1, D.allocating, lateAt - 1, lateAt])).toEqual(['ALLOCATING', 'CHECKING', 'CHECKING', 'CHECKED_AND_DEPLOYING']);
    let g = await read();
    expect(g.isFinal).toBe(false);
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers]).toEqual([2, 0]);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:PENDING']);
    at(lateRunning - 1);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:PENDING']);
    at(lateRunning);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:RUNNING']);
    expect(await statesAt([end - 1, end])).toEqual(['CHECKED_AND_DEPLOYING', 'CHECKED']);
    g = await read();
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers]).toEqual([2, 1]);
    expect(texts(g).slice(-2)).toEqual(['INFO Health checks finished on the 1 late server(s).', 'INFO Grid deployment complete.']);
  });

  it('CHECKED_AND_TERMINATING: late servers shut down while pending, then the grid is CHECKED', async () => {
    await startWith({ startOutcome: 'CHECKED_AND_TERMINATING' });
    const lateAt = D.allocating + D.checking;
    const end = lateAt + D.pendingServers;
    expect(await statesAt([lateAt - 1, lateAt])).toEqual(['CHECKING', 'CHECKED_AND_TERMINATING']);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:SHUTTING_DOWN']);
    expect(await statesAt([end - 1, end])).toEqual(['CHECKED_AND_TERMINATING', 'CHECKED']);
    expect(await serverStates()).toEqual(['58201:RUNNING', '58202:RUNNING', '58203:TERMINATED']);
    const g = await read();
    expect([g.totalCheckedLoadGeneratorServers, g.totalCheckedResultsServers]).toEqual([2, 0]);
    expect(g.cloudServers[2].publicHostname).toBeUndefined();
    expect(texts(g)).toContain('INFO Server amazon - EC2 Results Server (Large) terminated while pending.');
  });
});

describe('grid terminate and cancel', () => {
  it('terminates a CHECKED grid: TERMINATING, servers shutting down, then TERMINATED, servers still listed', async () => {
    await startWith();
    at(CHECKED_AT);
    const res = await act(app, '/grid/101', 'terminate');
    expect(res.body.state).toBe('TERMINATING');
    expect(res.body.maestroInstances).toBe(0);
    expect(await serverStates()).toEqual(['58201:SHUTTING_DOWN', '58202:SHUTTING_DOWN', '58203:SHUTTING_DOWN']);
    expect(await statesAt([CHECKED_AT + D.terminating - 1, CHECKED_AT + D.terminating])).toEqual(['TERMINATING', 'TERMINATED']);
    expect(await serverStates()).toEqual(['58201:TERMINATED', '58202:TERMINATED', '58203:TERMINATED']);
    const g = await read();
    expect(texts(g).slice(-2)).toEqual(['INFO Terminating grid (3 server(s) shutting down).', 'INFO Grid terminated.']);
    // The checked counters are history of this deployment and stay.
    expect(g.totalCheckedLoadGeneratorServers).toBe(2);
    expect(g.statistics.totalDeploymentTime).toBe(CHECKED_AT);
  });

  it('ends TERMINATED_WITH_FAILURES with one server FAILED when the grid says so', async () => {
    await startWith({ terminateOutcome: 'TERMINATED_WITH_FAILURES' });
    at(CHECKED_AT);
    await act(app, '/grid/101', 'terminate');
    expect(await statesAt([CHECKED_AT + D.terminating])).toEqual(['TERMINATED_WITH_FAILURES']);
    expect(await serverStates()).toEqual(['58201:TERMINATED', '58202:TERMINATED', '58203:FAILED']);
    expect(texts(await read()).slice(-2)).toEqual([
      'ERROR Server amazon - EC2 Results Server (Large) could not be terminated.',
      'ERROR Grid terminated with failures.',
    ]);
  });

  it('terminates a grid that ended with failures (ALLOCATE_FAILED, ALLOCATED_WITH_FAILURES, CHECKED_WITH_FAILURES)', async () => {
    for (const startOutcome of ['ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES'] as const) {
      await app?.close();
      await startWith({ startOutcome });
      at(CHECKED_AT);
      expect((await act(app, '/grid/101', 'terminate')).body.state, startOutcome).toBe('TERMINATING');
      expect(await statesAt([CHECKED_AT + D.terminating])).toEqual(['TERMINATED']);
      expect(await serverStates()).toEqual(['58201:TERMINATED', '58202:TERMINATED', '58203:TERMINATED']);
    }
  });

  it('cancels a grid still deploying: CANCELLING then CANCELLED, and what was planned never happens', async () => {
    await startWith();
    const now = stagger(0, 3);
    at(now);
    const res = await act(app, '/grid/101', 'terminate');
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('CANCELLING');
    expect(res.body.isFinal).toBe(false);
    expect(await serverStates()).toEqual(['58201:SHUTTING_DOWN', '58202:SHUTTING_DOWN', '58203:SHUTTING_DOWN']);
    expect(await statesAt([now + D.cancelling - 1, now + D.cancelling, CHECKED_AT * 2])).toEqual(['CANCELLING', 'CANCELLED', 'CANCELLED']);
    expect(await serverStates()).toEqual(['58201:TERMINATED', '58202:TERMINATED', '58203:TERMINATED']);
    const g = await read();
    expect(g.totalCheckedLoadGeneratorServers).toBe(0);
    expect(g.cloudServers.filter((s: object) => 'publicHostname' in s)).toHaveLength(1);
    expect(texts(g)).toEqual([
      'INFO Starting grid deployment (3 server(s)).',
      `INFO Server amazon - EC2 Test Server (Large) allocated: ${g.cloudServers[0].publicHostname}.`,
      'INFO Cancelling grid deployment (3 server(s) shutting down).',
      'INFO Grid deployment cancelled.',
    ]);
    expect(g.statistics.totalDeploymentTime).toBe(now + D.cancelling);
  });

  it('cancels from every in-progress state', async () => {
    for (const [startOutcome, when] of [
      ['CHECKED', D.allocating],
      ['CHECKED', CHECKING_AT],
      ['CHECKED_AND_DEPLOYING', D.allocating + D.checking],
      ['CHECKED_AND_TERMINATING', D.allocating + D.checking],
    ] as const) {
      await app?.close();
      await startWith({ startOutcome });
      at(when);
      const before = (await read()).state;
      expect((await act(app, '/grid/101', 'terminate')).body.state, before).toBe('CANCELLING');
      expect(await statesAt([when + D.cancelling])).toEqual(['CANCELLED']);
    }
  });

  it('answers 202 and changes nothing when the grid is not deployed or already going down', async () => {
    ({ app, clock } = await makeApp(seed({ grids: [grid()] })));
    const loaded = await act(app, '/grid/101', 'terminate');
    expect(loaded.status).toBe(202);
    expect(loaded.body.state).toBe('LOADED');
    expect((await get(app, '/grid/')).body).toEqual([]);

    await act(app, '/grid/101', 'start');
    at(CHECKED_AT);
    await act(app, '/grid/101', 'terminate');
    at(CHECKED_AT + 1);
    const again = await act(app, '/grid/101', 'terminate');
    expect(again.status).toBe(202);
    expect(again.body.state).toBe('TERMINATING');
    // Still ends when the first terminate said it would.
    expect(await statesAt([CHECKED_AT + D.terminating])).toEqual(['TERMINATED']);
    const journal = (await read()).journalEntries;
    expect((await act(app, '/grid/101', 'terminate')).body.journalEntries).toEqual(journal);

    await act(app, '/grid/101', 'start');
    const cancelAt = CHECKED_AT + D.terminating;
    await act(app, '/grid/101', 'terminate');
    expect((await act(app, '/grid/101', 'terminate')).body.state).toBe('CANCELLING');
    at(cancelAt + D.cancelling);
    expect((await act(app, '/grid/101', 'terminate')).body.state).toBe('CANCELLED');
  });
});

describe('starting a grid again', () => {
  it('makes a new deployment: new instanceId, new servers, the old ones shut down but still listed', async () => {
    const first = await startWith();
    at(CHECKED_AT);
    const second = await act(app, '/grid/101', 'start');
    expect(second.status).toBe(202);
    expect(second.body.state).toBe('ALLOCATING');
    expect(second.body.instanceId).not.toBe(first.instanceId);
    expect(second.body.cloudServers.map((s: { id: number }) => s.id)).toEqual([58204, 58205, 58206]);
    expect(second.body.journalEntries).toEqual([{ text: 'Starting grid deployment (3 server(s)).', type: 'INFO' }]);
    expect(second.body.totalCheckedLoadGeneratorServers).toBe(0);
    expect(await serverStates()).toEqual([
      '58201:SHUTTING_DOWN', '58202:SHUTTING_DOWN', '58203:SHUTTING_DOWN', '58204:PENDING', '58205:PENDING', '58206:PENDING',
    ]);
    at(CHECKED_AT + D.serverShutdown);
    expect((await serverStates()).slice(0, 3)).toEqual(['58201:TERMINATED', '58202:TERMINATED', '58203:TERMINATED']);
    expect(await statesAt([2 * CHECKED_AT])).toEqual(['CHECKED']);
  });

  it('starts again from TERMINATED, CANCELLED and the failure outcomes', async () => {
    for (const startOutcome of ['ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES'] as const) {
      await app?.close();
      await startWith({ startOutcome });
      at(CHECKED_AT);
      expect((await act(app, '/grid/101', 'start')).status, startOutcome).toBe(202);
    }
    await app.close();
    await startWith();
    await act(app, '/grid/101', 'terminate');
    at(D.cancelling);
    expect((await act(app, '/grid/101', 'start')).status).toBe(202);
    at(D.cancelling + CHECKED_AT);
    await act(app, '/grid/101', 'terminate');
    at(D.cancelling + CHECKED_AT + D.terminating);
    expect((await read()).state).toBe('TERMINATED');
    expect((await act(app, '/grid/101', 'start')).status).toBe(202);
  });
});

describe('cloud server actions on a grid', () => {
  it('restarts a failed server to RUNNING at once and notes it in the grid journal', async () => {
    await startWith({ startOutcome: 'CHECKED_WITH_FAILURES' });
    at(CHECKED_AT);
    const res = await act(app, '/cloudserver/58203', 'restart');
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('RUNNING');
    expect((await read('/cloudserver/58203')).state).toBe('RUNNING');
    const g = await read();
    expect(g.resultsServiceInstances).toBe(1);
    expect(texts(g).at(-1)).toBe('INFO Server amazon - EC2 Results Server (Large) restarted.');
  });

  it('terminates one server: SHUTTING_DOWN, TERMINATED after serverShutdown; idempotent; not restartable', async () => {
    await startWith();
    at(CHECKED_AT);
    const res = await act(app, '/cloudserver/58201', 'terminate');
    expect(res.body.state).toBe('SHUTTING_DOWN');
    expect(res.body.publicHostName).not.toBe('');
    expect((await read()).maestroInstances).toBe(1);
    const restart = await act(app, '/cloudserver/58201', 'restart');
    expect(restart.status).toBe(400);
    expect(restart.body.message).toBe('cloud server 58201 is SHUTTING_DOWN: only a RUNNING, BUSY or FAILED server can be restarted');
    at(CHECKED_AT + D.serverShutdown - 1);
    expect((await act(app, '/cloudserver/58201', 'terminate')).body.state).toBe('SHUTTING_DOWN');
    at(CHECKED_AT + D.serverShutdown);
    expect((await read('/cloudserver/58201')).state).toBe('TERMINATED');
    expect((await act(app, '/cloudserver/58201', 'terminate')).status).toBe(202);
    expect((await act(app, '/cloudserver/58201', 'restart')).body.message).toMatch(/^cloud server 58201 is TERMINATED:/);
    expect(texts(await read())).toContain('INFO Server amazon - EC2 Test Server (Large) terminated on request.');
    // The grid itself is unaffected, and its terminate skips the server already down.
    expect((await read()).state).toBe('CHECKED');
    expect((await act(app, '/grid/101', 'terminate')).body.journalEntries.at(-1).text).toBe('Terminating grid (2 server(s) shutting down).');
  });

  it('terminating a late server of CHECKED_AND_DEPLOYING means it is never checked', async () => {
    await startWith({ startOutcome: 'CHECKED_AND_DEPLOYING' });
    at(D.allocating + D.checking);
    await act(app, '/cloudserver/58203', 'terminate');
    at(10 * CHECKED_AT);
    const g = await read();
    expect(g.state).toBe('CHECKED');
    expect(g.totalCheckedResultsServers).toBe(0);
  });
});
