import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import net from 'node:net';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { AUTH, TEST_TOKEN, authSeed, makeApp, PATHS } from '../helpers/app.js';
import { template } from '../provisioning/seed.js';
import { parseState, type State } from '../../src/state.js';

/**
 * Hostile and broken input against every route of the OpenAPI document: thousands of
 * generated requests, each of which must get a status the interface documents, with the JSON
 * error body when it fails; never a 500, never a crash, never a polluted prototype.
 */

const { CLOUD, REPO, ANNOTATIONS, ALERTS, CONTROL } = PATHS;
/** Small, so that an oversized body costs little to build and send. */
const BODY_LIMIT = 4096;
const RUNS = Number(process.env.HOSTILE_RUNS ?? 300);

const SERVER = template();
const seed = (): State => parseState({
  ...authSeed(),
  grids: [
    { id: 101, name: 'Started grid', servers: [{ ...SERVER, count: 2 }], startedAgoMs: 3_600_000 },
    { id: 102, name: 'Loaded grid', servers: [SERVER] },
  ],
  rsdbs: [{ id: 7, name: 'Results DB', cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a' }],
  environments: [
    {
      id: 9,
      name: 'Test environment',
      databaseInstance: { cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)' },
      mainInstance: { cloudType: 'EC2', instanceSize: 'EC2 Main (Large)' },
    },
  ],
  domains: [
    { id: 12345, name: 'www.example.com' },
    { id: 12346, name: 'shop.example.com' },
  ],
  annotations: [
    { id: 500, title: 'Release', text: 'Release 1', start: 1_631_282_415_000, domainIds: [12345], user: 'tester@example.com' },
    { id: 501, title: 'Outage', text: 'CDN outage', start: 1_631_300_000_000, end: 1_631_310_000_000, user: 'tester@example.com' },
  ],
  alerts: [
    { uid: 'enabled-alert', name: 'Checkout errors' },
    { uid: 'disabled-alert', name: 'Disabled', enabled: false },
  ],
}, 'hostile seed');

/** The statuses each interface documents (the specification's error tables and the behaviour reference), plus 413 for an oversized body. */
function allowedStatuses(path: string): ReadonlySet<number> {
  // Spelled the way the router reads it: without case, and with repeated slashes as one.
  const p = path.toLowerCase().replace(/\/{2,}/g, '/');
  if (p.startsWith('/concerto/services/rest/cloudservice')) return new Set([200, 202, 204, 400, 401, 404, 405, 413]);
  // 409: a taken name, an object another interface owns; 503: past REPOSITORY_MAX_BYTES; 507: past the process's bound.
  if (p.startsWith('/concerto/services/rest/repositoryservice')) return new Set([200, 204, 400, 401, 404, 405, 409, 413, 503, 507]);
  if (p.startsWith('/concerto/mpulse/api/v2')) return new Set([200, 204, 400, 401, 404, 405, 413, 429]);
  // 507: past a byte or count bound of what requests add (docs/security.md, "Stored data bounds").
  if (p.startsWith('/concerto/mpulse/api/annotations')) return new Set([200, 204, 400, 401, 404, 405, 413, 415, 429, 507]);
  if (p.startsWith('/concerto/mpulse/api/alerts')) return new Set([204, 400, 401, 404, 405, 409, 413, 429, 507]);
  return new Set([200, 201, 204, 400, 401, 404, 405, 409, 413, 415]);
}

/** Property names of the built-in prototypes before any request: a request must never add one. */
const PROTOTYPES = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype, String: String.prototype };
const pristine = Object.fromEntries(Object.entries(PROTOTYPES).map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()]));

function expectNoPollution(): void {
  for (const [name, proto] of Object.entries(PROTOTYPES)) {
    expect(Reflect.ownKeys(proto).map(String).sort(), `${name}.prototype changed`).toEqual(pristine[name]);
  }
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'isAdmin', 'admin', 'x', 'a']) expect(probe[key], `({}).${key}`).toBeUndefined();
}

/** The rules every answer must keep, whatever was sent. */
function expectWellFormed(request: InjectOptions, res: LightMyRequestResponse): void {
  const what = `${request.method} ${String(request.url).slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
  // A staged failure of the fault-injection API is the one 5xx that is not a bug.
  if (res.headers['x-emulator-fault'] === undefined) {
    expect(res.statusCode, what).toBeLessThan(500);
    expect([...allowedStatuses(String(request.url).split('?')[0])], what).toContain(res.statusCode);
  }
  if (res.statusCode >= 400 && request.method !== 'HEAD' && res.headers['x-emulator-fault'] === undefined) {
    expect(String(res.headers['content-type']), what).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    // A refused state import also lists its problems (docs/control-api.md), beside the usual three.
    const keys = Object.keys(body).sort();
    if (String(request.url).split('?')[0] === '/_emulator/state' && keys.includes('problems')) expect(keys, what).toEqual(['error', 'message', 'problems', 'statusCode', 'unlisted']);
    else expect(keys, what).toEqual(['error', 'message', 'statusCode']);
    expect(body.statusCode, what).toBe(res.statusCode);
    expect(typeof body.error, what).toBe('string');
    expect(typeof body.message === 'string' && body.message.length > 0, what).toBe(true);
  }
}

interface RouteInfo {
  method: string;
  /** The document's path, with {param} placeholders. */
  path: string;
  hasBody: boolean;
}

/** Every documented route, read from the OpenAPI document the app serves. */
async function documentedRoutes(app: FastifyInstance): Promise<RouteInfo[]> {
  await app.ready();
  const doc = app.swagger() as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, hasBody: op.requestBody !== undefined || method === 'post' || method === 'put' })),
  );
}

/** A body the route accepts, so that mutations of it reach deep into the handler. */
const VALID_BODIES: Record<string, unknown> = {
  [`PUT ${REPO}/Tokens`]: { userName: 'tester@example.com', password: 'pw' },
  [`POST ${CLOUD}/grid/{id}/action`]: { action: 'start' },
  [`POST ${CLOUD}/cloudserver/{id}/action`]: { action: 'restart' },
  [`POST ${CLOUD}/rsdb/{id}/action`]: { action: 'start' },
  [`POST ${CLOUD}/environment/{id}/action`]: { action: 'start' },
  [`POST ${ANNOTATIONS}/`]: { title: 'Deploy', start: 1_631_282_415_000, end: 1_631_282_416_000, text: 'ok', domainIds: [12345] },
  [`POST ${ANNOTATIONS}`]: { title: 'Deploy', start: 1_631_282_415_000, end: 1_631_282_416_000, text: 'ok', domainIds: [12345] },
  [`PUT ${ANNOTATIONS}/{id}`]: { text: 'changed', end: 1_631_282_500_000 },
  [`POST ${ALERTS}/{uid}/fire`]: { message: 'down', subject: 'Alert' },
  [`POST ${CONTROL}/clock/advance`]: { ms: 1000 },
  [`PUT ${CONTROL}/clock`]: { scale: 2 },
  [`POST ${CONTROL}/faults`]: { path: '/nothing/*', action: { status: 503 }, times: 1 },
};

/** Ids worth trying in a path: real ones, near misses, and nonsense. */
const KNOWN_IDS = ['101', '102', '58201', '7', '9', '500', '501', 'enabled-alert', 'disabled-alert', TEST_TOKEN, 'grid', 'rsdb', 'domain'];
const ODD_SEGMENTS = [
  '0', '-1', '1.5', '1e3', '0x10', '+7', '007', ' 7', '9007199254740993', '99999999999999999999999999', '1'.repeat(400),
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  '%00', '%2e%2e', '..', '.', '%2F', 'a%2Fb', '%', '%zz', '%E0%A4%A', '%C0%AF', '%ff', '%u0041', 'null', 'undefined', 'NaN', 'Infinity',
  '%F0%9F%92%A9', 'é', '%3Cscript%3E', '%22%27', '*', '%20', ';', '%3B', '%3F', '%23', '%0d%0a', '$%7Bjndi%7D',
];

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_IDS) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s) || 'x') },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map((s) => encodeURIComponent(s) || 'y') },
);

/** Hostile scalar values: huge and tiny numbers, wrong types, long and odd strings. */
const hostileScalar = fc.oneof(
  fc.constantFrom<unknown>(
    0, -1, 1.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e21, 1e308, -1e308, 5e-324, 8.64e15, 8.64e15 + 1,
    '', ' ', '0', '1631282415000', 'start', 'terminate', 'restart', 'START', 'true', 'null', '__proto__', '\u0000', '\ud800', 'é'.repeat(50),
    true, false, null, [], {}, [null], [1, 'x'], [12345, 12345], { $ref: '#' },
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

/** Keys a client should never send, and the keys the routes do know (so they get wrong values). */
const KEYS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'polluted',
  'action', 'title', 'start', 'end', 'text', 'domainIds', 'message', 'subject', 'userName', 'password', 'apiToken', 'tenant',
  'ms', 'to', 'until', 'kind', 'id', 'scale', 'frozen', 'path', 'method', 'status', 'times', 'outcome', 'enabled',
];

/**
 * JSON text, written by hand so that keys such as "__proto__" appear literally (an object
 * literal in this file would set a prototype instead of a key).
 */
type Tree = { scalar: unknown } | { array: Tree[] } | { object: Array<[string, Tree]> };
const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileScalar.map((scalar) => ({ scalar })) },
    { weight: 1, arbitrary: fc.array(tie('node'), { maxLength: 4 }).map((array) => ({ array })) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 10 })), tie('node')), { maxLength: 5 })
        .map((object) => ({ object })),
    },
  ),
})).node;

function toJson(t: Tree): string {
  if ('scalar' in t) return JSON.stringify(t.scalar) ?? 'null';
  if ('array' in t) return `[${t.array.map(toJson).join(',')}]`;
  return `{${t.object.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
}

/** A valid body with one field removed, replaced by a hostile value, or joined by a hostile key. */
function mutated(valid: unknown): fc.Arbitrary<string> {
  const entries = Object.entries((valid ?? {}) as Record<string, unknown>).map(([k, v]): [string, Tree] => [k, { scalar: v }]);
  return fc.oneof(
    fc.nat({ max: Math.max(0, entries.length - 1) }).map((i) => toJson({ object: entries.filter((_, j) => j !== i) })),
    fc.tuple(fc.nat({ max: Math.max(0, entries.length - 1) }), tree).map(([i, value]) =>
      toJson({ object: entries.map(([k, v], j): [string, Tree] => [k, j === i ? value : v]) }),
    ),
    fc.tuple(fc.constantFrom(...KEYS), tree).map(([key, value]) => toJson({ object: [...entries, [key, value]] })),
  );
}

/** Nesting deep enough to break a recursive validator, cloner or serialiser. */
const deep = fc.tuple(fc.integer({ min: 100, max: 1500 }), fc.constantFrom('[', '{"a":', '{"__proto__":', '{"title":')).map(([depth, open]) => {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
});

function fillPath(template: string, values: string[]): string {
  let i = 0;
  return template.replace(/\{[^}]+\}/g, () => values[i++ % values.length]);
}

const tokenHeader = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>(AUTH) },
  { weight: 1, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.constantFrom('', 'nope', `${TEST_TOKEN} `, TEST_TOKEN.toUpperCase(), 'null', '__proto__').map((t) => ({ 'x-auth-token': t })) },
);

let app: FastifyInstance;
let routes: RouteInfo[];
let bodyRoutes: RouteInfo[];

beforeEach(async () => {
  ({ app } = await makeApp(seed(), { bodyLimitBytes: BODY_LIMIT, rateLimitMax: 1_000_000 }));
  // The event stream answers a stream that does not end, which an injected request would wait
  // for; its bad input is tested in test/control/events.test.ts.
  routes = (await documentedRoutes(app)).filter((r) => r.path !== `${CONTROL}/events`);
  bodyRoutes = routes.filter((r) => r.hasBody);
});
afterEach(async () => app?.close());

/**
 * Every generated request starts from the seed, so that a counterexample replays on its own
 * (an earlier request may have replaced the state, added a fault rule or logged out).
 */
const fromSeed = () => app.world.reset();

async function send(request: InjectOptions): Promise<void> {
  const res = await app.inject(request);
  expectWellFormed(request, res);
  expectNoPollution();
}

async function expectStillServing(): Promise<void> {
  const health = await app.inject({ url: `${CONTROL}/health` });
  expect(health.statusCode).toBe(200);
  const grid = await app.inject({ url: `${CLOUD}/grid/101`, headers: AUTH });
  expect([200, 401]).toContain(grid.statusCode);
}

describe('hostile input, on every documented route', () => {
  it('reads every interface from the OpenAPI document', () => {
    // Guards the guard: an empty or partial route list would make every property below pass.
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      `GET ${CLOUD}/grid/{id}`, `POST ${CLOUD}/grid/{id}/action`, `GET ${CLOUD}/cloudserver/`, `POST ${CLOUD}/environment/{id}/action`,
      `PUT ${REPO}/Tokens`, `GET ${REPO}/Objects/{type}`, `PUT ${ANNOTATIONS}/{id}`, `POST ${ALERTS}/{uid}/fire`, `POST ${CONTROL}/clock/advance`,
    ]) {
      expect(paths.some((p) => p.replace(/\/$/, '') === expected.replace(/\/$/, '')), expected).toBe(true);
    }
    expect(bodyRoutes.length).toBeGreaterThanOrEqual(10);
  });

  it('answers generated JSON bodies (wrong types, missing and extra fields, huge numbers, hostile keys) with a documented status', async () => {
    const body = fc.oneof(tree.map(toJson), deep);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes).chain((route) =>
          fc.record({
            route: fc.constant(route),
            ids: fc.array(segment, { minLength: 1, maxLength: 3 }),
            payload: VALID_BODIES[`${route.method} ${route.path}`] ? fc.oneof(mutated(VALID_BODIES[`${route.method} ${route.path}`]), body) : body,
            headers: tokenHeader,
          }),
        ),
        async ({ route, ids, payload, headers }) => {
          await send({ method: route.method as 'POST', url: fillPath(route.path, ids), payload, headers: { ...headers, 'content-type': 'application/json' } });
        },
      ).beforeEach(fromSeed),
      replayable({ numRuns: RUNS * 2 }),
    );
    await expectStillServing();
  });

  it('answers broken bytes, invalid UTF-8 and wrong content types with a documented status', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
      fc.uint8Array({ minLength: 1, maxLength: 8 }).map((a) => Buffer.concat([Buffer.from('{"title":"'), Buffer.from(a.map((b) => b | 0x80)), Buffer.from('","start":1,"text":"t","action":"start"}')])),
      fc.constantFrom(
        Buffer.from([0xff, 0xfe, 0xfd]),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('{"action":"start"'),
        Buffer.from('{"action":"start"}}'),
        Buffer.from('{"action":"start",}'),
        Buffer.from("{'action':'start'}"),
        Buffer.from('action=start'),
        Buffer.from('null'),
        Buffer.from('"start"'),
        Buffer.from('[]'),
        Buffer.from('\uFEFF{"action":"start"}'),
        Buffer.from('{"a":1e999999}'),
        Buffer.from('{"a":-}'),
        Buffer.from(''),
      ),
    );
    const contentType = fc.option(
      fc.constantFrom(
        'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1', 'application/json;charset=utf-16',
        'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream',
        'application/json-patch+json', 'application/jsonx', 'application/xml', '*/*', 'json', ';', '', 'application/json, text/plain',
      ),
      { nil: undefined },
    );
    const idLists = fc.array(segment, { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes), idLists, bytes, contentType, async (route, ids, payload, type) => {
        await send({
          method: route.method as 'POST',
          url: fillPath(route.path, ids),
          payload,
          headers: { ...AUTH, ...(type !== undefined ? { 'content-type': type } : {}) },
        });
      }).beforeEach(fromSeed),
      replayable({ numRuns: RUNS }),
    );
    await expectStillServing();
  });

  it('answers odd paths, ids, query strings and wrong methods with a documented status', async () => {
    const suffix = fc.constantFrom('', '', '/', '//', '/extra', '/..', '/%2e%2e/%2e%2e', ';jsessionid=1', '.json', '/action', '%00', '%20');
    const query = fc.array(
      fc.tuple(
        fc.constantFrom('date-start', 'date-end', 'domain', 'name', 'limit', 'status', 'method', 'pathPrefix', '__proto__', '__proto__[polluted]', 'constructor[prototype][polluted]', 'a[b]', 'x'),
        fc.oneof(fc.constantFrom('1', '-1', '1.5', '', '12345', '12345,12346', '99999999999999999999', 'abc', '5xx', '__proto__', '%', '%zz'), fc.string({ maxLength: 10 }).map(encodeURIComponent)),
      ),
      { maxLength: 4 },
    ).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));
    const method = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');
    const prefixCase = fc.constantFrom((p: string) => p, (p: string) => p.toLowerCase(), (p: string) => p.toUpperCase(), (p: string) => p.replace(/\//g, '//'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        suffix,
        query,
        method,
        prefixCase,
        tokenHeader,
        fc.option(fc.constantFrom('{"action":"terminate"}', '{}', '[]', 'x'), { nil: undefined }),
        async (route, ids, tail, q, verb, spell, headers, payload) => {
          const url = `${spell(fillPath(route.path, ids))}${tail}${q}`;
          await send({
            method: verb as 'GET',
            url,
            headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
            ...(payload !== undefined && verb !== 'GET' && verb !== 'HEAD' ? { payload } : {}),
          });
        },
      ).beforeEach(fromSeed),
      replayable({ numRuns: RUNS * 2 }),
    );
    await expectStillServing();
  });

  it('answers 413 with the JSON error body to a body larger than the limit, on every route that takes one', async () => {
    const oversized = (n: number) => `{"title":"${'x'.repeat(n)}","start":1,"text":"t","action":"start"}`;
    const tried: string[] = [];
    for (const route of bodyRoutes) {
      // The state import and a sandbox's have a limit of their own, sized for whole exported states.
      if (route.path === `${CONTROL}/state` || route.path.startsWith(`${CONTROL}/sandboxes/`)) continue;
      const request: InjectOptions = {
        method: route.method as 'POST',
        url: fillPath(route.path, ['101']),
        payload: oversized(BODY_LIMIT + 1),
        headers: { ...AUTH, 'content-type': 'application/json' },
      };
      const res = await app.inject(request);
      expectWellFormed(request, res);
      // Anything refused before the body is read (no such route, no token) is refused anyway.
      if (res.statusCode !== 404 && res.statusCode !== 401) {
        expect(res.statusCode, `${route.method} ${route.path}`).toBe(413);
        tried.push(route.path);
      }
    }
    expect(tried.filter((p) => p.startsWith(ANNOTATIONS)).length).toBeGreaterThanOrEqual(2);
    expect(tried.length).toBeGreaterThanOrEqual(8);
    // Size limits hold for any content type and just past the limit, not only far past it.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes.filter((r) => r.path !== `${CONTROL}/state`)),
        fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT * 4 }),
        fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'),
        async (route, size, type) => {
          await send({ method: route.method as 'POST', url: fillPath(route.path, ['101']), payload: 'x'.repeat(size), headers: { ...AUTH, 'content-type': type } });
        },
      ),
      replayable({ numRuns: Math.ceil(RUNS / 3) }),
    );
    await expectStillServing();
  });

  it('survives nesting far deeper than any real body, on every route that takes one', async () => {
    // The default body limit (1 MiB) lets such depths through: deep enough to overflow the
    // stack of anything that walks a value recursively (cloning, validating, serialising).
    await app.close();
    ({ app } = await makeApp(seed(), { rateLimitMax: 1_000_000 }));
    const nest = (depth: number, open: string, close: string, inner = '1') => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
    const wrappers: Array<(depth: number) => string> = [
      (d) => nest(d, '[', ']'),
      (d) => nest(d, '{"a":', '}'),
      (d) => `{"title":${nest(d, '[', ']')},"start":1,"text":"t"}`,
      (d) => `{"action":${nest(d, '{"action":', '}', '"start"')}}`,
      (d) => `{"users":${nest(d, '[', ']')}}`,
      (d) => `{"path":"/x","action":{"status":503,"body":${nest(d, '[', ']')}}}`,
      (d) => `{"message":${nest(d, '[', ']')}}`,
    ];
    for (const route of bodyRoutes) {
      for (const wrap of wrappers) {
        for (const depth of [3_000, 20_000]) {
          app.world.reset();
          await send({ method: route.method as 'POST', url: fillPath(route.path, ['101', 'enabled-alert']), payload: wrap(depth), headers: { ...AUTH, 'content-type': 'application/json' } });
        }
      }
    }
    await expectStillServing();
  });

  it('refuses prototype-poisoning bodies and queries without changing any prototype', async () => {
    const poisons = [
      '{"__proto__":{"polluted":"yes"}}',
      '{"constructor":{"prototype":{"polluted":"yes"}}}',
      '{"title":"t","start":1,"text":"t","__proto__":{"isAdmin":true}}',
      '{"action":"start","__proto__":{"admin":true}}',
      '{"message":"m","constructor":{"prototype":{"x":1}}}',
      '[{"__proto__":{"a":1}}]',
    ];
    for (const route of bodyRoutes) {
      for (const payload of poisons) {
        await send({ method: route.method as 'POST', url: fillPath(route.path, ['101']), payload, headers: { ...AUTH, 'content-type': 'application/json' } });
      }
    }
    for (const q of ['__proto__[polluted]=yes', 'constructor[prototype][polluted]=yes', '__proto__.polluted=yes', 'domain=__proto__']) {
      await send({ url: `${ANNOTATIONS}?${q}`, headers: AUTH });
      await send({ url: `${REPO}/Objects/grid?${q}`, headers: AUTH });
    }
    // Known keys of an annotation are the only ones stored: what comes back has no extra.
    const created = await app.inject({
      method: 'POST',
      url: ANNOTATIONS,
      payload: '{"title":"t","start":1,"text":"t","constructor":{"prototype":{"polluted":"yes"}}}',
      headers: { ...AUTH, 'content-type': 'application/json' },
    });
    expect(created.statusCode).toBe(400);
    expectNoPollution();
  });

  it('answers broken HTTP on a raw socket with the JSON error body, and keeps serving', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as net.AddressInfo).port;
    const send = (data: string | Buffer) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end(data));
        const chunks: Buffer[] = [];
        socket.on('data', (c) => chunks.push(c));
        socket.on('error', reject);
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      });
    const head = (line: string, headers = '') => `${line}\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`;
    const post = `POST ${ANNOTATIONS} HTTP/1.1`;
    const json = 'X-Auth-Token: test-token\r\nContent-Type: application/json\r\n';
    const cases: Array<[string, string | Buffer, number]> = [
      ['garbage instead of a request line', 'HELLO\r\n\r\n', 400],
      ['an unknown method', head('FOO /_emulator/health HTTP/1.1'), 400],
      ['a control character in a header', head('GET /_emulator/health HTTP/1.1', 'X-Request-Id: a\x7fb\r\n'), 400],
      ['headers larger than 16 KiB', head('GET /_emulator/health HTTP/1.1', `X-Big: ${'a'.repeat(20_000)}\r\n`), 431],
      ['a URL larger than 16 KiB', head(`GET /${'a'.repeat(20_000)} HTTP/1.1`), 431],
      ['broken chunked encoding', `${head(post, `${json}Transfer-Encoding: chunked\r\n`)}zz\r\n{}\r\n0\r\n\r\n`, 400],
      ['Content-Length and chunked together', `${head(post, `${json}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n`)}0\r\n\r\n`, 400],
      ['a body shorter than its Content-Length', `${head(post, `${json}Content-Length: 100\r\n`)}{"title":"x"}`, 400],
      ['a body longer than its Content-Length', `${head(post, `${json}Content-Length: 5\r\n`)}{"title":"x","start":1,"text":"t"}`, 400],
    ];
    for (const [what, data, status] of cases) {
      const answer = await send(data);
      expect(answer.split('\r\n')[0], what).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      expect(Object.keys(body).sort(), what).toEqual(['error', 'message', 'statusCode']);
      expect(body.statusCode, what).toBe(status);
    }
    // Bytes that are not ASCII in a header are taken as they come, not a failure.
    const latin1 = await send(Buffer.concat([Buffer.from('GET /_emulator/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: '), Buffer.from([0xff, 0xe9]), Buffer.from('\r\nConnection: close\r\n\r\n')]));
    expect(latin1.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    await expectStillServing();
  });
});
