import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { FaultStore, MAX_RULES } from '../../src/world/faults.js';
import { emptyState, loadFixtures, parseState } from '../../src/state.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { environment, grid, rsdb, seed, template } from '../provisioning/seed.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';
const OBJECTS = '/concerto/services/rest/RepositoryService/v1/Objects/grid';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const get = (url: string, headers: Record<string, string> = AUTH) => app.inject({ url, headers });
const control = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url: `/_emulator${url}`, ...(payload ? { payload } : {}) });
const ruleIds = async () => (await control('GET', '/faults')).json().map((r: { id: string }) => r.id);

/** A seed with a user and token, and the given fault rules. */
const faultSeed = (faults: object[]) => ({ ...authSeed(), faults }) as never;

describe('the faults section of the fixtures', () => {
  it('adds its rules at start; a reset drops the rules added at run time and brings the seed’s back', async () => {
    ({ app } = await makeApp(faultSeed([{ id: 'seeded', method: 'GET', path: OBJECTS, action: { status: 503 }, times: 1, seed: 7 }])));
    expect((await get(OBJECTS)).statusCode).toBe(503);
    expect((await get(OBJECTS)).statusCode).toBe(200);
    expect((await control('POST', '/faults', { id: 'later', path: '/concerto/*', action: { status: 500 } })).statusCode).toBe(201);
    expect(await ruleIds()).toEqual(['seeded', 'later']);

    expect((await control('POST', '/reset')).statusCode).toBe(200);
    expect(await ruleIds()).toEqual(['seeded']);
    // Back as the seed wrote it: its one fire is there again, its counts start from zero.
    expect((await control('GET', '/faults/seeded')).json()).toMatchObject({ times: 1, remaining: 1, matched: 0, fired: 0, seed: 7, scope: 'app', active: true });
    expect((await get(OBJECTS)).statusCode).toBe(503);
  });

  it('gives a sandbox made from the seed the seed’s rules, and only to it', async () => {
    ({ app } = await makeApp(faultSeed([{ id: 'seeded', path: OBJECTS, action: { status: 503 } }])));
    expect((await control('DELETE', '/faults/seeded')).statusCode).toBe(204);
    expect((await get(`/sandbox/one${OBJECTS}`)).statusCode).toBe(503);
    expect((await get(OBJECTS)).statusCode).toBe(200);
    expect((await app.inject({ url: '/sandbox/one/_emulator/faults' })).json().map((r: { id: string }) => r.id)).toEqual(['seeded']);
  });

  it('is exported with what is left of each rule, and an import adds the exported rules back', async () => {
    ({ app, clock } = await makeApp(authSeed()));
    await control('POST', '/faults', { id: 'twice', path: OBJECTS, action: { latencyMs: { min: 10, max: 20 } }, times: 2, untilMs: 60_000, seed: 3 });
    await control('POST', '/faults', { id: 'gone', path: OBJECTS, action: { status: 500 }, times: 1 });
    await control('POST', '/faults', { id: 'own', path: '*', action: { status: 418 }, scope: 'all', header: { name: 'X-Chaos' } });
    expect((await get(OBJECTS)).statusCode).toBe(500);
    clock.advance(15_000);
    const exported = (await control('GET', '/state')).json();
    // `gone` is used up; `twice` fired once and has 45 s left.
    expect(exported.faults).toEqual([
      { id: 'twice', method: '*', path: OBJECTS, action: { latencyMs: { min: 10, max: 20 } }, times: 1, untilMs: 45_000, probability: 1, seed: 3, scope: 'app' },
      { id: 'own', method: '*', path: '*', header: { name: 'x-chaos' }, action: { status: 418 }, probability: 1, seed: expect.any(Number), scope: 'all' },
    ]);
    expect(exported.scenarios).toEqual([]);

    expect((await control('DELETE', '/faults')).statusCode).toBe(204);
    await control('POST', '/faults', { id: 'kept', path: '/nowhere', action: { status: 500 } });
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: exported });
    expect(put.statusCode, put.body).toBe(200);
    // A rule added at run time outlives the import; the state's rules are added to it.
    expect(await ruleIds()).toEqual(['kept', 'twice', 'own']);
    expect((await control('GET', '/faults/twice')).json()).toMatchObject({ remaining: 1, expiresAt: clock.now() + 45_000 });
  });

  it('is kept in a state file: a restart has the rules of the run before, a reset the seed’s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'faults-state-'));
    const stateFile = join(dir, 'state.json');
    try {
      const fixtures = faultSeed([{ id: 'seeded', path: '/nowhere', action: { status: 503 } }]);
      ({ app } = await makeApp(fixtures, { stateFile, stateFlushIntervalMs: 0 }));
      await control('POST', '/faults', { id: 'later', path: OBJECTS, action: { status: 502 } });
      await app.close();
      ({ app } = await makeApp(fixtures, { stateFile }));
      expect(await ruleIds()).toEqual(['seeded', 'later']);
      expect((await get(OBJECTS)).statusCode).toBe(502);
      await control('POST', '/reset');
      expect(await ruleIds()).toEqual(['seeded']);
    } finally {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses an import whose rules cannot be added to the world’s, and changes nothing', async () => {
    ({ app } = await makeApp(authSeed()));
    await control('POST', '/faults', { id: 'kept', path: '/nowhere', action: { status: 500 } });
    // As many as a world may hold: valid alone, one too many with the rule already there.
    const faults = Array.from({ length: MAX_RULES }, (_, i) => ({ id: `r${i}`, path: `/p${i}`, action: { status: 500 } }));
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { faults } });
    expect(put.statusCode).toBe(409);
    expect(put.json().message).toBe(`$.faults[${MAX_RULES - 1}]: there are already ${MAX_RULES} fault rules: delete some first`);
    expect(await ruleIds()).toEqual(['kept']);
    // The rest of the state was not imported either: it holds no token.
    expect((await get(OBJECTS)).statusCode).toBe(200);
  });

  it('refuses a duplicate id, naming both places, and a rule add() would refuse, naming its field', async () => {
    expect(() => parseState({ ...emptyState(), faults: [{ id: 'x', path: '/a', action: { status: 500 } }, { id: 'x', path: '/b', action: { drop: true } }] }, 'body')).toThrow(
      'body: $.faults[1]: duplicate faults entry "x"',
    );
    // Rules without an id are never duplicates of each other.
    expect(parseState({ ...emptyState(), faults: [{ path: '/a', action: { status: 500 } }, { path: '/a', action: { status: 500 } }] }, 'body').faults).toHaveLength(2);
    expect(() => parseState({ ...emptyState(), faults: [{ path: '/a', action: { latencyMs: { min: 900, max: 100 } } }] }, 'body')).toThrow(
      'body: $.faults[0].action.latencyMs: min (900) is above max (100)',
    );
    expect(() => parseState({ ...emptyState(), faults: [{ path: '^(?!x)', action: { status: 500 } }] }, 'body')).toThrow(/^body: \$\.faults\[0\]\.path: not a regular expression/);
    expect(() => parseState({ ...emptyState(), faults: [{ path: '/a', action: { status: 500, latencyMs: 5 } }] }, 'body')).toThrow(
      'body: $.faults[0].action: give exactly one of status, latencyMs or drop (got status, latencyMs)',
    );

    // More rules than a world may hold is one problem, not one per rule.
    const many = Array.from({ length: MAX_RULES + 1 }, (_, i) => ({ path: `/p${i}`, action: { status: 500 } }));
    expect(() => parseState({ ...emptyState(), faults: many }, 'body')).toThrow(
      expect.objectContaining({ name: 'FixtureError', message: `body: $.faults: ${MAX_RULES + 1} rules, more than the ${MAX_RULES} a world may hold` }),
    );

    const dir = await mkdtemp(join(tmpdir(), 'faults-'));
    try {
      await writeFile(join(dir, 'a.json'), JSON.stringify({ faults: [{ id: 'slow', path: '*', action: { latencyMs: 100 } }] }));
      await writeFile(join(dir, 'b.json'), JSON.stringify({ faults: [{ id: 'slow', path: '/x', action: { status: 500 } }] }));
      const loading = loadFixtures(dir);
      await expect(loading).rejects.toThrow(FixtureError);
      await expect(loading).rejects.toThrow(`${join(dir, 'b.json')}:1:12: $.faults[0]: duplicate faults entry "slow"; also at ${join(dir, 'a.json')}:1:12 $.faults[0]`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('latency ranges', () => {
  /** The delays a rule draws for `n` matching requests. */
  const delays = (seedValue: number, n: number) => {
    const store = new FaultStore(new ManualClock(T0));
    store.add({ path: '/x', action: { latencyMs: { min: 100, max: 900 } }, seed: seedValue });
    return Array.from({ length: n }, () => store.judge({ method: 'GET', path: '/x', headers: {} }).latencyMs);
  };

  it('draws the same delays for the same seed, each within min and max', () => {
    const a = delays(42, 50);
    expect(delays(42, 50)).toEqual(a);
    expect(delays(43, 50)).not.toEqual(a);
    for (const d of a) {
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(100);
      expect(d).toBeLessThanOrEqual(900);
    }
    // Drawn, not fixed.
    expect(new Set(a).size).toBeGreaterThan(10);
  });

  it('draws min when min and max are equal, and adds the delays of every matching rule', () => {
    const store = new FaultStore(new ManualClock(T0));
    store.add({ path: '/x', action: { latencyMs: { min: 250, max: 250 } } });
    store.add({ path: '*', action: { latencyMs: 5 } });
    expect(store.judge({ method: 'GET', path: '/x', headers: {} }).latencyMs).toBe(255);
  });

  it('reports the range back in the rule, and refuses min above max', async () => {
    ({ app } = await makeApp(authSeed()));
    const added = await control('POST', '/faults', { path: OBJECTS, action: { latencyMs: { min: 100, max: 900 } }, seed: 1 });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ action: { latencyMs: { min: 100, max: 900 } }, seed: 1 });
    const wrong = await control('POST', '/faults', { path: OBJECTS, action: { latencyMs: { min: 900, max: 100 } } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toBe("body field 'action.latencyMs': min (900) is above max (100)");
  });
});

describe('fault scope', () => {
  const DASHBOARD_READS = ['/_emulator/lifecycles', '/_emulator/journal', '/_emulator/clock', '/_emulator/alerts'];

  it('by default strikes the emulated interfaces only: never health, the control API, the dashboard or the home page', async () => {
    ({ app } = await makeApp(authSeed()));
    const added = await control('POST', '/faults', { path: '*', action: { status: 500 } });
    expect(added.json().scope).toBe('app');
    expect((await get(OBJECTS)).statusCode).toBe(500);
    expect((await get('/_emulator/health', {})).statusCode).toBe(200);
    for (const path of DASHBOARD_READS) expect((await get(path, {})).statusCode, path).toBe(200);
    expect((await get('/_emulator/ui/', {})).statusCode).toBe(200);
    expect((await get('/_emulator/ui/paths.json', {})).statusCode).toBe(200);
    expect((await get('/', {})).statusCode).toBe(200);
    expect((await get('/sandbox/s/_emulator/health', {})).statusCode).toBe(200);
  });

  it('by default leaves alone the dashboard’s own reads of the interfaces (marked X-Emulator-Client: dashboard); scope all reaches them', async () => {
    ({ app } = await makeApp(authSeed()));
    await control('POST', '/faults', { id: 'app', path: '*', action: { status: 500 } });
    const dashboard = { 'x-emulator-client': 'dashboard' };
    expect((await get(OBJECTS)).statusCode).toBe(500);
    expect((await get(OBJECTS, { ...AUTH, ...dashboard })).statusCode).toBe(200);
    expect((await control('GET', '/faults/app')).json()).toMatchObject({ matched: 1, fired: 1 });
    await control('POST', '/faults', { id: 'all', path: '*', action: { status: 503 }, scope: 'all' });
    expect((await get(OBJECTS, { ...AUTH, ...dashboard })).statusCode).toBe(503);
  });

  it('with scope all strikes them too, but never the fault routes, so the rule can be removed', async () => {
    ({ app } = await makeApp(authSeed()));
    expect((await control('POST', '/faults', { id: 'everything', path: '*', action: { status: 503 }, scope: 'all' })).statusCode).toBe(201);
    expect((await get(OBJECTS)).statusCode).toBe(503);
    const health = await get('/_emulator/health', {});
    expect(health.statusCode).toBe(503);
    expect(health.headers['x-emulator-fault']).toBe('everything');
    for (const path of DASHBOARD_READS) expect((await get(path, {})).statusCode, path).toBe(503);
    expect((await get('/_emulator/ui/paths.json', {})).statusCode).toBe(503);
    expect((await control('GET', '/faults')).statusCode).toBe(200);
    expect((await control('GET', '/faults/everything')).json()).toMatchObject({ scope: 'all', fired: 2 + DASHBOARD_READS.length + 1 });
    expect((await control('DELETE', '/faults/everything')).statusCode).toBe(204);
    expect((await get('/_emulator/health', {})).statusCode).toBe(200);
  });

  it('with scope all, matches the emulator’s own paths by method, path and header like any other', async () => {
    ({ app } = await makeApp(authSeed(), { adminToken: 'secret' }));
    const admin = { authorization: 'Bearer secret' };
    const added = await app.inject({ method: 'POST', url: '/_emulator/faults', headers: admin, payload: { path: '/_emulator/clock', method: 'GET', action: { status: 502 }, scope: 'all' } });
    expect(added.statusCode).toBe(201);
    expect((await get('/_emulator/clock', admin)).statusCode).toBe(502);
    // The admin token is checked first: a caller without it learns nothing from the rule, and uses none of it.
    expect((await get('/_emulator/clock', {})).statusCode).toBe(401);
    expect((await get('/_emulator/lifecycles', admin)).statusCode).toBe(200);
    expect((await app.inject({ url: '/_emulator/faults', headers: admin })).json()[0]).toMatchObject({ matched: 1, fired: 1 });
  });

  it('refuses an unknown scope', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await control('POST', '/faults', { path: '*', action: { status: 500 }, scope: 'dashboard' });
    expect(res.statusCode).toBe(400);
  });
});

describe('the scenarios section of the fixtures', () => {
  const scenarioSeed = (scenarios: object[]) =>
    ({ ...seed({ grids: [grid({ servers: [template()] })], rsdbs: [rsdb()], environments: [environment()] }), scenarios }) as never;
  const act = (path: string, action: string) => app.inject({ method: 'POST', url: `${CLOUD}${path}/action`, headers: AUTH, payload: { action } });
  const settle = (kind: string, id: number) => control('POST', '/clock/advance', { until: { kind, id } });
  const lifecycle = async (kind: string, id: number) =>
    (await control('GET', '/lifecycles')).json().resources.find((r: { kind: string; id: number }) => r.kind === kind && r.id === id);

  it('makes a fixture grid’s next start fail allocation, shown before the start; after a reset, again', async () => {
    ({ app, clock } = await makeApp(scenarioSeed([{ kind: 'grid', id: 101, nextStart: { outcome: 'ALLOCATE_FAILED' } }])));
    expect(await lifecycle('grid', 101)).toMatchObject({ state: 'LOADED', nextStart: { outcome: 'ALLOCATE_FAILED', once: true } });
    expect(await lifecycle('environment', 301)).toMatchObject({ nextStart: { outcome: 'RUNNING', once: false } });
    expect(await lifecycle('rsdb', 201)).toMatchObject({ nextStart: { outcome: 'ALLOCATED_DATABASE', once: false } });

    expect((await act('/grid/101', 'start')).statusCode).toBe(202);
    await settle('grid', 101);
    expect((await get(`${CLOUD}/grid/101`)).json().state).toBe('ALLOCATE_FAILED');
    // Used up by that start, as a next-start set by the control API is.
    expect(await lifecycle('grid', 101)).toMatchObject({ nextStart: { outcome: 'CHECKED', once: false } });

    await control('POST', '/reset');
    expect(await lifecycle('grid', 101)).toMatchObject({ state: 'LOADED', nextStart: { outcome: 'ALLOCATE_FAILED', once: true } });
    await act('/grid/101', 'start');
    await settle('grid', 101);
    expect((await get(`${CLOUD}/grid/101`)).json().state).toBe('ALLOCATE_FAILED');
  });

  it('sets an environment’s next start as PUT .../next-start does, and a sandbox from the seed gets it', async () => {
    ({ app, clock } = await makeApp(scenarioSeed([{ kind: 'environment', id: 301, nextStart: { outcome: 'VOLUME_NOT_FORMATTED' } }])));
    const inSandbox = (await app.inject({ url: '/sandbox/s/_emulator/lifecycles/environment/301' })).json();
    expect(inSandbox.nextStart).toEqual({ outcome: 'VOLUME_NOT_FORMATTED', once: true });
    await act('/environment/301', 'start');
    await settle('environment', 301);
    expect((await get(`${CLOUD}/environment/301/`)).json().state).toBe('VOLUME_NOT_FORMATTED');
  });

  it('keeps a scenario of a resource the seed starts (startedAgoMs) for the next start someone makes', async () => {
    const started = { ...seed({ environments: [environment({ startedAgoMs: 3_600_000 })] }), scenarios: [{ kind: 'environment', id: 301, nextStart: { outcome: 'VOLUME_NOT_AVAILABLE' } }] };
    ({ app, clock } = await makeApp(started as never));
    expect((await get(`${CLOUD}/environment/301/`)).json().state).toBe('RUNNING');
    expect(await lifecycle('environment', 301)).toMatchObject({ nextStart: { outcome: 'VOLUME_NOT_AVAILABLE', once: true } });
  });

  it('refuses a scenario for a resource that does not exist, or an outcome its kind does not have', () => {
    const base = seed({ grids: [grid({ servers: [template()] })], rsdbs: [rsdb()], environments: [environment()] });
    const parse = (scenarios: object[]) => () => parseState({ ...emptyState(), ...base, scenarios }, 'body');
    expect(parse([{ kind: 'grid', id: 999, nextStart: { outcome: 'ALLOCATE_FAILED' } }])).toThrow('body: $.scenarios[0].id: no grid 999');
    expect(parse([{ kind: 'grid', id: 101, nextStart: { outcome: 'RUNNING' } }])).toThrow(
      "body: $.scenarios[0].nextStart.outcome: unknown start outcome 'RUNNING' for a grid: use CHECKED, ALLOCATE_FAILED, ALLOCATED_WITH_FAILURES, CHECKED_WITH_FAILURES, CHECKED_AND_DEPLOYING, CHECKED_AND_TERMINATING",
    );
    expect(parse([{ kind: 'rsdb', id: 201, nextStart: { outcome: 'FAILED' } }])).toThrow(
      "body: $.scenarios[0].nextStart.outcome: unknown start outcome 'FAILED' for an RSDB: the only one is ALLOCATED_DATABASE",
    );
    expect(
      parse([
        { kind: 'grid', id: 101, nextStart: { outcome: 'ALLOCATE_FAILED' } },
        { kind: 'grid', id: 101, nextStart: { outcome: 'CHECKED' } },
      ]),
    ).toThrow('body: $.scenarios[1]: duplicate scenarios entry "grid 101"');
    expect(parse([{ kind: 'cloudServer', id: 1, nextStart: { outcome: 'FAILED' } }])).toThrow(/^body: \$\.scenarios\[0\]\.kind/);
  });
});
