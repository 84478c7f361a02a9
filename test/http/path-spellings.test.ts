import { afterEach, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { parseState, type State } from '../../src/state.js';
import { spellings } from '../../scripts/path-corpus.mjs';
import { TEST_TOKEN, authSeed, makeApp } from '../helpers/app.js';
import { raw } from '../helpers/raw-http.js';
import { template } from '../provisioning/seed.js';

/**
 * An attacker's corpus of path spellings (escapes in both hex cases, fragments and malformed
 * escapes after the path, dot segments, repeated slashes, case, the absolute form) against
 * every protected operation of the OpenAPI document, over a real socket, with and without
 * ADMIN_TOKEN: no spelling reaches a handler without its credential.
 */

/**
 * Spellings tried per operation: a sample of the whole corpus (`npm run soak` sends all of it,
 * its `paths` part). The corpus deals its families out in rounds, so its first 8 spellings
 * hold one of each family; the rest of the sample is spread evenly over the remainder, so
 * escapes and flips deep in the path are tried too. PATH_CORPUS_PER_OPERATION=200 runs all.
 */
const PER_OPERATION = Number(process.env.PATH_CORPUS_PER_OPERATION ?? 24);
const FULL_CORPUS = 200;

function sampled(path: string): string[] {
  const all = spellings(path, FULL_CORPUS);
  if (PER_OPERATION >= all.length) return all;
  const head = all.slice(0, Math.min(8, PER_OPERATION));
  const rest = all.slice(head.length);
  const more = PER_OPERATION - head.length;
  return [...head, ...Array.from({ length: more }, (_, i) => rest[Math.floor((i * rest.length) / more)])];
}

const ADMIN = 'admin-secret';

const seed = (): State =>
  parseState(
    {
      ...authSeed(),
      grids: [{ id: 101, name: 'Grid', servers: [template()], startedAgoMs: 3_600_000 }],
      rsdbs: [{ id: 7, name: 'Results DB', cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a' }],
      environments: [{ id: 9, name: 'Env', databaseInstance: { cloudType: 'EC2', instanceSize: 'db' }, mainInstance: { cloudType: 'EC2', instanceSize: 'main' } }],
      domains: [{ id: 12345, name: 'www.example.com' }],
      annotations: [{ id: 500, title: 'Release', text: 'Release 1', start: 1_631_282_415_000, domainIds: [12345], user: 'tester@example.com' }],
      alerts: [{ uid: 'alert-1', name: 'Checkout errors' }],
    },
    'path-spelling seed',
  );

/** A path of the OpenAPI document with its parameters filled in with ids that exist. */
function concrete(path: string): string {
  return path
    .replace('{kind}/{id}', 'grid/101')
    .replace(/\/grid\/\{id\}/, '/grid/101')
    .replace(/\/cloudserver\/\{id\}/, '/cloudserver/58201')
    .replace(/\/rsdb\/\{id\}/, '/rsdb/7')
    .replace(/\/environment\/\{id\}/, '/environment/9')
    .replace(/annotations\/v1\/\{id\}/, 'annotations/v1/500')
    .replace('{type}', 'grid')
    .replace('{uid}', 'alert-1')
    .replace('{id}', 'fault-1');
}

interface Operation {
  method: string;
  path: string;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A listening app that records every request that got as far as a route's handler. */
async function listening(config: Partial<Config>): Promise<{ port: number; reached: string[]; operations: Operation[] }> {
  ({ app } = await makeApp(seed(), { rateLimitMax: 1_000_000, ...config }));
  const reached: string[] = [];
  // preHandler runs only once every onRequest hook (the guards among them) let the request on.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.is404) reached.push(`${request.method} ${request.url}`);
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const doc = app.swagger() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const operations: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) if (op.security?.length) operations.push({ method: method.toUpperCase(), path: concrete(path) });
  }
  return { port: (app.server.address() as AddressInfo).port, reached, operations };
}

/**
 * `prefix`: the operations under `/sandbox/<name>` instead, the spellings varying the whole
 * target, prefix included; the state checked is that sandbox's.
 */
async function attack(config: Partial<Config>, credential: Record<string, string>, prefix = ''): Promise<void> {
  const { port, reached, operations } = await listening(config);
  const world = () => (prefix ? (app as FastifyInstance).sandboxes.resolve(prefix.split('/')[2]) : (app as FastifyInstance).world);
  const before = world().exportState();
  let requests = 0;
  for (const { method, path } of operations) {
    for (const target of sampled(`${prefix}${path}`)) {
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined;
      const res = await raw(port, method, target, {}, body);
      requests++;
      const what = `${method} ${target} -> ${res.status} ${res.body.slice(0, 160)}`;
      expect(reached, what).toEqual([]);
      expect([400, 401, 404], what).toContain(res.status);
    }
  }
  // Nothing was started, changed or deleted by any of them.
  expect(world().exportState()).toEqual(before);
  expect(requests).toBeGreaterThanOrEqual(operations.length * Math.min(PER_OPERATION, 20));

  // The same corpus with the credential does reach the handlers: the refusals above were the
  // guard's, not spellings that route nowhere.
  let routed = 0;
  for (const { method, path } of operations) {
    for (const target of sampled(`${prefix}${path}`)) {
      const before = reached.length;
      await raw(port, method, target, credential, method === 'GET' || method === 'DELETE' ? undefined : '{}');
      // Only a request that reached a handler can have changed the world.
      if (reached.length > before) {
        routed++;
        world().reset();
      }
    }
  }
  // (Many spellings route nowhere at all: a flipped case, an encoded '/'.)
  expect(routed).toBeGreaterThan(requests / 6);
}

describe('no spelling of a protected path reaches a handler without its credential', () => {
  it('the reported bypass: an escaped character and a malformed escape in a fragment', async () => {
    const { port, reached } = await listening({ adminToken: ADMIN });
    for (const target of ['/%5Femulator/state#%zz', '/_emulator/state#%zz', '/%5femulator/state#%', '/%5Femulator/state?%zz#%zz']) {
      const res = await raw(port, 'GET', target);
      expect(res.status, `${target}: ${res.body}`).toBe(401);
    }
    const put = await raw(port, 'PUT', '/%5Femulator/state#%zz', {}, '{}');
    expect(put.status).toBe(401);
    const start = await raw(port, 'POST', '/concerto/services/rest/CloudService/v1/grid/10%31/action#%zz', {}, '{"action":"terminate"}');
    expect(start.status).toBe(401);
    const del = await raw(port, 'DELETE', '/concerto/mpulse/api/annotations/v%31/500#%zz');
    expect(del.status).toBe(401);
    expect(reached).toEqual([]);
    // With the credential the same spelling is the same route.
    const ok = await raw(port, 'GET', '/%5Femulator/state#%zz', { Authorization: `Bearer ${ADMIN}` });
    expect(ok.status).toBe(200);
  });

  it('with ADMIN_TOKEN and ALERTS_REQUIRE_TOKEN: every token, alert and control operation', async () => {
    await attack({ adminToken: ADMIN, alertsRequireToken: true }, { 'X-Auth-Token': TEST_TOKEN, Authorization: `Bearer ${ADMIN}` });
  }, 60_000);

  it('under a /sandbox/<name> prefix, with ADMIN_TOKEN: every token, alert and control operation', async () => {
    await attack({ adminToken: ADMIN, alertsRequireToken: true }, { 'X-Auth-Token': TEST_TOKEN, Authorization: `Bearer ${ADMIN}` }, '/sandbox/w1');
  }, 60_000);

  it('without ADMIN_TOKEN: every token operation', async () => {
    await attack({}, { 'X-Auth-Token': TEST_TOKEN });
  }, 60_000);
});
