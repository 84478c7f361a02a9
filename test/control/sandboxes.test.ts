import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Config } from '../../src/config.js';
import { T0, makeDemoApp } from '../helpers/app.js';

/**
 * Sandboxes over HTTP: every path under /sandbox/<name> is served by a world of its own, and
 * nothing done in one is visible in another or in the default world.
 */

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const DEMO = { 'x-auth-token': 'demo-token' };
const JSON_TYPE = { 'content-type': 'application/json' };

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function demo(config: Partial<Config> = {}): Promise<FastifyInstance> {
  ({ app } = await makeDemoApp({ rateLimitMax: 1_000_000, ...config }));
  return app;
}

const call = async (a: FastifyInstance, options: InjectOptions) => {
  const res = await a.inject(options);
  return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
};
const under = (name: string | null, path: string) => (name === null ? path : `/sandbox/${name}${path}`);
const gridState = async (a: FastifyInstance, name: string | null) => (await call(a, { url: under(name, `${CLOUD}/grid/101`), headers: DEMO })).body.state;
const startGrid = (a: FastifyInstance, name: string | null) =>
  call(a, { method: 'POST', url: under(name, `${CLOUD}/grid/101/action`), headers: { ...DEMO, ...JSON_TYPE }, payload: { action: 'start' } });
const advance = (a: FastifyInstance, name: string | null, ms: number) =>
  call(a, { method: 'POST', url: under(name, '/_emulator/clock/advance'), headers: JSON_TYPE, payload: { ms } });

describe('the /sandbox/<name> prefix', () => {
  it('serves every interface and the control API from a copy of the seed', async () => {
    const a = await demo();
    // A new sandbox holds exactly the seed the default world started from.
    expect((await call(a, { url: under('w1', '/_emulator/state') })).body).toEqual((await call(a, { url: '/_emulator/state' })).body);
    expect(await gridState(a, 'w1')).toBe('LOADED');
    expect((await call(a, { url: under('w1', `${REPO}/Objects/grid?name=Load Test Grid - US East`), headers: DEMO })).body.objects[0].id).toBe(101);
    expect((await call(a, { url: under('w1', ANNOTATIONS), headers: DEMO })).status).toBe(200);
    expect((await call(a, { method: 'POST', url: under('w1', `${ALERTS}/demo-alert/fire`) })).status).toBe(204);
    expect((await call(a, { url: under('w1', '/_emulator/health') })).body.status).toBe('ok');
    expect((await a.inject({ url: under('w1', '/_emulator/ui/') })).statusCode).toBe(200);
  });

  it('keeps grids, clocks, annotations, alerts, faults and the journal apart', async () => {
    const a = await demo({ journalSize: 100 });
    expect((await startGrid(a, 'w1')).status).toBe(202);
    expect(await gridState(a, 'w1')).toBe('ALLOCATING');
    expect(await gridState(a, null)).toBe('LOADED');
    expect(await gridState(a, 'w2')).toBe('LOADED');

    await advance(a, 'w1', 60_000);
    expect(await gridState(a, 'w1')).toBe('CHECKED');
    expect((await call(a, { url: '/_emulator/clock' })).body.now).toBe(T0);
    expect((await call(a, { url: under('w1', '/_emulator/clock') })).body.now).toBe(T0 + 60_000);

    const created = await call(a, { method: 'POST', url: under('w1', ANNOTATIONS), headers: { ...DEMO, ...JSON_TYPE }, payload: { title: 'only in w1', text: 't', start: T0 } });
    expect(created.status).toBe(200);
    expect((await call(a, { url: under('w1', `${ANNOTATIONS}/${created.body.id}`), headers: DEMO })).status).toBe(200);
    expect((await call(a, { url: `${ANNOTATIONS}/${created.body.id}`, headers: DEMO })).status).toBe(404);
    expect((await call(a, { url: under('w2', `${ANNOTATIONS}/${created.body.id}`), headers: DEMO })).status).toBe(404);

    await call(a, { method: 'POST', url: under('w1', `${ALERTS}/demo-alert/fire`) });
    expect((await call(a, { url: under('w1', '/_emulator/alerts/demo-alert') })).body.state).toBe('firing');
    expect((await call(a, { url: '/_emulator/alerts/demo-alert' })).body.state).not.toBe('firing');

    const fault = { path: `${CLOUD}/grid/*`, action: { status: 503 } };
    expect((await call(a, { method: 'POST', url: under('w2', '/_emulator/faults'), headers: JSON_TYPE, payload: fault })).status).toBe(201);
    expect((await call(a, { url: under('w2', `${CLOUD}/grid/101`), headers: DEMO })).status).toBe(503);
    expect((await call(a, { url: `${CLOUD}/grid/101`, headers: DEMO })).status).toBe(200);
    expect((await call(a, { url: under('w1', `${CLOUD}/grid/101`), headers: DEMO })).status).toBe(200);

    const journal = async (name: string | null) =>
      (await call(a, { url: under(name, '/_emulator/journal') })).body.entries as Array<{ status: number; method: string; sandbox?: string }>;
    // Every entry names its sandbox; the default world's name none.
    expect((await journal('w2')).every((e) => e.sandbox === 'w2')).toBe(true);
    expect((await journal(null)).some((e) => 'sandbox' in e)).toBe(false);
    // The fault answered in w2 only: its 503 is in w2's journal and in nobody else's.
    expect((await journal('w2')).some((e) => e.status === 503)).toBe(true);
    expect((await journal(null)).some((e) => e.status === 503)).toBe(false);
    expect((await journal('w1')).some((e) => e.status === 503)).toBe(false);
    // The annotation was created in w1's journal only.
    expect((await journal('w1')).filter((e) => e.method === 'POST').length).toBeGreaterThan(0);
    expect((await journal(null)).filter((e) => e.method === 'POST')).toEqual([]);
  });

  it('resets one sandbox without touching the others', async () => {
    const a = await demo();
    await startGrid(a, 'w1');
    await startGrid(a, null);
    expect((await call(a, { method: 'POST', url: under('w1', '/_emulator/reset') })).status).toBe(200);
    expect(await gridState(a, 'w1')).toBe('LOADED');
    expect(await gridState(a, null)).toBe('ALLOCATING');
  });

  it('takes seed tokens in every sandbox, and a log-in token only in the sandbox that issued it', async () => {
    const a = await demo();
    const login = await call(a, { method: 'PUT', url: under('w1', `${REPO}/Tokens`), headers: JSON_TYPE, payload: { userName: 'demo@example.com', password: 'demo' } });
    expect(login.status).toBe(200);
    const token = { 'x-auth-token': login.body.token };
    expect((await call(a, { url: under('w1', `${CLOUD}/grid/101`), headers: token })).status).toBe(200);
    expect((await call(a, { url: under('w2', `${CLOUD}/grid/101`), headers: token })).status).toBe(401);
    expect((await call(a, { url: `${CLOUD}/grid/101`, headers: token })).status).toBe(401);
  });

  it('counts rate limits per sandbox', async () => {
    const a = await demo({ rateLimitMax: 2 });
    for (let i = 0; i < 2; i++) expect((await call(a, { url: under('w1', ANNOTATIONS), headers: DEMO })).status).toBe(200);
    expect((await call(a, { url: under('w1', ANNOTATIONS), headers: DEMO })).status).toBe(429);
    expect((await call(a, { url: under('w2', ANNOTATIONS), headers: DEMO })).status).toBe(200);
    expect((await call(a, { url: ANNOTATIONS, headers: DEMO })).status).toBe(200);
  });

  it('refuses a name outside the rule with 400 naming it', async () => {
    const a = await demo();
    for (const name of ['a%20b', 'x'.repeat(65), 'w%33', 'caf%C3%A9', 'a.b']) {
      const res = await call(a, { url: `/sandbox/${name}${CLOUD}/grid/101`, headers: DEMO });
      expect(res.status, name).toBe(400);
      expect(res.body.message).toContain('1 to 64 characters of A-Z, a-z, 0-9, _ and -');
    }
    const empty = await call(a, { url: `/sandbox//_emulator/health` });
    expect(empty.status).toBe(400);
  });

  it('runs 16 sandboxes at once, each ending exactly where its own clock says', async () => {
    const a = await demo();
    await a.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(a.server.address() as AddressInfo).port}`;
    // Grid 101 of the demo seed: ALLOCATING for 6 s, ALLOCATED for 1 s, CHECKING for 5 s, then CHECKED.
    const expected = (ms: number) => (ms < 6000 ? 'ALLOCATING' : ms < 7000 ? 'ALLOCATED' : ms < 12_000 ? 'CHECKING' : 'CHECKED');
    const runs = Array.from({ length: 16 }, async (_, i) => {
      const name = `worker-${i}`;
      const ms = i * 1000;
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${base}/sandbox/${name}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      expect((await post(`${CLOUD}/grid/101/action`, { action: 'start' }, DEMO)).status).toBe(202);
      expect((await post('/_emulator/clock/advance', { ms })).status).toBe(200);
      const grid = (await (await fetch(`${base}/sandbox/${name}${CLOUD}/grid/101`, { headers: DEMO })).json()) as { state: string };
      const clock = (await (await fetch(`${base}/sandbox/${name}/_emulator/clock`)).json()) as { now: number };
      return { name, ms, state: grid.state, now: clock.now };
    });
    const results = await Promise.all(runs);
    for (const r of results) {
      expect(r.now, r.name).toBe(T0 + r.ms);
      expect(r.state, `${r.name} after ${r.ms} ms`).toBe(expected(r.ms));
    }
    // The default world saw none of it.
    expect(await gridState(a, null)).toBe('LOADED');
    expect((await call(a, { url: '/_emulator/sandboxes' })).body.sandboxes).toHaveLength(16);
  });
});

describe('managing sandboxes', () => {
  it('creates (201), replaces (200), lists, reads and deletes (204, then 404)', async () => {
    const a = await demo();
    const created = await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'w1', counts: { grids: 5 } });
    expect(Number.isInteger(created.body.createdAt)).toBe(true);
    await startGrid(a, 'w1');
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1' })).status).toBe(200);
    // Replaced from the seed: the started grid is back to LOADED.
    expect(await gridState(a, 'w1')).toBe('LOADED');

    const list = await call(a, { url: '/_emulator/sandboxes' });
    expect(list.body).toEqual({ sandboxes: [expect.objectContaining({ name: 'w1' })], max: 100, mode: 'auto' });
    expect((await call(a, { url: '/_emulator/sandboxes/w1' })).body.name).toBe('w1');
    expect((await call(a, { url: '/_emulator/sandboxes/nope' })).status).toBe(404);

    expect((await call(a, { method: 'DELETE', url: '/_emulator/sandboxes/w1' })).status).toBe(204);
    expect((await call(a, { url: '/_emulator/sandboxes/w1' })).status).toBe(404);
    expect((await call(a, { method: 'DELETE', url: '/_emulator/sandboxes/w1' })).status).toBe(404);
  });

  it('creates from a posted state, and a bad state is refused with 400 keeping the old one', async () => {
    const a = await demo();
    const state = (await call(a, { url: '/_emulator/state' })).body;
    const small = { ...state, grids: state.grids.filter((g: { id: number }) => g.id === 101), cloudServers: [] };
    const put = await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1', headers: JSON_TYPE, payload: small });
    expect(put.status).toBe(201);
    expect(put.body.counts.grids).toBe(1);
    const bad = await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1', headers: JSON_TYPE, payload: { grids: [{ id: 'x' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('grids');
    expect((await call(a, { url: '/_emulator/sandboxes/w1' })).body.counts.grids).toBe(1);
  });

  it('a deleted name starts afresh from the seed on its next request (auto)', async () => {
    const a = await demo();
    await startGrid(a, 'w1');
    await call(a, { method: 'DELETE', url: '/_emulator/sandboxes/w1' });
    expect(await gridState(a, 'w1')).toBe('LOADED');
  });

  it('refuses an escaped name in the management paths too, so one name never reaches two sandboxes', async () => {
    const a = await demo();
    const res = await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w%33' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('1 to 64 characters');
    expect((await call(a, { url: '/_emulator/sandboxes' })).body.sandboxes).toEqual([]);
  });

  it('the home page under a sandbox links into that sandbox', async () => {
    const a = await demo();
    const json = await call(a, { url: '/sandbox/w1/', headers: { accept: 'application/json' } });
    expect(json.body.links.dashboard).toBe('/sandbox/w1/_emulator/ui/');
    const html = await a.inject({ url: '/sandbox/w1', headers: { accept: 'text/html' } });
    expect(html.statusCode).toBe(308);
    expect(html.headers.location).toBe('/sandbox/w1/');
  });

  it('management is only on the default world; under a sandbox it does not exist', async () => {
    const a = await demo();
    expect((await call(a, { url: under('w1', '/_emulator/sandboxes') })).status).toBe(404);
  });

  it('MAX_SANDBOXES bounds them: one more answers 503 naming the setting', async () => {
    const a = await demo({ maxSandboxes: 2 });
    await gridState(a, 'a');
    await gridState(a, 'b');
    const third = await call(a, { url: under('c', `${CLOUD}/grid/101`), headers: DEMO });
    expect(third.status).toBe(503);
    expect(third.body.message).toContain('MAX_SANDBOXES');
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/c' })).status).toBe(503);
  });

  it('SANDBOXES=explicit: an unknown name is 404 saying how to create it', async () => {
    const a = await demo({ sandboxes: 'explicit' });
    const res = await call(a, { url: under('w1', `${CLOUD}/grid/101`), headers: DEMO });
    expect(res.status).toBe(404);
    expect(res.body.message).toContain('PUT /_emulator/sandboxes/w1');
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1' })).status).toBe(201);
    expect(await gridState(a, 'w1')).toBe('LOADED');
  });

  it('SANDBOXES=off: the prefix is not served', async () => {
    const a = await demo({ sandboxes: 'off' });
    expect((await call(a, { url: under('w1', `${CLOUD}/grid/101`), headers: DEMO })).status).toBe(404);
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1' })).status).toBe(404);
  });

  it('removes a sandbox nobody used for SANDBOX_IDLE_TIMEOUT_MS of real time', async () => {
    const a = await demo({ sandboxIdleTimeoutMs: 100 });
    await startGrid(a, 'idle');
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect((await call(a, { url: '/_emulator/sandboxes' })).body.sandboxes).toEqual([]);
    expect(await gridState(a, 'idle')).toBe('LOADED');
  });

  it('ADMIN_TOKEN guards management and every sandbox control API alike', async () => {
    const a = await demo({ adminToken: 'secret' });
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1' })).status).toBe(401);
    expect((await call(a, { url: under('w1', '/_emulator/state') })).status).toBe(401);
    expect((await call(a, { url: under('w1', '/_emulator/state'), headers: { authorization: 'Bearer secret' } })).status).toBe(200);
    expect((await call(a, { url: under('w1', '/_emulator/health') })).status).toBe(200);
  });
});

describe('STATE_FILE', () => {
  it('keeps every sandbox across a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emu-sandboxes-'));
    const stateFile = join(dir, 'state.json');
    try {
      const a = await demo({ stateFile, stateFlushIntervalMs: 0 });
      await startGrid(a, 'w1');
      await a.close();
      app = undefined;
      const text = await readFile(stateFile, 'utf8');
      expect(JSON.parse(text).sandboxes.w1.state.grids.find((g: { id: number }) => g.id === 101).deployment).toBeDefined();
      const b = await demo({ stateFile, stateFlushIntervalMs: 0 });
      expect((await call(b, { url: '/_emulator/sandboxes' })).body.sandboxes.map((s: { name: string }) => s.name)).toEqual(['w1']);
      expect(await gridState(b, 'w1')).not.toBe('LOADED');
      expect(await gridState(b, null)).toBe('LOADED');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
