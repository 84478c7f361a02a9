import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, TEST_TOKEN, TEST_USER, authSeed, makeApp } from '../helpers/app.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';

let app: FastifyInstance;
afterEach(async () => app?.close());

describe('Repository Tokens', () => {
  it('logs in with user name and password and the token opens the provisioning interface', async () => {
    ({ app } = await makeApp(authSeed()));
    const login = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: TEST_USER.userName, password: TEST_USER.password } });
    expect(login.statusCode).toBe(200);
    const { token } = login.json();
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    const objects = await app.inject({ method: 'GET', url: `${REPO}/Objects/grid`, headers: { 'x-auth-token': token } });
    expect(objects.statusCode).toBe(200);
    expect(objects.json()).toEqual({ objects: [] });
  });

  it('logs in with an API token and a matching tenant', async () => {
    ({ app } = await makeApp(authSeed()));
    const ok = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { apiToken: TEST_USER.apiToken, tenant: 'Default' } });
    expect(ok.statusCode).toBe(200);
    const wrongTenant = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { apiToken: TEST_USER.apiToken, tenant: 'Other' } });
    expect(wrongTenant.statusCode).toBe(401);
  });

  it('refuses bad credentials with 401 and a bad body with 400', async () => {
    ({ app } = await makeApp(authSeed()));
    const bad = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: TEST_USER.userName, password: 'nope' } });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    const noBody = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { user: 'x' } });
    expect(noBody.statusCode).toBe(400);
    expect(noBody.json().message).toBeTruthy();
    const notJson = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: '{"userName":', headers: { 'content-type': 'application/json' } });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().message).toMatch(/not valid JSON/);
  });

  it('logs out with DELETE, without X-Auth-Token, after which the token is refused', async () => {
    ({ app } = await makeApp(authSeed()));
    const out = await app.inject({ method: 'DELETE', url: `${REPO}/Tokens/${TEST_TOKEN}` });
    expect(out.statusCode).toBe(204);
    expect(out.body).toBe('');
    const after = await app.inject({ method: 'GET', url: `${REPO}/Objects/grid`, headers: AUTH });
    expect(after.statusCode).toBe(401);
    const again = await app.inject({ method: 'DELETE', url: `${REPO}/Tokens/${TEST_TOKEN}` });
    expect(again.statusCode).toBe(204);
  });

  it('expires a token after the idle timeout on the emulator clock, and use keeps it alive', async () => {
    let clock;
    ({ app, clock } = await makeApp(authSeed(), { tokenIdleTimeoutMs: 60_000 }));
    clock.advance(59_000);
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH })).statusCode).toBe(200);
    clock.advance(59_000);
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH })).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH })).statusCode).toBe(401);
  });

  it('sweeps expired sessions out of memory as log-ins go on, keeping live and never-expiring ones', async () => {
    let clock;
    const seed = authSeed();
    seed.tokens.push({ token: 'forever', userName: TEST_USER.userName, neverExpires: true });
    ({ app, clock } = await makeApp(seed, { tokenIdleTimeoutMs: 60_000 }));
    const auth = app.emulator.stores.auth;
    const logIn = async () => (await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { apiToken: TEST_USER.apiToken } })).json().token as string;
    const status = async (token: string) => (await app.inject({ url: `${REPO}/Objects/grid`, headers: { 'x-auth-token': token } })).statusCode;

    const first: string[] = [];
    for (let i = 0; i < 300; i++) first.push(await logIn());
    clock.advance(30_000);
    const kept = first[0];
    expect(await status(kept)).toBe(200);
    // Every token of the first batch but `kept` has now been idle for the whole timeout, and TEST_TOKEN too.
    clock.advance(40_000);
    for (let i = 0; i < 300; i++) await logIn();

    // Without a sweep all 602 would still be held.
    expect(auth.size).toBeLessThan(400);
    expect(auth.size).toBeGreaterThanOrEqual(302);
    expect(await status(first[1])).toBe(401);
    expect(await status(TEST_TOKEN)).toBe(401);
    expect(await status(kept)).toBe(200);
    expect(await status('forever')).toBe(200);

    // An export holds only live tokens, and drops the expired ones it passes.
    clock.advance(30_000);
    expect(await status(kept)).toBe(200);
    clock.advance(40_000);
    const exported = (await app.inject({ url: '/_emulator/state' })).json().tokens as Array<{ token: string }>;
    expect(exported.map((t) => t.token).sort()).toEqual(['forever', kept].sort());
    expect(auth.size).toBe(2);
  });
});

describe('X-Auth-Token guard', () => {
  it('answers 401 with the JSON error body when the token is missing or unknown', async () => {
    ({ app } = await makeApp(authSeed()));
    const missing = await app.inject({ url: `${CLOUD}/grid/` });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'the X-Auth-Token header is missing' });
    const unknown = await app.inject({ url: `${CLOUD}/grid/`, headers: { 'x-auth-token': 'nope' } });
    expect(unknown.statusCode).toBe(401);
  });

  it('guards unknown paths and odd spellings under protected prefixes too', async () => {
    ({ app } = await makeApp(authSeed()));
    for (const url of [`${CLOUD}/nothing-here`, '/CONCERTO/services/rest/cloudservice/v1/grid', `/concerto//services/rest/CloudService/v1/grid//`, '/concerto/services/rest/Cloud%53ervice/v1/grid']) {
      expect((await app.inject({ url })).statusCode, url).toBe(401);
    }
    expect((await app.inject({ url: `${CLOUD}/nothing-here`, headers: AUTH })).statusCode).toBe(404);
  });
});

describe('Repository Objects', () => {
  const seed = () => ({
    ...authSeed(),
    rsdbs: [{ id: 7, name: 'Results DB', cloudType: 'EC2' as const, instanceSize: 'EC2 Results Database (Large)', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a', durations: {} }],
  });

  it('finds objects of a type by exact name, and lists all without a name', async () => {
    ({ app } = await makeApp(seed()));
    const all = await app.inject({ url: `${REPO}/Objects/rsdb`, headers: AUTH });
    expect(all.json()).toEqual({ objects: [{ id: 7, name: 'Results DB', type: 'rsdb' }] });
    const byName = await app.inject({ url: `${REPO}/Objects/rsdb?name=Results%20DB`, headers: AUTH });
    expect(byName.json().objects[0].id).toBe(7);
    const none = await app.inject({ url: `${REPO}/Objects/rsdb?name=nope`, headers: AUTH });
    expect(none.json()).toEqual({ objects: [] });
  });

  it('answers 404 for an unknown type, naming the known ones', async () => {
    ({ app } = await makeApp(seed()));
    const res = await app.inject({ url: `${REPO}/Objects/toString`, headers: AUTH });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toMatch(/grid, testenvironment, rsdb, domain, composition or result/);
  });
});

describe('log-in body checks', () => {
  it('says what is wrong with a log-in body', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[unknown, RegExp]> = [
      [{ userName: TEST_USER.userName }, /missing credentials: send userName and password, or apiToken/],
      [{ apiToken: 'x', userName: 'y' }, /either userName and password, or apiToken, not both/],
      [{ userName: 5, password: 'x' }, /body field 'userName' must be a string/],
      [{ userName: 'a', password: 'b', extra: 1 }, /unknown field 'extra'/],
      [[], /body must be a JSON object/],
    ];
    for (const [payload, message] of cases) {
      const res = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toMatch(message);
    }
  });

  it('answers a body that is not JSON with 400, whatever its Content-Type', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: 'userName=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/not valid JSON/);
  });
});
