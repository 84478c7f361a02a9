import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { makeApp, makeDemoApp } from '../helpers/app.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { loadFixtures, type State } from '../../src/state.js';

/**
 * A sandbox takes every credential the default world takes, on every interface: in a sandbox
 * that exists, and in the request that makes a new one (judged against the seed before a
 * world is built for it).
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const QUERY = '/concerto/mpulse/api/v2/SHOP9-X4T7K-M2QRB-V8DNE-H5WZC/summary?format=json&date-comparator=LastHour';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Each kind of credential the default world takes, with a request it is taken on. */
const KINDS: Array<{ kind: string; url: string; headers: Record<string, string> }> = [
  { kind: 'X-Auth-Token on the repository', url: `${REPO}/Objects/domain`, headers: { 'x-auth-token': 'demo-token' } },
  { kind: 'X-Auth-Token on the annotations', url: `${ANNOTATIONS}/`, headers: { 'x-auth-token': 'demo-token' } },
  { kind: "the Query API's Authentication", url: QUERY, headers: { authentication: 'demo-token' } },
  { kind: 'X-Auth-Token on the Query API', url: QUERY, headers: { 'x-auth-token': 'demo-token' } },
  { kind: 'a Bearer API token on the repository', url: `${REPO}/Objects/domain`, headers: { authorization: 'Bearer demo-api-token' } },
  { kind: 'a Bearer API token on the provisioning', url: `${CLOUD}/grid/101`, headers: { authorization: 'Bearer demo-api-token' } },
  { kind: 'a Bearer API token with X-Tenant-Name', url: `${REPO}/Objects/license`, headers: { authorization: 'Bearer 0f6c1d2e-5b7a-4c39-9e61-2a8d4f0b7c13', 'x-tenant-name': 'ACME' } },
  { kind: 'Basic on the repository', url: `${REPO}/Objects/domain`, headers: { authorization: basic('demo@example.com', 'demo') } },
];

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function demo(config: Partial<Config> = {}): Promise<FastifyInstance> {
  ({ app } = await makeDemoApp({ rateLimitMax: 1_000_000, ...config }));
  return app;
}

const sandboxNames = async (a: FastifyInstance): Promise<string[]> => (await a.inject({ url: '/_emulator/sandboxes' })).json().sandboxes.map((s: { name: string }) => s.name);

describe('a sandbox takes what the default world takes', () => {
  for (const { kind, url, headers } of KINDS) {
    it(`${kind}: in the default world, in a new sandbox and in an existing one`, async () => {
      const a = await demo();
      const main = await a.inject({ url, headers });
      expect(main.statusCode, main.body).toBe(200);
      // The request that makes the sandbox.
      const created = await a.inject({ url: `/sandbox/fresh${url}`, headers });
      expect(created.statusCode, created.body).toBe(200);
      expect(created.json()).toEqual(main.json());
      expect(await sandboxNames(a)).toEqual(['fresh']);
      // A sandbox made another way (PUT) that exists already.
      expect((await a.inject({ method: 'PUT', url: '/_emulator/sandboxes/made' })).statusCode).toBe(201);
      const existing = await a.inject({ url: `/sandbox/made${url}`, headers });
      expect(existing.statusCode, existing.body).toBe(200);
      expect(existing.json()).toEqual(main.json());
    });
  }

  it('refuses in a new sandbox what the default world refuses, with the same message, and makes nothing', async () => {
    const a = await demo();
    const refused = [
      { url: QUERY, headers: { authentication: 'nope' } },
      { url: `${REPO}/Objects/domain`, headers: { authorization: 'Bearer nope' } },
      { url: `${REPO}/Objects/domain`, headers: { authorization: basic('demo@example.com', 'wrong') } },
      { url: `${REPO}/Objects/domain`, headers: { authorization: 'Bearer demo-api-token', 'x-tenant-name': 'ACME' } },
      { url: `${ANNOTATIONS}/`, headers: { authorization: 'Bearer demo-api-token' } },
    ];
    for (const { url, headers } of refused) {
      const main = await a.inject({ url, headers });
      const sandboxed = await a.inject({ url: `/sandbox/never${url}`, headers });
      expect(main.statusCode).toBe(401);
      expect(sandboxed.statusCode).toBe(401);
      expect(sandboxed.json()).toEqual(main.json());
    }
    expect(await sandboxNames(a)).toEqual([]);
  });

  it('a user whose password the seed does not have cannot make one with Basic', async () => {
    const a = await demo();
    const res = await a.inject({ url: `/sandbox/basic${REPO}/Objects/domain`, headers: { authorization: basic('nobody@example.com', 'demo') } });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('the user name or password in the Authorization header (Basic) is wrong');
    expect(await sandboxNames(a)).toEqual([]);
  });

  it('a request whose sandbox is made by another while it waits is judged again there, whatever its credential', async () => {
    // The seed's fault holds the request (real time) after its world is chosen (a world from
    // the seed, not registered yet); meanwhile PUT makes the sandbox (a few milliseconds, far
    // less than the hold even on a busy machine), and the request is served by that one.
    const seed = { ...(await loadFixtures(BUNDLED_FIXTURES_DIR)), faults: [{ id: 'hold', path: `${REPO}/Objects/domain`, action: { latencyMs: 2000 } }] };
    ({ app } = await makeApp(seed as State, { rateLimitMax: 1_000_000 }));
    const a = app;
    for (const [name, headers] of [
      ['apitoken', { authorization: 'Bearer demo-api-token' }],
      ['basic', { authorization: basic('demo@example.com', 'demo') }],
    ] as const) {
      // (An injected request starts when it is awaited.)
      const held = Promise.resolve(a.inject({ url: `/sandbox/${name}${REPO}/Objects/domain`, headers }));
      expect((await a.inject({ method: 'PUT', url: `/_emulator/sandboxes/${name}` })).statusCode).toBe(201);
      const res = await held;
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});
