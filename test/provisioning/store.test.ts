import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import { DomainError } from '../../src/core/errors.js';
import { STATUS_OF } from '../../src/http/errors.js';
import { parseState, type State } from '../../src/state.js';
import type { ProvisioningStore } from '../../src/provisioning/store.js';
import { ENV_DURATIONS as E, GRID_DURATIONS as D, RSDB_DURATIONS as R, act, environment, get, grid, rsdb, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const CHECKED_AT = D.allocating + D.allocated + D.checking;
const ENV_RUNNING_AT = E.allocatingDatabase + E.allocatedDatabase + E.checkedDatabase + E.allocatingMain + E.allocatedMain + E.checkedMain;
const at = (ms: number) => clock.advanceTo(T0 + ms);
const read = async (path: string) => (await get(app, path)).body;
const store = (): ProvisioningStore => app.world.stores.provisioning;

async function open(parts: Partial<State>, config: Parameters<typeof makeApp>[1] = {}) {
  ({ app, clock } = await makeApp(seed(parts), config));
}

/** Runs `fn` and returns the DomainError it throws, with the status it is answered with. */
function apiError(fn: () => unknown): { statusCode: number; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return { statusCode: STATUS_OF[(err as DomainError).kind], message: (err as DomainError).message };
  }
  throw new Error('expected a DomainError');
}

describe('TIME_SCALE', () => {
  it('0 makes every lifecycle reach its final state at once', async () => {
    await open({ grids: [grid({ monitors: true })], rsdbs: [rsdb()], environments: [environment()] }, { timeScale: 0 });
    const started = (await act(app, '/grid/101', 'start')).body;
    expect(started.state).toBe('CHECKED');
    expect(started.isFinal).toBe(true);
    expect([started.maestroInstances, started.resultsServiceInstances, started.totalCheckedLoadGeneratorServers]).toEqual([2, 1, 2]);
    expect(started.journalEntries.map((e: { text: string }) => e.text)).toEqual([
      'Starting grid deployment (3 server(s)).',
      ...started.cloudServers.map((s: { name: string; publicHostname: string }) => `Server ${s.name} allocated: ${s.publicHostname}.`),
      'All 3 server(s) allocated.',
      'Starting monitors on 3 server(s).',
      'Health checks started on 3 server(s).',
      'Health checks finished: 3 server(s) passed.',
      'Grid deployment complete.',
    ]);
    expect((await act(app, '/grid/101', 'terminate')).body.state).toBe('TERMINATED');
    expect((await read('/cloudserver/')).every((s: { state: string }) => s.state === 'TERMINATED')).toBe(true);
    expect((await act(app, '/rsdb/201', 'start')).body.state).toBe('ALLOCATED_DATABASE');
    expect((await act(app, '/rsdb/201', 'terminate')).body.state).toBe('TERMINATED');
    expect((await act(app, '/environment/301', 'start')).body.state).toBe('RUNNING');
    expect((await act(app, '/environment/301', 'terminate')).body.state).toBe('TERMINATED');
    expect(store().nextTransitionAt()).toBeUndefined();
  });

  it('2 doubles every duration', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] }, { timeScale: 2 });
    await act(app, '/grid/101', 'start');
    await act(app, '/rsdb/201', 'start');
    await act(app, '/environment/301', 'start');
    at(2 * D.allocating - 1);
    expect((await read('/grid/101')).state).toBe('ALLOCATING');
    at(2 * D.allocating);
    expect((await read('/grid/101')).state).toBe('ALLOCATED');
    at(2 * CHECKED_AT - 1);
    expect((await read('/grid/101')).state).toBe('CHECKING');
    at(2 * CHECKED_AT);
    const g = await read('/grid/101');
    expect(g.state).toBe('CHECKED');
    expect(g.statistics.totalAllocationTime).toBe(2 * D.allocating);
    at(2 * R.allocating - 1);
    expect((await read('/rsdb/201')).state).toBe('ALLOCATING_DATABASE');
    at(2 * R.allocating);
    expect((await read('/rsdb/201')).state).toBe('ALLOCATED_DATABASE');
    at(2 * ENV_RUNNING_AT - 1);
    expect((await read('/environment/301')).state).toBe('CHECKED_MAIN');
    at(2 * ENV_RUNNING_AT);
    expect((await read('/environment/301')).state).toBe('RUNNING');
  });
});

describe('startedAgoMs', () => {
  it('starts a seeded grid, RSDB and environment at load time as if that long ago', async () => {
    await open({
      grids: [grid({ startedAgoMs: CHECKED_AT + 500 }), grid({ id: 102, name: 'Half way', startedAgoMs: D.allocating })],
      rsdbs: [rsdb({ startedAgoMs: R.allocating })],
      environments: [environment({ startedAgoMs: ENV_RUNNING_AT })],
    });
    const list = await read('/grid/');
    expect(list.map((g: { state: string }) => g.state)).toEqual(['CHECKED', 'ALLOCATED']);
    expect(list[0].statistics.totalDeploymentTime).toBe(CHECKED_AT);
    expect(list[0].journalEntries.at(-1).text).toBe('Grid deployment complete.');
    expect((await read('/cloudserver/')).map((s: { id: number }) => s.id)).toEqual([58201, 58202, 58203, 58204, 58205, 58206]);
    expect((await read('/rsdb/201')).state).toBe('ALLOCATED_DATABASE');
    const env = await read('/environment/301');
    expect(env.state).toBe('RUNNING');
    expect(env.lastLaunchedBy).toBe('system');
    // The half-way grid carries on from where it is.
    at(D.allocated + D.checking);
    expect((await read('/grid/102')).state).toBe('CHECKED');
  });

  it('keeps a seeded lastLaunchedBy for an environment started at load time', async () => {
    await open({ environments: [environment({ startedAgoMs: 0, lastLaunchedBy: 'john.smith@example.com' })] });
    expect((await read('/environment/301')).lastLaunchedBy).toBe('john.smith@example.com');
  });
});

describe('export', () => {
  it('round-trips through parseState: a re-imported export reads exactly the same and does not restart anything', async () => {
    await open({
      grids: [grid(), grid({ id: 102, name: 'Seeded', startedAgoMs: 1000, nextStartOutcome: 'ALLOCATE_FAILED' })],
      rsdbs: [rsdb()],
      environments: [environment({ startOutcome: 'EXTERNALLY_TERMINATED' })],
    });
    await act(app, '/grid/101', 'start');
    await act(app, '/rsdb/201', 'start');
    await act(app, '/environment/301', 'start');
    at(5000);
    await act(app, '/cloudserver/58201', 'terminate');
    at(7000);
    const exported = store().export();
    const { grids, cloudServers, rsdbs, environments } = parseState(exported, 'export');
    const reparsed = { grids, cloudServers, rsdbs, environments };
    expect(reparsed).toEqual(exported);

    const paths = ['/grid/', '/grid/101', '/grid/102', '/cloudserver/', '/cloudserver/58201', '/cloudserver/58204', '/rsdb/201', '/environment/301'];
    const original = async () => Promise.all(paths.map((p) => read(p)));
    const times = [7000, 12_000, CHECKED_AT, 100_000];
    const before: unknown[] = [];
    for (const t of times) {
      at(t);
      before.push(await original());
    }
    await app.close();
    ({ app, clock } = await makeApp(seed(reparsed)));
    clock.advanceTo(T0 + 7000);
    for (const [i, t] of times.entries()) {
      at(t);
      expect(await original(), `at ${t}`).toEqual(before[i]);
    }
  });

  it('continues cloud server ids and instance ids after a re-import', async () => {
    await open({ grids: [grid()] }, { timeScale: 0 });
    const first = (await act(app, '/grid/101', 'start')).body;
    const exported = store().export();
    await app.close();
    await open(exported, { timeScale: 0 });
    const second = (await act(app, '/grid/101', 'start')).body;
    expect(second.cloudServers.map((s: { id: number }) => s.id)).toEqual([58204, 58205, 58206]);
    expect(second.instanceId.split(':')[3]).not.toBe(first.instanceId.split(':')[3]);
  });

  it('starts cloud server ids after the highest seeded one', async () => {
    await open({ grids: [grid()] }, { timeScale: 0 });
    await act(app, '/grid/101', 'start');
    const exported = store().export();
    exported.cloudServers[2].id = 70000;
    exported.grids[0].deployment!.cloudServerIds[2] = 70000;
    await app.close();
    await open(exported, { timeScale: 0 });
    expect((await act(app, '/grid/101', 'start')).body.cloudServers[0].id).toBe(70001);
  });

  it('lists cloud servers by id whatever their order in the state, new ones last', async () => {
    await open({ grids: [grid(), grid({ id: 102, name: 'Second' })] }, { timeScale: 0 });
    await act(app, '/grid/101', 'start');
    await act(app, '/grid/102', 'start');
    const exported = store().export();
    exported.cloudServers.reverse();
    await app.close();
    await open(exported, { timeScale: 0 });
    const ids = async () => (await read('/cloudserver/')).map((s: { id: number }) => s.id);
    expect(await ids()).toEqual([58201, 58202, 58203, 58204, 58205, 58206]);
    await act(app, '/grid/101', 'start');
    expect(await ids()).toEqual([58201, 58202, 58203, 58204, 58205, 58206, 58207, 58208, 58209]);
    // The export keeps the state's own order.
    expect(store().export().cloudServers.map((s) => s.id)).toEqual([58206, 58205, 58204, 58203, 58202, 58201, 58207, 58208, 58209]);
  });
});

describe('setNextStartOutcome', () => {
  it('applies to the next start of a grid only', async () => {
    await open({ grids: [grid()] }, { timeScale: 0 });
    store().setNextStartOutcome('grid', 101, 'ALLOCATE_FAILED');
    expect((await act(app, '/grid/101', 'start')).body.state).toBe('ALLOCATE_FAILED');
    expect((await act(app, '/grid/101', 'start')).body.state).toBe('CHECKED');
  });

  it('applies to the next start of an environment only, and null clears it', async () => {
    await open({ environments: [environment()] }, { timeScale: 0 });
    store().setNextStartOutcome('environment', 301, 'PROCESS_FAILED');
    expect((await act(app, '/environment/301', 'start')).body.state).toBe('PROCESS_FAILED');
    expect((await act(app, '/environment/301', 'start')).body.state).toBe('RUNNING');
    store().setNextStartOutcome('environment', 301, 'ERROR_BUILD_MISMATCH');
    store().setNextStartOutcome('environment', 301, null);
    await act(app, '/environment/301', 'terminate');
    expect((await act(app, '/environment/301', 'start')).body.state).toBe('RUNNING');
  });

  it('refuses unknown kinds, ids and outcomes with a clear 400 or 404', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    store().setNextStartOutcome('rsdb', 201, 'ALLOCATED_DATABASE');
    const cases: Array<[() => void, number, RegExp]> = [
      [() => store().setNextStartOutcome('rsdb', 201, 'TERMINATED'), 400, /the only one is ALLOCATED_DATABASE/],
      [() => store().setNextStartOutcome('grid', 101, 'RUNNING'), 400, /^unknown start outcome 'RUNNING' for a grid: use CHECKED, ALLOCATE_FAILED/],
      [() => store().setNextStartOutcome('environment', 301, 'CHECKED'), 400, /^unknown start outcome 'CHECKED' for a test environment/],
      [() => store().setNextStartOutcome('server', 1, 'CHECKED'), 400, /^unknown resource kind 'server': use grid, environment or rsdb$/],
      [() => store().setNextStartOutcome('grid', 999, 'CHECKED'), 404, /^grid 999 does not exist$/],
      [() => store().setNextStartOutcome('rsdb', 999, 'ALLOCATED_DATABASE'), 404, /^RSDB 999 does not exist$/],
    ];
    for (const [fn, status, message] of cases) {
      const err = apiError(fn);
      expect(err.statusCode).toBe(status);
      expect(err.message).toMatch(message);
    }
  });
});

describe('externallyTerminate and failServer', () => {
  it('terminates a RUNNING environment externally, now; refuses any other state', async () => {
    await open({ environments: [environment()] });
    expect(apiError(() => store().externallyTerminate(301)).message).toBe(
      'test environment 301 is LOADED: only a RUNNING environment can be terminated externally',
    );
    await act(app, '/environment/301', 'start');
    expect(apiError(() => store().externallyTerminate(301)).statusCode).toBe(400);
    at(ENV_RUNNING_AT);
    expect(store().externallyTerminate(301).state).toBe('EXTERNALLY_TERMINATED');
    expect((await read('/environment/301')).state).toBe('EXTERNALLY_TERMINATED');
    expect(apiError(() => store().externallyTerminate(999)).statusCode).toBe(404);
  });

  it('fails a cloud server now, noting it in the grid journal; a terminated one cannot fail', async () => {
    await open({ grids: [grid()] });
    await act(app, '/grid/101', 'start');
    at(CHECKED_AT);
    expect(store().failServer(58202).state).toBe('FAILED');
    expect((await read('/cloudserver/58202')).state).toBe('FAILED');
    const g = await read('/grid/101');
    expect(g.maestroInstances).toBe(1);
    expect(g.journalEntries.at(-1)).toEqual({ text: 'Server amazon - EC2 Test Server (Large) failed.', type: 'ERROR' });
    expect((await act(app, '/cloudserver/58202', 'restart')).body.state).toBe('RUNNING');
    await act(app, '/cloudserver/58203', 'terminate');
    at(CHECKED_AT + D.serverShutdown);
    expect(apiError(() => store().failServer(58203)).message).toBe('cloud server 58203 is TERMINATED: a terminated server cannot fail');
    expect(apiError(() => store().failServer(1)).statusCode).toBe(404);
  });

  it('a pending server failed before allocation counts as timed out', async () => {
    await open({ grids: [grid()] });
    await act(app, '/grid/101', 'start');
    at(1000);
    store().failServer(58203);
    at(CHECKED_AT);
    const g = await read('/grid/101');
    expect(g.statistics.locations[1]).toMatchObject({ totalTimedOutServers: 1, totalServersAllocated: 0 });
    expect(g.totalCheckedResultsServers).toBe(0);
  });
});

describe('lifecycles and nextTransitionAt', () => {
  it('lists every table with state and duration names', async () => {
    await open({});
    const { tables } = store().lifecycles();
    expect(Object.keys(tables.grid.start).sort()).toEqual(
      ['ALLOCATED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKED', 'CHECKED_AND_DEPLOYING', 'CHECKED_AND_TERMINATING', 'CHECKED_WITH_FAILURES'].sort(),
    );
    expect(tables.grid.start.CHECKED.map((r) => r.state)).toEqual(['ALLOCATING', 'ALLOCATED', 'STARTING_MONITORS', 'CHECKING', 'CHECKED']);
    expect(tables.grid.start.CHECKED[0].holds).toBe('allocating');
    expect(Object.keys(tables.environment.start)).toHaveLength(6);
    expect(tables.rsdb.start.map((r) => r.state)).toEqual(['ALLOCATING_DATABASE', 'ALLOCATED_DATABASE']);
    expect(tables.cloudServer.terminate.map((r) => r.state)).toEqual(['SHUTTING_DOWN', 'TERMINATED']);
  });

  it('tells where each resource is, and settlesAt fast-forwards a grid to CHECKED', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    const before = store().lifecycles().resources;
    expect(before).toEqual([
      // A grid without monitors never takes STARTING_MONITORS.
      { kind: 'grid', id: 101, name: 'Test Grid', state: 'LOADED', isFinal: true, since: T0, nextStart: { outcome: 'CHECKED', once: false }, skips: ['STARTING_MONITORS'] },
      { kind: 'rsdb', id: 201, name: 'Results DB', state: 'LOADED', isFinal: true, since: T0, nextStart: { outcome: 'ALLOCATED_DATABASE', once: false } },
      { kind: 'environment', id: 301, name: 'Staging Environment', state: 'LOADED', isFinal: true, since: T0, nextStart: { outcome: 'RUNNING', once: false } },
    ]);
    expect(store().nextTransitionAt()).toBeUndefined();

    at(1000);
    await act(app, '/grid/101', 'start');
    const gridEntry = store().lifecycles().resources.find((r) => r.kind === 'grid')!;
    expect(gridEntry).toEqual({
      kind: 'grid', id: 101, name: 'Test Grid', state: 'ALLOCATING', isFinal: false, since: T0 + 1000,
      next: { state: 'ALLOCATED', at: T0 + 1000 + D.allocating },
      settlesAt: T0 + 1000 + CHECKED_AT,
      nextStart: { outcome: 'CHECKED', once: false },
      skips: ['STARTING_MONITORS'],
      currentStart: { outcome: 'CHECKED', startedAt: T0 + 1000 },
    });
    const servers = store().lifecycles().resources.filter((r) => r.kind === 'cloudServer');
    expect(servers.map((s) => [s.id, s.state, s.isFinal])).toEqual([[58201, 'PENDING', false], [58202, 'PENDING', false], [58203, 'PENDING', false]]);
    // The first change anywhere: the first server is allocated.
    expect(store().nextTransitionAt()).toBe(T0 + 1000 + Math.round(D.allocating / 3));

    clock.advanceTo(gridEntry.settlesAt!);
    expect((await read('/grid/101')).state).toBe('CHECKED');
    expect(store().lifecycles().resources.find((r) => r.kind === 'grid')).toMatchObject({ state: 'CHECKED', isFinal: true, settlesAt: gridEntry.settlesAt });
    expect(store().nextTransitionAt()).toBeUndefined();
  });

  it('stepping nextTransitionAt visits every change of a deployment in order', async () => {
    await open({ grids: [grid()] });
    await act(app, '/grid/101', 'start');
    const seen: string[] = [];
    for (let next = store().nextTransitionAt(); next !== undefined; next = store().nextTransitionAt()) {
      clock.advanceTo(next);
      seen.push(`${next - T0}:${(await read('/grid/101')).state}`);
    }
    const third = Math.round(D.allocating / 3);
    expect(seen).toEqual([
      `${third}:ALLOCATING`, `${2 * third + 1}:ALLOCATING`, `${D.allocating}:ALLOCATED`, `${D.allocating + D.allocated}:CHECKING`, `${CHECKED_AT}:CHECKED`,
    ]);
  });
});

describe('position and settlesAt', () => {
  const KINDS = ['grid', 'cloudServer', 'rsdb', 'environment'] as const;

  /** Every resource's lookups against its entry in lifecycles(); returns the states seen. */
  function expectLookupsMatchListing(): string[] {
    const listed = store().lifecycles().resources;
    for (const entry of listed) {
      const what = `${entry.kind} ${entry.id} (${entry.state})`;
      expect(store().position(entry.kind, entry.id), what).toEqual(entry);
      // null, not undefined: the resource exists but was never started.
      expect(store().settlesAt(entry.kind, entry.id), what).toBe(entry.settlesAt ?? null);
    }
    return listed.map((r) => `${r.kind}:${r.state}`);
  }

  it('give for one resource what lifecycles() lists for it, in every state it passes through', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    const seen = new Set(expectLookupsMatchListing());
    expect(store().settlesAt('grid', 101)).toBeNull();

    at(1000);
    await act(app, '/grid/101', 'start');
    await act(app, '/rsdb/201', 'start');
    await act(app, '/environment/301', 'start');
    expect(store().settlesAt('grid', 101)).toBe(T0 + 1000 + CHECKED_AT);
    // Every instant a state changes, and the instant before it.
    const changes: number[] = [];
    for (let next = store().nextTransitionAt(); next !== undefined; next = store().nextTransitionAt()) {
      changes.push(next);
      clock.advanceTo(next - 1);
      expectLookupsMatchListing().forEach((s) => seen.add(s));
      clock.advanceTo(next);
      expectLookupsMatchListing().forEach((s) => seen.add(s));
    }
    expect(changes.length).toBeGreaterThan(5);

    // Actions that rewrite a schedule: a server fails, an environment is killed, all stop.
    store().failServer(58202);
    store().externallyTerminate(301);
    expectLookupsMatchListing().forEach((s) => seen.add(s));
    await act(app, '/grid/101', 'terminate');
    await act(app, '/rsdb/201', 'terminate');
    expectLookupsMatchListing().forEach((s) => seen.add(s));
    clock.advanceTo(store().settlesAt('grid', 101)!);
    clock.advanceTo(store().settlesAt('rsdb', 201)!);
    expectLookupsMatchListing().forEach((s) => seen.add(s));

    expect([...seen]).toEqual(
      expect.arrayContaining([
        'grid:LOADED', 'grid:ALLOCATING', 'grid:ALLOCATED', 'grid:CHECKING', 'grid:CHECKED', 'grid:TERMINATING', 'grid:TERMINATED',
        'cloudServer:PENDING', 'cloudServer:RUNNING', 'cloudServer:FAILED', 'cloudServer:SHUTTING_DOWN', 'cloudServer:TERMINATED',
        'rsdb:LOADED', 'rsdb:ALLOCATING_DATABASE', 'rsdb:ALLOCATED_DATABASE', 'rsdb:TERMINATING', 'rsdb:TERMINATED',
        'environment:LOADED', 'environment:ALLOCATING_DATABASE', 'environment:RUNNING', 'environment:EXTERNALLY_TERMINATED',
      ]),
    );
  });

  it('match lifecycles() for resources started at load time, cancelled or restarted', async () => {
    await open({
      grids: [grid({ startedAgoMs: D.allocating }), grid({ id: 102, name: 'Second' })],
      rsdbs: [rsdb({ startedAgoMs: 0 })],
      environments: [environment({ startedAgoMs: ENV_RUNNING_AT })],
    });
    expectLookupsMatchListing();
    await act(app, '/grid/102', 'start');
    at(1000);
    await act(app, '/grid/102', 'terminate');
    await act(app, '/cloudserver/58201', 'restart');
    await act(app, '/environment/301', 'terminate');
    expect(expectLookupsMatchListing()).toEqual(expect.arrayContaining(['grid:CANCELLING', 'environment:TERMINATING']));
  });

  it('answer undefined for an id that does not exist, of every kind', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    await act(app, '/grid/101', 'start');
    for (const kind of KINDS) {
      for (const id of [0, 1, 999, 58299]) {
        expect(store().position(kind, id), `${kind} ${id}`).toBeUndefined();
        expect(store().settlesAt(kind, id), `${kind} ${id}`).toBeUndefined();
      }
    }
    // An id of another kind is not found under this one.
    expect(store().position('rsdb', 101)).toBeUndefined();
    expect(store().settlesAt('grid', 58201)).toBeUndefined();
  });

  it('are what the control API reads for one resource, without listing every resource', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    await act(app, '/grid/101', 'start');
    const lifecycles = vi.spyOn(store(), 'lifecycles');
    const control = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url: `/_emulator${url}`, payload });
    expect((await control('GET', '/lifecycles/grid/101')).json()).toMatchObject({ kind: 'grid', id: 101, state: 'ALLOCATING' });
    expect((await control('GET', '/lifecycles/rsdb/999')).statusCode).toBe(404);
    expect((await control('POST', '/lifecycles/cloudServer/58201/fail')).json()).toMatchObject({ state: 'FAILED' });
    expect((await control('POST', '/clock/advance', { until: { kind: 'grid', id: 101 } })).json().advancedMs).toBe(CHECKED_AT);
    expect((await control('POST', '/clock/advance', { until: { kind: 'rsdb', id: 201 } })).json().advancedMs).toBe(0);
    expect((await control('POST', '/clock/advance', { until: { kind: 'environment', id: 999 } })).statusCode).toBe(404);
    expect(lifecycles).not.toHaveBeenCalled();
  });
});

describe('catalog', () => {
  it('names grids, environments and RSDBs for the repository Objects call', async () => {
    await open({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
    const objects = async (type: string) =>
      (await app.inject({ url: `/concerto/services/rest/RepositoryService/v1/Objects/${type}`, headers: { 'x-auth-token': 'test-token' } }))
        .json()
        .objects.map((o: { id: number; name: string; type: string }) => ({ id: o.id, name: o.name, type: o.type }));
    expect(await objects('grid')).toEqual([{ id: 101, name: 'Test Grid', type: 'grid' }]);
    expect(await objects('rsdb')).toEqual([{ id: 201, name: 'Results DB', type: 'rsdb' }]);
    expect(await objects('testenvironment')).toEqual([{ id: 301, name: 'Staging Environment', type: 'testenvironment' }]);
  });
});
