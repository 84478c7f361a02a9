import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { loadFixtures, parseState, type State } from '../../src/state.js';
import { T0, makeDemoApp } from '../helpers/app.js';

/**
 * Every reset and every sandbox builds its stores from the same seed objects instead of a
 * copy of them, so no store may ever change a seed object. Here the seed is deeply frozen: a
 * change to it throws (a 500), and every kind of change the interfaces and the control API
 * can make is made, in the default world and in a sandbox. Afterwards a reset, and any other
 * world, must look exactly like a world freshly built from the seed.
 */

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const DEMO = { 'x-auth-token': 'demo-token' };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function appOn(seed: State, now: number): Promise<{ app: FastifyInstance; clock: ManualClock }> {
  const clock = new ManualClock(now);
  const app = await buildApp({ clock, fixtures: seed, config: { rateLimitMax: 1_000_000 } });
  apps.push(app);
  return { app, clock };
}

/** The demo seed, and an export of it after starts, fires and annotation changes, plus annotations of every form. */
async function seeds(): Promise<Record<string, State>> {
  const demo = await loadFixtures(BUNDLED_FIXTURES_DIR);
  const { app } = await makeDemoApp();
  apps.push(app);
  for (const url of [`${CLOUD}/grid/101/action`, `${CLOUD}/rsdb/202/action`, `${CLOUD}/environment/301/action`]) {
    expect((await app.inject({ method: 'POST', url, headers: DEMO, payload: { action: 'start' } })).statusCode).toBe(202);
  }
  expect((await app.inject({ method: 'POST', url: `${ALERTS}/demo-alert/fire` })).statusCode).toBe(204);
  const exported = (await app.inject({ url: '/_emulator/state' })).json() as State;
  const started = parseState(
    {
      ...exported,
      annotations: [
        ...exported.annotations,
        // Absolute, without lastModified; a domain given twice. All times are absolute, as in
        // any export: the stores share the seed's annotations (the demo seed's relative ones are resolved per world).
        { id: 5_000_001, title: 'abs', text: 't', start: T0 - 1000, domainIds: [12345], user: 'u' },
        { id: 5_000_002, title: 'twice', text: 't', start: T0 - 2000, end: T0, domainIds: [12345, 12345, 12346], user: 'u' },
      ],
    },
    'started',
  );
  return { demo: deepFreeze(demo), started: deepFreeze(started) };
}

/** Makes every kind of change in the world under `prefix`, each one answered as documented. */
async function changeEverything(app: FastifyInstance, clock: ManualClock, prefix: string): Promise<void> {
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, status: number, payload?: object, headers = DEMO) => {
    const res = await app.inject({ method, url: `${prefix}${url}`, headers, ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
    return res.body ? res.json() : undefined;
  };
  const advance = (ms: number) => (prefix ? call('POST', '/_emulator/clock/advance', 200, { ms }) : clock.advance(ms));

  // Annotations: update (title, start, end, domains) of seed ones, delete, create.
  const annotations: Array<{ id: number; start: number }> = await call('GET', ANNOTATIONS, 200);
  const [first, second, third] = annotations;
  await call('PUT', `${ANNOTATIONS}/${first.id}`, 200, { title: 'changed', domainIds: [12346] });
  await call('PUT', `${ANNOTATIONS}/${second.id}`, 200, { start: second.start - 1, end: null, text: 'moved' });
  await call('DELETE', `${ANNOTATIONS}/${third.id}`, 204);
  await call('POST', ANNOTATIONS, 200, { title: 'new', text: 't', start: T0 });

  // Grids and cloud servers: start, restart, fail, terminate, stop; next outcomes.
  await call('PUT', '/_emulator/lifecycles/grid/101/next-start', 200, { outcome: 'CHECKED_WITH_FAILURES' });
  await call('PUT', '/_emulator/lifecycles/environment/302/next-start', 200, { outcome: 'RUNNING' });
  await call('DELETE', '/_emulator/lifecycles/environment/302/next-start', 204);
  for (const id of [101, 102, 103]) await call('POST', `${CLOUD}/grid/${id}/action`, 202, { action: id === 101 ? 'terminate' : 'start' });
  await advance(3_600_000);
  await call('POST', `${CLOUD}/grid/101/action`, 202, { action: 'start' });
  await advance(3_600_000);
  const servers = ((await call('GET', `${CLOUD}/cloudserver`, 200)) as Array<{ id: number; state: string }>).filter((c) => c.state === 'RUNNING');
  expect(servers.length).toBeGreaterThan(2);
  await call('POST', `${CLOUD}/cloudserver/${servers[0].id}/action`, 202, { action: 'restart' });
  await call('POST', `/_emulator/lifecycles/cloudServer/${servers[1].id}/fail`, 200);
  await call('POST', `${CLOUD}/cloudserver/${servers[2].id}/action`, 202, { action: 'terminate' });
  for (const id of [101, 102]) await call('POST', `${CLOUD}/grid/${id}/action`, 202, { action: 'terminate' });

  // RSDBs and test environments: start, stop, external termination.
  for (const id of [201, 202]) await call('POST', `${CLOUD}/rsdb/${id}/action`, 202, { action: 'terminate' });
  await call('POST', `${CLOUD}/environment/301/action`, 202, { action: 'terminate' });
  await call('POST', `${CLOUD}/environment/302/action`, 202, { action: 'start' });
  await advance(3_600_000);
  await call('POST', `${CLOUD}/rsdb/201/action`, 202, { action: 'start' });
  await call('POST', `${CLOUD}/environment/301/action`, 202, { action: 'start' });
  await advance(3_600_000);
  await call('POST', '/_emulator/lifecycles/environment/301/externally-terminate', 200);
  await call('POST', `${CLOUD}/environment/302/action`, 202, { action: 'terminate' });

  // Alerts and tokens.
  await call('PATCH', '/_emulator/alerts/disabled-alert', 200, { enabled: true });
  await call('POST', `${ALERTS}/disabled-alert/fire`, 204);
  await call('POST', `${ALERTS}/demo-alert/clear`, 204);
  const { token } = await call('PUT', `${REPO}/Tokens`, 200, { userName: 'demo@example.com', password: 'demo' });
  await call('GET', `${REPO}/Objects/grid`, 200, undefined, { 'x-auth-token': token });
  await call('DELETE', `${REPO}/Tokens/${token}`, 204);
}

const stateOf = async (app: FastifyInstance, prefix = '') => {
  const res = await app.inject({ url: `${prefix}/_emulator/state` });
  expect(res.statusCode).toBe(200);
  return res.json();
};

describe('a seed shared by resets and sandboxes', () => {
  it('is never changed by any change to a world, so a reset gives exactly a fresh world', async () => {
    for (const [name, seed] of Object.entries(await seeds())) {
      const { app, clock } = await appOn(seed, T0);
      const untouched = await stateOf(app);
      // A sandbox forked before the changes, and one after: neither sees them.
      const before = await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/before' });
      expect(before.statusCode, before.body).toBe(201);
      await changeEverything(app, clock, '');
      expect(await stateOf(app), name).not.toEqual(untouched);
      expect(await stateOf(app, '/sandbox/before'), name).toEqual(untouched);
      expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/after' })).statusCode).toBe(201);

      expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
      const fresh = await appOn(seed, clock.now());
      expect(await stateOf(app), name).toEqual(await stateOf(fresh.app));

      // The same changes in a sandbox leave the default world and the other sandbox alone.
      const reset = await stateOf(app);
      await changeEverything(app, clock, '/sandbox/after');
      expect(await stateOf(app), name).toEqual(reset);
      expect(await stateOf(app, '/sandbox/before'), name).toEqual(untouched);
      expect((await app.inject({ method: 'POST', url: '/sandbox/after/_emulator/reset' })).statusCode).toBe(200);
      const sandboxNow = (await app.inject({ url: '/sandbox/after/_emulator/clock' })).json().now;
      expect(sandboxNow).toBeGreaterThan(clock.now());
      expect(await stateOf(app, '/sandbox/after'), name).toEqual(await stateOf((await appOn(seed, sandboxNow)).app));
    }
  });

  it('keeps an annotation changed in one world as the seed has it in every other', async () => {
    const { started } = await seeds();
    const { app } = await appOn(started, T0);
    const read = async (prefix: string, id: number) => app.inject({ url: `${prefix}${ANNOTATIONS}/${id}`, headers: DEMO });
    const seedOne = (await read('', 5_000_001)).json();
    expect((await app.inject({ method: 'PUT', url: `/sandbox/a${ANNOTATIONS}/5000001`, headers: DEMO, payload: { title: 'in a' } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `/sandbox/b${ANNOTATIONS}/5000001`, headers: DEMO })).statusCode).toBe(204);
    expect((await read('/sandbox/a', 5_000_001)).json().title).toBe('in a');
    expect((await read('/sandbox/b', 5_000_001)).statusCode).toBe(404);
    expect((await read('', 5_000_001)).json()).toEqual(seedOne);
    expect((await read('/sandbox/c', 5_000_001)).json()).toEqual(seedOne);
    // The listing of each world agrees with its reads.
    const list = async (prefix: string) => (await app.inject({ url: `${prefix}${ANNOTATIONS}`, headers: DEMO })).json() as Array<{ id: number; title: string }>;
    expect((await list('/sandbox/a')).find((a) => a.id === 5_000_001)?.title).toBe('in a');
    expect((await list('/sandbox/b')).some((a) => a.id === 5_000_001)).toBe(false);
    expect((await list('')).find((a) => a.id === 5_000_001)).toEqual(seedOne);
    // A domain given twice in the seed is listed once, as before.
    expect((await read('', 5_000_002)).json().domains.map((d: { id: number }) => d.id)).toEqual([12345, 12346]);
  });
});
