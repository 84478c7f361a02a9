import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp, makeDemoApp } from '../helpers/app.js';
import { environment, grid, rsdb, seed } from '../provisioning/seed.js';
import { INTERFACE_SECTION_NAMES } from '../../src/state.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';

let app: FastifyInstance;
afterEach(async () => app?.close());

const fullSeed = () => seed({ grids: [grid()], rsdbs: [rsdb()], environments: [environment()] });
const exportState = async () => {
  const res = await app.inject({ url: '/_emulator/state' });
  expect(res.statusCode).toBe(200);
  return res.json();
};
const countsOf = (state: Record<string, unknown[]>) => Object.fromEntries(INTERFACE_SECTION_NAMES.map((name) => [name, state[name].length]));
const logIn = () => app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { apiToken: 'tester-api-token' } });

describe('GET /_emulator/health', () => {
  it('answers ok with the clock and resource counts', async () => {
    ({ app } = await makeApp(fullSeed()));
    const res = await app.inject({ url: '/_emulator/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'ok',
      now: T0,
      clock: { now: T0, scale: 1, frozen: true },
      counts: { grids: 1, environments: 1, rsdbs: 1, domains: 0 },
      faultRules: 0,
    });
    expect(res.json().stateFile).toBeUndefined();
  });

  it('counts only the fault rules that can still fire, and exports nothing', async () => {
    ({ app } = await makeApp(fullSeed()));
    await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: '/x', action: { status: 500 } } });
    await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: '/concerto/*', action: { status: 500 }, times: 1 } });
    await app.inject({ url: '/concerto/anything' });
    const exportState = vi.spyOn(app.world, 'exportState');
    const list = vi.spyOn(app.world.faults, 'list');
    expect((await app.inject({ url: '/_emulator/health' })).json().faultRules).toBe(1);
    expect(exportState).not.toHaveBeenCalled();
    expect(list).not.toHaveBeenCalled();
  });

  it('answers 405 with Allow for another method', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ method: 'POST', url: '/_emulator/health' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('POST /_emulator/reset', () => {
  it('goes back to the start seed: resources, tokens, faults, journal and clock settings', async () => {
    let clock;
    ({ app, clock } = await makeApp(fullSeed()));
    const before = await exportState();

    const token = (await logIn()).json().token;
    await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } });
    await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: '/nowhere', action: { status: 500 } } });
    await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 10, frozen: false } });
    clock.advance(1000);
    expect((await exportState()).grids[0].deployment).toBeDefined();

    const res = await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'reset', clock: { scale: 1, frozen: true }, counts: { grids: 1, tokens: 1, users: 1, cloudServers: 0 } });

    const after = await exportState();
    expect(after.grids).toEqual(before.grids);
    expect(after.tokens.map((t: { token: string }) => t.token)).toEqual(['test-token']);
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: { 'x-auth-token': token } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
    // Time does not go back: the clock keeps the time it reached.
    expect((await app.inject({ url: '/_emulator/clock' })).json()).toMatchObject({ scale: 1, frozen: true });
    expect(clock.now()).toBeGreaterThanOrEqual(T0 + 1000);
  });

  it('answers the counts of every section without exporting the state', async () => {
    ({ app } = await makeDemoApp());
    const spy = vi.spyOn(app.world, 'exportState');
    const res = await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect(res.statusCode).toBe(200);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
    expect(res.json().counts).toEqual(countsOf(await exportState()));
  });

  it('counts what an export holds, after changes and with expired tokens left out', async () => {
    let clock;
    ({ app, clock } = await makeDemoApp({ tokenIdleTimeoutMs: 60_000 }));
    const logInDemo = async () => (await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { apiToken: 'demo-api-token' } })).json().token;
    const demoAuth = { 'x-auth-token': 'demo-token' };
    await logInDemo();
    const kept = await logInDemo();
    await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: demoAuth, payload: { action: 'start' } });
    clock.advance(30_000);
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: { 'x-auth-token': kept } })).statusCode).toBe(200);
    clock.advance(40_000);
    // The demo seed's timeline has a step due by now (a grid starts at +1m): a request plays it,
    // so that the counts read from the world directly are those the export will hold.
    await app.inject({ url: '/_emulator/clock' });
    const counts = app.world.counts();
    const state = await exportState();
    expect(counts).toEqual(countsOf(state));
    expect(counts.tokens).toBe(2);
    expect(counts.cloudServers).toBeGreaterThan(0);
  });

  it('stays the same after thousands of resets: same state, nothing piling up', async () => {
    ({ app } = await makeApp(fullSeed()));
    const first = await exportState();
    // Timers or handles added per reset would show up here as more of a kind (immediates, and
    // a timer of the streamed export's response, come and go with inject).
    const resources = () => {
      const kinds: Record<string, number> = {};
      for (const r of process.getActiveResourcesInfo()) if (r !== 'Immediate') kinds[r] = (kinds[r] ?? 0) + 1;
      return kinds;
    };
    const before = resources();
    for (let i = 0; i < 2000; i++) app.world.reset();
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    expect(await exportState()).toEqual(first);
    for (const [kind, count] of Object.entries(resources())) expect(count, kind).toBeLessThanOrEqual(before[kind] ?? 0);
  });
});

describe('bodies the control API does not keep', () => {
  it('a reset refuses a body field, naming it, and does not reset; none, null or {} reset', async () => {
    ({ app } = await makeApp(fullSeed()));
    expect((await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } })).statusCode).toBe(202);
    const refused = await app.inject({ method: 'POST', url: '/_emulator/reset', payload: { clock: 'real' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe("body: unknown field 'clock'");
    expect((await app.inject({ url: '/_emulator/lifecycles/grid/101' })).json().state).toBe('ALLOCATING');
    for (const payload of [undefined, 'null', '{}']) {
      const headers = payload === undefined ? {} : { 'content-type': 'application/json' };
      expect((await app.inject({ method: 'POST', url: '/_emulator/reset', headers, payload })).statusCode).toBe(200);
    }
    expect((await app.inject({ url: '/_emulator/lifecycles/grid/101' })).json().state).toBe('LOADED');
  });

  it("a state import or a sandbox's state with another demo title than the fixtures' is refused, naming it, and changes nothing; the fixtures' own is taken", async () => {
    ({ app } = await makeApp(fullSeed()));
    const state = { ...(await exportState()), demo: { title: 'Another demo' } };
    const message = "body: $.demo: the demo's title is the fixtures' (FIXTURES_DIR), read by the dashboard's presenter view; a state sent to a world cannot change it: leave demo out, or send the fixtures' own";
    const imported = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...state, grids: [] } });
    expect(imported.statusCode).toBe(400);
    expect(imported.json().message).toBe(message);
    expect((await exportState()).grids).toHaveLength(1);
    const sandbox = await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1', payload: state });
    expect(sandbox.statusCode).toBe(400);
    expect(sandbox.json().message).toBe(message);
    expect((await app.inject({ url: '/_emulator/sandboxes/w1' })).statusCode).toBe(404);
    // A state made from the fixture folder carries the fixtures' own demo: taken.
    await app.close();
    ({ app } = await makeApp({ ...fullSeed(), demo: { title: 'Seed demo' } }));
    const own = { ...(await exportState()), demo: { title: 'Seed demo' } };
    expect((await app.inject({ method: 'PUT', url: '/_emulator/state', payload: own })).statusCode).toBe(200);
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1', payload: own })).statusCode).toBe(201);
    expect((await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...own, demo: { title: 'Other' } } })).statusCode).toBe(400);
  });
});

describe('GET and PUT /_emulator/state', () => {
  it('exports a valid fixture set, which imports back to the same state', async () => {
    ({ app } = await makeApp(fullSeed()));
    await app.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } });
    const exported = await exportState();
    expect(exported.cloudServers).toHaveLength(3);

    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect((await exportState()).cloudServers).toHaveLength(0);

    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: exported });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ status: 'replaced', counts: { grids: 1, cloudServers: 3, rsdbs: 1, environments: 1 } });
    expect(await exportState()).toEqual(exported);
    const readGrid = await app.inject({ url: `${CLOUD}/grid/101`, headers: AUTH });
    expect(readGrid.json().state).toBe('ALLOCATING');
  });

  it('refuses a PUT without any body with 400, keeping the state', async () => {
    ({ app } = await makeApp(fullSeed()));
    const before = await exportState();
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state' });
    expect(put.statusCode).toBe(400);
    expect(put.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'body: expected a JSON object with the state sections (users, tokens, grids, ...)' });
    expect(await exportState()).toEqual(before);
  });

  it('accepts a partial state: sections left out are empty', async () => {
    ({ app } = await makeApp(fullSeed()));
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...authSeed(), grids: [grid({ id: 555, name: 'Only' })] } });
    expect(put.statusCode).toBe(200);
    const state = await exportState();
    expect(state.grids.map((g: { id: number }) => g.id)).toEqual([555]);
    expect(state.rsdbs).toEqual([]);
  });

  it('refuses a bad state with 400 naming the JSON path, and keeps the old state', async () => {
    ({ app } = await makeApp(fullSeed()));
    const before = await exportState();
    const cases: Array<[unknown, string]> = [
      [{ grids: [{ ...grid(), id: 'x' }] }, '$.grids[0].id'],
      [{ grids: [grid(), grid()] }, '$.grids[1]: duplicate grids entry 101'],
      [{ tokens: [{ token: 't', userName: 'ghost' }] }, "$.tokens[0].userName: no user 'ghost'"],
      [{ colour: 'red' }, '$.colour'],
      [[1, 2], 'expected a JSON object'],
    ];
    for (const [payload, path] of cases) {
      const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: payload as object });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toContain(path);
    }
    const notJson = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: 'grids', headers: { 'content-type': 'text/plain' } });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().message).toMatch(/Content-Type/);
    expect(await exportState()).toEqual(before);
  });

  it('refuses a large state full of mistakes quickly, listing the first ten problems', async () => {
    ({ app } = await makeApp(fullSeed()));
    const before = await exportState();
    // About 1 MiB of grids, each a number instead of an object, and each with more mistakes
    // inside: hundreds of thousands of errors, which used to be compared with one another.
    const numbers = { ...authSeed(), grids: Array.from({ length: 500_000 }, () => 0) };
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: numbers });
    expect(res.statusCode).toBe(400);
    const lines: string[] = res.json().message.split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('body: $.grids[0]: Expected object, got 0');
    expect(lines[9]).toBe('body: $.grids[9]: Expected object, got 0');
    expect(lines[10]).toBe('body: and more problems, not listed');

    const wrongFields = { ...authSeed(), grids: Array.from({ length: 5_000 }, (_, i) => ({ ...grid({ id: i + 1 }), monitors: 'yes' })) };
    const fields = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: wrongFields });
    expect(fields.statusCode).toBe(400);
    const fieldLines: string[] = fields.json().message.split('\n');
    expect(fieldLines).toHaveLength(11);
    expect(fieldLines[0]).toBe('body: $.grids[0].monitors: Expected boolean, got "yes"');
    expect(fieldLines.at(-1)).toBe('body: and more problems, not listed');
    expect(await exportState()).toEqual(before);
  });

  it('lists the first ten duplicates and dangling references and counts the rest', async () => {
    ({ app } = await makeApp(fullSeed()));
    const before = await exportState();
    const grids = Array.from({ length: 5_000 }, () => grid());
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...authSeed(), grids } });
    expect(res.statusCode).toBe(400);
    const lines: string[] = res.json().message.split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('body: $.grids[1]: duplicate grids entry 101; also at $.grids[0]');
    expect(lines[10]).toBe('body: and 4989 more problems, not listed');

    const tokens = Array.from({ length: 2 }, (_, i) => ({ token: `t${i}`, userName: 'ghost' }));
    const few = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { tokens } });
    expect(few.json().message.split('\n')).toEqual(["body: $.tokens[0].userName: no user 'ghost'", "body: $.tokens[1].userName: no user 'ghost'"]);
    expect(await exportState()).toEqual(before);
  });

  it('takes a state larger than the default body limit', async () => {
    ({ app } = await makeApp(authSeed(), { bodyLimitBytes: 1024 }));
    const annotations = Array.from({ length: 200 }, (_, i) => ({ id: i + 1, title: `t${i}`, text: 'x'.repeat(50), start: T0, user: 'u', domainIds: [] }));
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...authSeed(), annotations } });
    expect(res.statusCode).toBe(200);
    expect(res.json().counts.annotations).toBe(200);
  });
});

describe('ADMIN_TOKEN', () => {
  it('requires Authorization: Bearer <ADMIN_TOKEN> on every control call except health', async () => {
    ({ app } = await makeApp(fullSeed(), { adminToken: 's3cret' }));
    expect((await app.inject({ url: '/_emulator/health' })).statusCode).toBe(200);
    for (const [method, url] of [['GET', '/_emulator/state'], ['POST', '/_emulator/reset'], ['GET', '/_emulator/journal'], ['GET', '/_emulator/no-such-thing']] as const) {
      const missing = await app.inject({ method, url });
      expect(missing.statusCode, url).toBe(401);
      expect(missing.json().message).toMatch(/Authorization header is missing/);
      expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const wrong = await app.inject({ url: '/_emulator/state', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'the admin token is wrong' });
    const basic = await app.inject({ url: '/_emulator/state', headers: { authorization: 'Basic czNjcmV0' } });
    expect(basic.statusCode).toBe(401);
    const ok = await app.inject({ url: '/_emulator/state', headers: { authorization: 'Bearer s3cret' } });
    expect(ok.statusCode).toBe(200);
    // The emulated interfaces do not care about it.
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH })).statusCode).toBe(200);
  });

  it('leaves the static pages open: the OpenAPI document, its reference page and the dashboard', async () => {
    ({ app } = await makeApp(fullSeed(), { adminToken: 's3cret' }));
    for (const url of ['/_emulator/openapi.json', '/_emulator/ui/', '/_emulator/docs/']) {
      expect((await app.inject({ url })).statusCode, url).toBe(200);
    }
    expect((await app.inject({ url: '/_emulator/uix' })).statusCode).toBe(401);
  });

  it('leaves the control API open when unset', async () => {
    ({ app } = await makeApp(fullSeed()));
    expect((await app.inject({ url: '/_emulator/state' })).statusCode).toBe(200);
  });
});
