import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';

/**
 * The credentials each interface takes besides X-Auth-Token: HTTP Basic on the repository's
 * objects, and what a session token sent as a Bearer is told.
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const QUERY = '/concerto/mpulse/api/v2/SHOP9-X4T7K-M2QRB-V8DNE-H5WZC/summary?format=json&date-comparator=LastHour';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function demo(): Promise<FastifyInstance> {
  ({ app } = await makeDemoApp({ rateLimitMax: 1_000_000 }));
  return app;
}

const logIn = async (a: FastifyInstance, userName = 'demo@example.com', password = 'demo'): Promise<string> => {
  const res = await a.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName, password } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().token;
};

describe('HTTP Basic authentication on the repository', () => {
  it("answers the objects to a seed user's name and password, in the user's tenant", async () => {
    const a = await demo();
    const withToken = await a.inject({ url: `${REPO}/Objects/license`, headers: { 'x-auth-token': 'demo-token' } });
    const res = await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: basic('demo@example.com', 'demo') } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(withToken.json());
    // A user of ACME sees ACME's licence only.
    const acme = await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: basic('ops@acme.example', 'acme-ops') } });
    expect(acme.json().objects.map((o: { name: string }) => o.name)).toEqual(['ACME licence']);
    // X-Tenant-Name picks another of the user's tenants, as beside a token.
    const other = await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: basic('john.smith@example.com', 's3cret!'), 'x-tenant-name': 'ACME' } });
    expect(other.json().objects.map((o: { name: string }) => o.name)).toEqual(['ACME licence']);
    // A password holding a colon: only the first colon separates the user name.
    expect(basic('a', 'b:c')).toBe(`Basic ${Buffer.from('a:b:c').toString('base64')}`);
  });

  it('creates and changes objects too: every operation of Objects takes it', async () => {
    const a = await demo();
    const headers = { authorization: basic('demo@example.com', 'demo') };
    const created = await a.inject({ method: 'PUT', url: `${REPO}/Objects/statisticalmodel`, headers, payload: { name: 'Made with Basic', body: '<Model/>' } });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json();
    const read = await a.inject({ url: `${REPO}/Objects/statisticalmodel/${id}`, headers: { 'x-auth-token': 'demo-token' } });
    expect(read.json().name).toBe('Made with Basic');
  });

  it('refuses a wrong password, an unknown user and a malformed value with 401 and what was wrong, and changes nothing', async () => {
    const a = await demo();
    const wrong = 'the user name or password in the Authorization header (Basic) is wrong';
    const cases: Array<[string, string]> = [
      [basic('demo@example.com', 'nope'), wrong],
      [basic('nobody@example.com', 'demo'), wrong],
      // No password at all is a wrong one.
      [basic('demo@example.com', ''), wrong],
      ['Basic !!!notbase64', 'the Authorization header must be Basic <base64 of user name:password>'],
      [`Basic ${Buffer.from('no-colon').toString('base64')}`, 'the Authorization header must be Basic <base64 of user name:password>'],
      [`Basic ${Buffer.from(':demo').toString('base64')}`, 'the Authorization header must be Basic <base64 of user name:password>'],
    ];
    for (const [authorization, message] of cases) {
      const res = await a.inject({ method: 'PUT', url: `${REPO}/Objects/statisticalmodel`, headers: { authorization }, payload: { name: 'Refused', body: '<Model/>' } });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message });
    }
    const models = await a.inject({ url: `${REPO}/Objects/statisticalmodel`, headers: { 'x-auth-token': 'demo-token' } });
    expect(models.json().objects.map((o: { name: string }) => o.name)).not.toContain('Refused');
  });

  it('is taken only where the reference documents it: elsewhere the answer says where', async () => {
    const a = await demo();
    const authorization = basic('demo@example.com', 'demo');
    const annotations = await a.inject({ url: `${ANNOTATIONS}/`, headers: { authorization } });
    expect(annotations.statusCode).toBe(401);
    expect(annotations.json().message).toBe("the X-Auth-Token header is missing (Authorization: Basic is taken only by the repository's Objects)");
    const cloud = await a.inject({ url: `${CLOUD}/grid/101`, headers: { authorization } });
    expect(cloud.statusCode).toBe(401);
    const query = await a.inject({ url: QUERY, headers: { authorization } });
    expect(query.statusCode).toBe(401);
    expect(query.json().message).toMatch(/^the Authentication header is missing: .*\(Authorization: Basic is taken only by the repository's Objects\)$/);
  });

  it('the journal keeps the scheme and masks the credential', async () => {
    const a = await demo();
    const authorization = basic('demo@example.com', 'demo');
    await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization } });
    await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: basic('demo@example.com', 'wrong-password') } });
    const text = (await a.inject({ url: '/_emulator/journal' })).body;
    const { entries } = JSON.parse(text);
    expect(entries.map((e: { status: number; headers: Record<string, string> }) => [e.status, e.headers.authorization])).toEqual([
      [401, 'Basic ***'],
      [200, 'Basic ***'],
    ]);
    expect(text).not.toContain(authorization.slice(6));
    expect(text).not.toContain('wrong-password');
  });
});

describe("the Query API's Authentication header in the journal", () => {
  it('is masked as X-Auth-Token is', async () => {
    const a = await demo();
    const token = await logIn(a);
    expect((await a.inject({ url: QUERY, headers: { authentication: token } })).statusCode).toBe(200);
    const text = (await a.inject({ url: '/_emulator/journal?pathPrefix=/concerto/mpulse/api/v2' })).body;
    expect(JSON.parse(text).entries[0].headers.authentication).toBe('***');
    expect(text).not.toContain(token);
  });
});

describe('a session token sent as Authorization: Bearer', () => {
  it('is refused with 401 saying it goes in X-Auth-Token, on every interface, and API tokens still work', async () => {
    const a = await demo();
    const token = await logIn(a);
    const bearer = { authorization: `Bearer ${token}` };
    const where: Array<[string, string]> = [
      [`${REPO}/Objects/license`, 'the Authorization header holds a session token: send it as X-Auth-Token (Authorization: Bearer takes an API token)'],
      [`${CLOUD}/grid/101`, 'the Authorization header holds a session token: send it as X-Auth-Token (Authorization: Bearer takes an API token)'],
      [`${ANNOTATIONS}/`, 'the Authorization header holds a session token: send it as X-Auth-Token'],
      [QUERY, 'the Authorization header holds a session token: send it as Authentication or X-Auth-Token'],
    ];
    for (const [url, message] of where) {
      const res = await a.inject({ url, headers: bearer });
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message });
      // The same token where it belongs is taken.
      expect((await a.inject({ url, headers: { [url === QUERY ? 'authentication' : 'x-auth-token']: token } })).statusCode, url).toBe(200);
    }
    // An API token as a Bearer is still taken where it was; an unknown one is still told so.
    expect((await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: 'Bearer demo-api-token' } })).statusCode).toBe(200);
    expect((await a.inject({ url: `${CLOUD}/grid/101`, headers: { authorization: 'Bearer demo-api-token' } })).statusCode).toBe(200);
    const unknown = await a.inject({ url: `${REPO}/Objects/license`, headers: { authorization: 'Bearer not-a-token' } });
    expect(unknown.json().message).toBe('the API token in the Authorization header is invalid');
  });

  it('an expired session token is not told apart from any unknown value, and the refusal does not keep a token alive', async () => {
    let clock;
    ({ app, clock } = await makeDemoApp({ rateLimitMax: 1_000_000, tokenIdleTimeoutMs: 60_000 }));
    const token = await logIn(app);
    clock.advance(30_000);
    // Refused, and the idle time not refreshed by it.
    expect((await app.inject({ url: `${ANNOTATIONS}/`, headers: { authorization: `Bearer ${token}` } })).json().message).toBe(
      'the Authorization header holds a session token: send it as X-Auth-Token',
    );
    clock.advance(30_000);
    const expired = await app.inject({ url: `${ANNOTATIONS}/`, headers: { authorization: `Bearer ${token}` } });
    expect(expired.json().message).toBe('the X-Auth-Token header is missing');
    expect((await app.inject({ url: `${ANNOTATIONS}/`, headers: { 'x-auth-token': token } })).json().message).toBe('the security token is invalid or expired');
  });
});
