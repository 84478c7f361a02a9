import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { family as familyOf, pathOf, type Path, type Position } from '../../src/ui/static/states.js';
import { STATE_FAMILIES } from '../../src/provisioning/schemas.js';
import type { State } from '../../src/state.js';

// The dashboard's progress line must show the path a resource really takes. These tests run
// real lifecycles through the API, the way the page sees them (GET /_emulator/lifecycles),
// and check the line at every step.

const CLOUD = '/concerto/services/rest/CloudService/v1';
let app: FastifyInstance;
afterEach(async () => app?.close());

const server = {
  name: 'amazon - EC2 Test Server (Large)',
  serverClassName: 'EC2 Test Server (Large)',
  count: 2,
  cloudType: 'EC2' as const,
  launchCPA: 'SOASTA EC2',
  location: { id: 1, name: 'amazon - us-east-1' },
  region: 'us-east-1',
  zone: 'us-east-1a',
  securityGroup: 'sg-1',
};
const instance = { cloudType: 'EC2' as const, instanceSize: 'EC2 Large' };
const seed = (): Partial<State> => ({
  ...authSeed(),
  grids: [
    { id: 1, name: 'plain', servers: [server] },
    { id: 2, name: 'monitored', monitors: true, servers: [server] },
  ] as State['grids'],
  environments: [{ id: 3, name: 'env', databaseInstance: instance, mainInstance: instance }] as State['environments'],
  rsdbs: [{ id: 4, name: 'db', cloudType: 'EC2', instanceSize: 'EC2 Results Database', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a' }] as State['rsdbs'],
});

type Kind = 'grid' | 'environment' | 'rsdb';
const lifecycles = async () => (await app.inject({ url: '/_emulator/lifecycles' })).json();
const position = async (kind: Kind, id: number): Promise<Position & { isFinal: boolean }> =>
  (await lifecycles()).resources.find((r: { kind: string; id: number }) => r.kind === kind && r.id === id);

/**
 * Follows a resource to the end of its current schedule, one transition at a time, checking
 * that the progress line marks its state and its next one; returns the states it passed and
 * the line at the end.
 */
async function follow(kind: Kind, id: number, previous?: Path): Promise<{ visited: string[]; path: Path }> {
  const tables = (await lifecycles()).tables[kind];
  let path = previous;
  const visited: string[] = [];
  for (let guard = 0; guard < 50; guard++) {
    const p = await position(kind, id);
    path = pathOf(tables, p, path);
    expect(path.rows[path.current].state).toBe(p.state);
    if (p.next) expect(path.rows[path.current + 1]?.state, `after ${p.state}`).toBe(p.next.state);
    if (visited.at(-1) !== p.state) visited.push(p.state);
    if (!p.next) return { visited, path };
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { to: 'next' } });
  }
  throw new Error('the lifecycle did not settle');
}

async function act(kind: Kind, id: number, action: 'start' | 'terminate', outcome?: string) {
  if (outcome) {
    const res = await app.inject({ method: 'PUT', url: `/_emulator/lifecycles/${kind}/${id}/next-start`, payload: { outcome } });
    expect(res.statusCode, res.body).toBe(200);
  }
  const path = kind === 'environment' ? `${CLOUD}/environment/${id}/action` : `${CLOUD}/${kind}/${id}/action`;
  const res = await app.inject({ method: 'POST', url: path, headers: AUTH, payload: { action } });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

describe('progress line', () => {
  it('shows a never-started resource as LOADED with its first start table ahead', async () => {
    ({ app } = await makeApp(seed()));
    const { tables } = await lifecycles();
    const grid = await position('grid', 1);
    const path = pathOf(tables.grid, grid);
    expect(path.current).toBe(0);
    // But for the step a grid without monitors never takes.
    expect(grid.skips).toEqual(['STARTING_MONITORS']);
    const taken = tables.grid.start.CHECKED.map((r: { state: string }) => r.state).filter((s: string) => s !== 'STARTING_MONITORS');
    expect(path.rows.map((r) => r.state)).toEqual(['LOADED', ...taken]);
    // With no `skips` (a grid with monitors), every step of the table.
    const { skips: _, ...withMonitors } = grid;
    expect(pathOf(tables.grid, withMonitors).rows.map((r) => r.state)).toEqual(['LOADED', ...tables.grid.start.CHECKED.map((r: { state: string }) => r.state)]);
  });

  it('shows the start table of the outcome a never-started resource is set to end in', async () => {
    ({ app } = await makeApp(seed()));
    const { tables } = await lifecycles();
    const path = pathOf(tables.grid, await position('grid', 1), undefined, 'ALLOCATE_FAILED');
    expect(path.rows.map((r) => r.state)).toEqual(['LOADED', ...tables.grid.start.ALLOCATE_FAILED.map((r: { state: string }) => r.state)]);
    expect(path.rows.at(-1)?.state).toBe('ALLOCATE_FAILED');
    // An outcome the tables do not know: the first start table, as without one.
    expect(pathOf(tables.grid, await position('grid', 1), undefined, 'NO_SUCH').rows.at(-1)?.state).toBe(tables.grid.start.CHECKED.at(-1).state);
  });

  it('leaves LOADED behind when a resource starts', async () => {
    ({ app } = await makeApp(seed()));
    const { tables } = await lifecycles();
    const loaded = pathOf(tables.environment, await position('environment', 3));
    await act('environment', 3, 'start');
    const path = pathOf(tables.environment, await position('environment', 3), loaded);
    expect(path.rows[0].state).toBe('ALLOCATING_DATABASE');
    expect(path.current).toBe(0);
  });

  it('follows every grid start outcome, with and without monitors, exactly as the grid goes', async () => {
    ({ app } = await makeApp(seed()));
    const outcomes = Object.keys((await lifecycles()).tables.grid.start);
    expect(outcomes).toContain('CHECKED_AND_DEPLOYING');
    for (const id of [1, 2]) {
      for (const outcome of outcomes) {
        await act('grid', id, 'start', outcome);
        const { visited, path } = await follow('grid', id);
        expect(visited.at(-1), `${outcome}, grid ${id}`).toBe(outcome === 'CHECKED_AND_DEPLOYING' || outcome === 'CHECKED_AND_TERMINATING' ? 'CHECKED' : outcome);
        expect(path.rows.map((r) => r.state), `${outcome}, grid ${id}`).toEqual(visited);
        expect(visited.includes('STARTING_MONITORS')).toBe(id === 2 && !outcome.startsWith('ALLOCATE'));
      }
    }
  });

  it('follows a terminate and a cancel of a grid', async () => {
    ({ app } = await makeApp(seed()));
    await act('grid', 1, 'start');
    const started = await follow('grid', 1);
    await act('grid', 1, 'terminate');
    const terminated = await follow('grid', 1, started.path);
    expect(terminated.path.rows.map((r) => r.state)).toEqual(['TERMINATING', 'TERMINATED']);
    await act('grid', 1, 'start');
    await act('grid', 1, 'terminate');
    const cancelled = await follow('grid', 1, terminated.path);
    expect(cancelled.visited).toEqual(['CANCELLING', 'CANCELLED']);
    expect(cancelled.path.rows.map((r) => r.state)).toEqual(['CANCELLING', 'CANCELLED']);
  });

  it('follows every test environment start outcome, and an RSDB start and terminate', async () => {
    ({ app } = await makeApp(seed()));
    const outcomes = Object.keys((await lifecycles()).tables.environment.start);
    expect(outcomes).toContain('VOLUME_NOT_AVAILABLE');
    let previous: Path | undefined;
    for (const outcome of outcomes) {
      await act('environment', 3, 'start', outcome);
      const { visited, path } = await follow('environment', 3, previous);
      expect(path.rows.map((r) => r.state), outcome).toEqual(visited);
      previous = path;
      if (['RUNNING', 'VOLUME_NOT_AVAILABLE'].includes(visited.at(-1)!)) {
        await act('environment', 3, 'terminate');
        previous = (await follow('environment', 3, previous)).path;
      }
    }
    await act('rsdb', 4, 'start');
    const up = await follow('rsdb', 4);
    expect(up.path.rows.map((r) => r.state)).toEqual(['ALLOCATING_DATABASE', 'ALLOCATED_DATABASE']);
    await act('rsdb', 4, 'terminate');
    expect((await follow('rsdb', 4, up.path)).visited).toEqual(['TERMINATING', 'TERMINATED']);
  });
});

describe('state colours', () => {
  it('puts each state in its family: in progress, ready, failed, terminated, or idle (as the server lists them)', () => {
    const family = (state: string, isFinal: boolean) => familyOf(state, isFinal, STATE_FAMILIES);
    expect(family('LOADED', true)).toBe('idle');
    expect(family('ALLOCATING', false)).toBe('progress');
    expect(family('TERMINATING', false)).toBe('progress');
    expect(family('CHECKED', true)).toBe('ready');
    expect(family('RUNNING', true)).toBe('ready');
    // The same name is an end for an RSDB and a step for a test environment.
    expect(family('ALLOCATED_DATABASE', true)).toBe('ready');
    expect(family('ALLOCATED_DATABASE', false)).toBe('progress');
    for (const failed of ['ALLOCATE_FAILED', 'CHECKED_WITH_FAILURES', 'TERMINATED_WITH_FAILURES', 'EXTERNALLY_TERMINATED', 'VOLUME_NOT_AVAILABLE', 'FAILED']) {
      expect(family(failed, true), failed).toBe('failed');
    }
    expect(family('TERMINATED', true)).toBe('terminated');
    expect(family('CANCELLED', true)).toBe('terminated');
  });
});
