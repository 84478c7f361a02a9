import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Config } from '../../src/config.js';
import { makeDemoApp } from '../helpers/app.js';

/**
 * What a request to /sandbox/<new name> may make: a sandbox is created only by a request that
 * passed its checks, so a refused one (or, with ADMIN_TOKEN set, one that needs no
 * credential) leaves nothing behind and keeps nothing alive; and the name's existence is not
 * told to a caller without credentials.
 */

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const DEMO = { 'x-auth-token': 'demo-token' };
const ADMIN = { authorization: 'Bearer s3cret' };
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
const names = async (a: FastifyInstance, headers: Record<string, string> = {}) =>
  ((await call(a, { url: '/_emulator/sandboxes', headers })).body.sandboxes as Array<{ name: string }>).map((s) => s.name);

/** One request of every area, without credentials, under `/sandbox/<name>`. */
const uncredentialed = (name: string): InjectOptions[] => [
  { url: `/sandbox/${name}/_emulator/clock` },
  { method: 'POST', url: `/sandbox/${name}/_emulator/reset`, headers: { authorization: 'Bearer wrong' } },
  { url: `/sandbox/${name}${CLOUD}/grid/101` },
  { url: `/sandbox/${name}${CLOUD}/grid/101`, headers: { 'x-auth-token': 'not-a-token' } },
  { url: `/sandbox/${name}/_emulator/health` },
  { method: 'PUT', url: `/sandbox/${name}${REPO}/Tokens`, headers: JSON_TYPE, payload: { userName: 'demo@example.com', password: 'demo' } },
  { method: 'POST', url: `/sandbox/${name}${ALERTS}/demo-alert/fire` },
  { url: `/sandbox/${name}/_emulator/ui/` },
  { url: `/sandbox/${name}/_emulator/openapi.json` },
  { url: `/sandbox/${name}/nowhere` },
];

describe('with ADMIN_TOKEN set, requests without credentials make no sandbox', () => {
  it('a spray of new names in every area fills nothing, and the admin can still create one', async () => {
    const a = await demo({ adminToken: 's3cret', maxSandboxes: 3 });
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      for (const request of uncredentialed(`spray${i}`)) {
        const res = await call(a, request);
        expect(res.status, `${request.method ?? 'GET'} ${request.url}`).toBeGreaterThanOrEqual(400);
        refused++;
      }
    }
    expect(refused).toBe(200);
    expect(await names(a, ADMIN)).toEqual([]);
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/legit-worker', headers: ADMIN })).status).toBe(201);
  });

  it('answers 401 where credentials are needed, and 404 saying how to create it where none are', async () => {
    const a = await demo({ adminToken: 's3cret' });
    expect((await call(a, { url: `/sandbox/n1/_emulator/clock` })).body.message).toBe(
      'the Authorization header is missing: the control API needs Authorization: Bearer <ADMIN_TOKEN>',
    );
    expect((await call(a, { url: `/sandbox/n1${CLOUD}/grid/101` })).body.message).toBe('the X-Auth-Token header is missing');
    const health = await call(a, { url: '/sandbox/n1/_emulator/health' });
    expect(health.status).toBe(404);
    expect(health.body.message).toBe(
      "no sandbox 'n1': with ADMIN_TOKEN set, a sandbox is made only by a request with credentials " +
        '(Authorization: Bearer <ADMIN_TOKEN>, or an X-Auth-Token of the seed) or by PUT /_emulator/sandboxes/n1',
    );
  });

  it('a request that passed its check creates the sandbox: the admin token, or a token of the seed', async () => {
    const a = await demo({ adminToken: 's3cret' });
    expect((await call(a, { url: '/sandbox/by-admin/_emulator/clock', headers: ADMIN })).status).toBe(200);
    expect((await call(a, { url: '/sandbox/by-health/_emulator/health', headers: ADMIN })).status).toBe(200);
    expect((await call(a, { url: `/sandbox/by-token${CLOUD}/grid/101`, headers: DEMO })).status).toBe(200);
    expect(await names(a, ADMIN)).toEqual(['by-admin', 'by-health', 'by-token']);
  });

  it('a request refused after its credentials (a bad body) makes nothing either', async () => {
    const a = await demo({ adminToken: 's3cret' });
    const bad = await call(a, { method: 'POST', url: `/sandbox/b1${CLOUD}/grid/101/action`, headers: { ...DEMO, ...JSON_TYPE }, payload: { action: 42 } });
    expect(bad.status).toBe(400);
    expect(await names(a, ADMIN)).toEqual([]);
  });

  it('a refused request does not keep an existing sandbox alive', async () => {
    const a = await demo({ adminToken: 's3cret' });
    await call(a, { method: 'PUT', url: '/_emulator/sandboxes/w1', headers: ADMIN });
    const before = (await call(a, { url: '/_emulator/sandboxes/w1', headers: ADMIN })).body.lastUsedAt;
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const request of uncredentialed('w1').slice(0, 4)) expect((await call(a, request)).status).toBe(401);
    expect((await call(a, { url: '/_emulator/sandboxes/w1', headers: ADMIN })).body.lastUsedAt).toBe(before);
    await call(a, { url: `/sandbox/w1${CLOUD}/grid/101`, headers: DEMO });
    expect((await call(a, { url: '/_emulator/sandboxes/w1', headers: ADMIN })).body.lastUsedAt).toBeGreaterThan(before);
  });
});

describe('without ADMIN_TOKEN', () => {
  it('a request refused for its X-Auth-Token makes no sandbox; one that needs no credential does', async () => {
    const a = await demo({ maxSandboxes: 2 });
    for (let i = 0; i < 10; i++) {
      expect((await call(a, { url: `/sandbox/t${i}${CLOUD}/grid/101` })).status).toBe(401);
      expect((await call(a, { url: `/sandbox/t${i}${CLOUD}/grid/101`, headers: { 'x-auth-token': 'nope' } })).status).toBe(401);
    }
    expect(await names(a)).toEqual([]);
    expect((await call(a, { url: '/sandbox/h1/_emulator/health' })).status).toBe(200);
    expect(await names(a)).toEqual(['h1']);
  });

  it('past MAX_SANDBOXES, every route answers the documented 503, the health check included', async () => {
    const a = await demo({ maxSandboxes: 1 });
    expect((await call(a, { url: `/sandbox/w1${CLOUD}/grid/101`, headers: DEMO })).status).toBe(200);
    const message =
      "cannot create sandbox 'w2': 1 sandboxes exist and MAX_SANDBOXES is 1; delete some (DELETE /_emulator/sandboxes/<name>) or raise MAX_SANDBOXES";
    for (const url of ['/sandbox/w2/_emulator/health', `/sandbox/w2${CLOUD}/grid/101`, '/sandbox/w2/_emulator/clock', '/sandbox/w2/_emulator/ui/']) {
      const res = await call(a, { url, headers: DEMO });
      expect(res.status, url).toBe(503);
      expect(res.body, url).toEqual({ statusCode: 503, error: 'Service Unavailable', message });
    }
  });
});

describe('SANDBOXES=explicit with ADMIN_TOKEN: names cannot be probed without credentials', () => {
  it('an existing and an unknown name answer the same 401', async () => {
    const a = await demo({ sandboxes: 'explicit', adminToken: 's3cret' });
    expect((await call(a, { method: 'PUT', url: '/_emulator/sandboxes/exists', headers: ADMIN })).status).toBe(201);
    const probes = (name: string): InjectOptions[] => [
      { url: `/sandbox/${name}/_emulator/clock` },
      { url: `/sandbox/${name}/_emulator/clock`, headers: { authorization: 'Bearer guess' } },
      { url: `/sandbox/${name}${CLOUD}/grid/101` },
      { url: `/sandbox/${name}${CLOUD}/grid/101`, headers: { 'x-auth-token': 'guess' } },
    ];
    const known = probes('exists');
    const unknown = probes('unknown');
    for (let i = 0; i < known.length; i++) {
      const k = await call(a, known[i]);
      const u = await call(a, unknown[i]);
      expect(k.status).toBe(401);
      expect({ status: u.status, body: u.body, challenge: u.headers['www-authenticate'] }).toEqual({ status: k.status, body: k.body, challenge: k.headers['www-authenticate'] });
    }
    // With credentials, the unknown name is a 404 saying how to create it.
    expect((await call(a, { url: '/sandbox/unknown/_emulator/clock', headers: ADMIN })).status).toBe(404);
    expect((await call(a, { url: `/sandbox/unknown${CLOUD}/grid/101`, headers: DEMO })).status).toBe(404);
  });
});
