import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, makeDemoApp } from '../helpers/app.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { loadFixtures, type State } from '../../src/state.js';

/**
 * An app's real-user data belongs to the tenant that owns its app key (the domain's tenant;
 * Default when the seed names none): another tenant's good token gets 403.
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const SHOP = 'SHOP9-X4T7K-M2QRB-V8DNE-H5WZC';
const summary = (key: string) => `/concerto/mpulse/api/v2/${key}/summary?format=json&date-comparator=LastHour`;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const logIn = async (a: FastifyInstance, userName: string, password: string, tenant?: string): Promise<string> => {
  const res = await a.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName, password, ...(tenant ? { tenant } : {}) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().token;
};

describe("the Query API keeps each tenant's app data to it", () => {
  it("answers 403 with a JSON error to another tenant's token, and 200 to the owner's", async () => {
    ({ app } = await makeDemoApp({ rateLimitMax: 1_000_000 }));
    const acme = await logIn(app, 'ops@acme.example', 'acme-ops');
    const refused = await app.inject({ url: summary(SHOP), headers: { authentication: acme } });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.json()).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      message: `the app key '${SHOP}' belongs to another tenant than the security token's ('ACME'): log in to the app's tenant, or send X-Tenant-Name with it if the user is in it`,
    });
    // Every query type, the documented empty ones too, and X-Auth-Token as well as Authentication.
    expect((await app.inject({ url: `/concerto/mpulse/api/v2/${SHOP}/dimension-over-time`, headers: { 'x-auth-token': acme } })).statusCode).toBe(403);
    expect((await app.inject({ url: `/concerto/mpulse/api/v2/${SHOP}/page-groups?date=2026-11-21`, headers: { authentication: acme } })).statusCode).toBe(403);
    const owner = await app.inject({ url: summary(SHOP), headers: { authentication: 'demo-token' } });
    expect(owner.statusCode).toBe(200);
    expect(owner.json().n).not.toBeNull();
  });

  it("a user in both tenants reads the app in its owner's tenant only", async () => {
    ({ app } = await makeDemoApp({ rateLimitMax: 1_000_000 }));
    const inAcme = await logIn(app, 'john.smith@example.com', 's3cret!', 'ACME');
    expect((await app.inject({ url: summary(SHOP), headers: { authentication: inAcme } })).statusCode).toBe(403);
    // X-Tenant-Name picks the user's other tenant for one request.
    expect((await app.inject({ url: summary(SHOP), headers: { authentication: inAcme, 'x-tenant-name': 'Default' } })).statusCode).toBe(200);
    const inDefault = await logIn(app, 'john.smith@example.com', 's3cret!');
    expect((await app.inject({ url: summary(SHOP), headers: { authentication: inDefault } })).statusCode).toBe(200);
  });

  it("a domain the seed gives to ACME is ACME's: its data and its repository object", async () => {
    const demo = await loadFixtures(BUNDLED_FIXTURES_DIR);
    const seed = { ...demo, domains: demo.domains.map((d) => (d.id === 12347 ? { ...d, tenant: 'ACME' } : d)) } as State;
    ({ app } = await makeApp(seed, { rateLimitMax: 1_000_000 }));
    const key = 'MOBIL-E7K3Q-R9XZT-B4NWD-H2VFC';
    const acme = await logIn(app, 'ops@acme.example', 'acme-ops');
    expect((await app.inject({ url: summary(key), headers: { authentication: acme } })).statusCode).toBe(200);
    expect((await app.inject({ url: summary(key), headers: { authentication: 'demo-token' } })).statusCode).toBe(403);
    // The repository shows each tenant its own domains: the app key is found by its owner only.
    const names = async (token: string) =>
      (await app!.inject({ url: `${REPO}/Objects/domain`, headers: { 'x-auth-token': token } })).json().objects.map((o: { name: string }) => o.name);
    expect(await names(acme)).toEqual(['m.example.com']);
    expect(await names('demo-token')).not.toContain('m.example.com');
    expect((await app.inject({ url: `${REPO}/Objects/domain/12347`, headers: { 'x-auth-token': 'demo-token' } })).statusCode).toBe(404);
    expect((await app.inject({ url: `${REPO}/Objects/domain/12346`, headers: { 'x-auth-token': acme } })).statusCode).toBe(404);
  });

  it('refuses an empty tenant of a domain in the seed, saying where', async () => {
    const demo = await loadFixtures(BUNDLED_FIXTURES_DIR);
    const seed = { ...demo, domains: demo.domains.map((d) => ({ ...d, tenant: '' })) } as State;
    await expect(makeApp(seed)).rejects.toThrow(/\$\.domains\[0\]\.tenant: Expected string length greater or equal to 1/);
  });
});
