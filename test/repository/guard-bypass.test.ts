import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import type { ManualClock } from '../../src/core/clock.js';
import { parseState, type State } from '../../src/state.js';
import { T0, TEST_TOKEN, TEST_USER, authSeed, makeApp, PATHS } from '../helpers/app.js';
import { canonicalPath } from '../../src/http/areas.js';
import { template } from '../provisioning/seed.js';
import { raw, type RawResponse } from '../helpers/raw-http.js';

/**
 * No spelling of a protected path, and no kind of bad token, reaches a protected route. The
 * requests go over a real socket with the request target written byte for byte: inject()
 * and fetch() normalise a URL (dot segments, absolute form, escapes) before a server sees it.
 */

const { CLOUD, REPO, ANNOTATIONS, ALERTS } = PATHS;
const IDLE_MS = 60_000;
const RUNS = Number(process.env.HOSTILE_RUNS ?? 300);

const SERVER = template();
const seed = (): State =>
  parseState(
    {
      ...authSeed(),
      tokens: [
        ...authSeed().tokens,
        // Last used longer ago than the idle timeout: expired from the start.
        { token: 'stale-token', userName: TEST_USER.userName, lastUsedAt: T0 - IDLE_MS - 1 },
        { token: 'logged-out-token', userName: TEST_USER.userName },
      ],
      grids: [{ id: 101, name: 'Grid', servers: [SERVER], startedAgoMs: 3_600_000 }],
      rsdbs: [{ id: 7, name: 'Results DB', cloudType: 'EC2', instanceSize: 'EC2 Results Database (Large)', launchCPAName: 'SOASTA EC2', region: 'us-east-1', zone: 'us-east-1a' }],
      environments: [
        { id: 9, name: 'Env', databaseInstance: { cloudType: 'EC2', instanceSize: 'db' }, mainInstance: { cloudType: 'EC2', instanceSize: 'main' } },
      ],
      domains: [{ id: 12345, name: 'www.example.com' }],
      annotations: [{ id: 500, title: 'Release', text: 'Release 1', start: 1_631_282_415_000, domainIds: [12345], user: TEST_USER.userName }],
      alerts: [{ uid: 'alert-1', name: 'Checkout errors' }],
    },
    'auth-bypass seed',
  );

/** Every request a client may make to a protected route, with ids that exist. */
const PROTECTED: Array<{ method: string; path: string; body?: string }> = [
  { method: 'GET', path: `${CLOUD}/grid/` },
  { method: 'GET', path: `${CLOUD}/grid/101` },
  { method: 'POST', path: `${CLOUD}/grid/101/action`, body: '{"action":"terminate"}' },
  { method: 'GET', path: `${CLOUD}/cloudserver/` },
  { method: 'GET', path: `${CLOUD}/cloudserver/58201` },
  { method: 'POST', path: `${CLOUD}/cloudserver/58201/action`, body: '{"action":"restart"}' },
  { method: 'GET', path: `${CLOUD}/rsdb/7` },
  { method: 'POST', path: `${CLOUD}/rsdb/7/action`, body: '{"action":"start"}' },
  { method: 'GET', path: `${CLOUD}/environment/9/` },
  { method: 'POST', path: `${CLOUD}/environment/9/action`, body: '{"action":"start"}' },
  { method: 'GET', path: `${REPO}/Objects/grid` },
  { method: 'GET', path: `${REPO}/Objects/domain?name=www.example.com` },
  { method: 'POST', path: ANNOTATIONS, body: '{"title":"t","start":1,"text":"x"}' },
  { method: 'GET', path: `${ANNOTATIONS}?date-start=0&domain=12345` },
  { method: 'GET', path: `${ANNOTATIONS}/500` },
  { method: 'PUT', path: `${ANNOTATIONS}/500`, body: '{"text":"changed"}' },
  { method: 'DELETE', path: `${ANNOTATIONS}/500` },
  // A method the route does not allow, and a path no route has, under protected prefixes.
  { method: 'DELETE', path: `${CLOUD}/grid/101` },
  { method: 'GET', path: `${CLOUD}/nothing/here` },
];

function expect401(res: RawResponse, what: string): void {
  expect(res.status, `${what} -> ${res.status} ${res.body.slice(0, 200)}`).toBe(401);
  expect(JSON.parse(res.body), what).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
}

let app: FastifyInstance | undefined;
let clock: ManualClock;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listening(config: Partial<Config> = {}): Promise<number> {
  ({ app, clock } = await makeApp(seed(), { tokenIdleTimeoutMs: IDLE_MS, rateLimitMax: 1_000_000, ...config }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const out = await app.inject({ method: 'DELETE', url: `${REPO}/Tokens/logged-out-token` });
  expect(out.statusCode).toBe(204);
  return (app.server.address() as net.AddressInfo).port;
}

/** Ways of sending a token that is not a valid one. */
const BAD_TOKENS: Array<[string, Record<string, string>]> = [
  ['no token', {}],
  ['an empty token', { 'X-Auth-Token': '' }],
  ['an unknown token', { 'X-Auth-Token': 'not-a-token' }],
  ['the token in another case', { 'X-Auth-Token': TEST_TOKEN.toUpperCase() }],
  ['the token with a suffix', { 'X-Auth-Token': `${TEST_TOKEN}x` }],
  ['the token twice in one header', { 'X-Auth-Token': `${TEST_TOKEN}, ${TEST_TOKEN}` }],
  ['an expired token', { 'X-Auth-Token': 'stale-token' }],
  ['a logged-out token', { 'X-Auth-Token': 'logged-out-token' }],
  ['the token as a Bearer', { Authorization: `Bearer ${TEST_TOKEN}` }],
  ['the token in a cookie', { Cookie: `X-Auth-Token=${TEST_TOKEN}` }],
  ['the token under another name', { 'X-Auth': TEST_TOKEN }],
  ['the API token instead of a session token', { 'X-Auth-Token': TEST_USER.apiToken }],
];

describe('the X-Auth-Token guard', () => {
  it('refuses every protected route, whatever is wrong with the token, and lets the valid token through', async () => {
    const port = await listening();
    for (const route of PROTECTED) {
      for (const [why, headers] of BAD_TOKENS) {
        expect401(await raw(port, route.method, route.path, headers, route.body), `${route.method} ${route.path} with ${why}`);
      }
      // A query parameter is no header, however it is named.
      const sep = route.path.includes('?') ? '&' : '?';
      expect401(await raw(port, route.method, `${route.path}${sep}X-Auth-Token=${TEST_TOKEN}`, {}, route.body), `${route.path} with the token in the query`);
    }
    // The same requests with the valid token get past the guard (this test refuses for the right reason).
    for (const route of PROTECTED) {
      const res = await raw(port, route.method, route.path, { 'X-Auth-Token': TEST_TOKEN }, route.body);
      expect(res.status, `${route.method} ${route.path} with the valid token: ${res.body.slice(0, 200)}`).not.toBe(401);
    }
  });

  it('refuses a token once it has been idle for the timeout, and after log-out', async () => {
    const port = await listening();
    const login = await raw(port, 'PUT', `${REPO}/Tokens`, {}, JSON.stringify({ userName: TEST_USER.userName, password: TEST_USER.password }));
    const { token } = JSON.parse(login.body) as { token: string };
    const read = () => raw(port, 'GET', `${CLOUD}/grid/101`, { 'X-Auth-Token': token });
    expect((await read()).status).toBe(200);
    clock.advance(IDLE_MS);
    expect401(await read(), 'after the idle timeout');
    const again = JSON.parse((await raw(port, 'PUT', `${REPO}/Tokens`, {}, JSON.stringify({ apiToken: TEST_USER.apiToken }))).body) as { token: string };
    expect((await raw(port, 'DELETE', `${REPO}/Tokens/${again.token}`)).status).toBe(204);
    expect401(await raw(port, 'GET', `${CLOUD}/grid/101`, { 'X-Auth-Token': again.token }), 'after log-out');
  });

  it('refuses a token whose user an import removed', async () => {
    const port = await listening();
    const state = { ...seed(), users: [{ userName: 'other@example.com', password: 'x', tenant: 'Default' }], tokens: [] };
    const put = await raw(port, 'PUT', '/_emulator/state', {}, JSON.stringify(state));
    expect(put.status).toBe(200);
    expect401(await raw(port, 'GET', `${CLOUD}/grid/101`, { 'X-Auth-Token': TEST_TOKEN }), 'after the import');
  });
});

interface Spelling {
  caseFlips: number[];
  encode: Array<[number, boolean]>;
  doubleSlashes: number[];
  trailing: string;
  absolute: string;
  encodeSlash: boolean;
  dot: string | undefined;
}

/** Spellings of a path: each keeps the meaning for a lenient router, or makes it a path no route has. */
// Most draws change little, so that many spellings still reach a route with a valid token.
const sometimes = <T>(arbitrary: fc.Arbitrary<T[]>) => fc.oneof({ weight: 2, arbitrary: fc.constant<T[]>([]) }, { weight: 1, arbitrary });
const spelling: fc.Arbitrary<Spelling> = fc.record({
  caseFlips: sometimes(fc.array(fc.nat(), { minLength: 1, maxLength: 3 })),
  encode: fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 8 }),
  doubleSlashes: sometimes(fc.array(fc.nat(), { minLength: 1, maxLength: 3 })),
  trailing: fc.constantFrom('', '', '', '/', '//', '/./', ';jsessionid=1', '#frag', '%20', '%00', '.'),
  absolute: fc.constantFrom('', '', '', 'http://127.0.0.1', 'HTTP://example.com:8080', 'https://h', 'http://user@h'),
  encodeSlash: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  dot: fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('/./', '/x/../', '/%2e/', '/%2E%2E/') },
  ),
});

function respell(path: string, s: Spelling): string {
  const [pathPart, query] = path.split('?');
  const chars = [...pathPart];
  const letters = chars.map((c, i) => (/[a-z]/i.test(c) ? i : -1)).filter((i) => i >= 0);
  for (const n of s.caseFlips) {
    const i = letters[n % letters.length];
    chars[i] = chars[i] === chars[i].toLowerCase() ? chars[i].toUpperCase() : chars[i].toLowerCase();
  }
  for (const [n, upper] of s.encode) {
    // The leading slash stays: without it the request line is no request target at all.
    const i = 1 + (n % (chars.length - 1));
    if (chars[i].startsWith('%') || (chars[i] === '/' && !s.encodeSlash)) continue;
    const hex = chars[i].charCodeAt(0).toString(16).padStart(2, '0');
    chars[i] = `%${upper ? hex.toUpperCase() : hex}`;
  }
  const slashes = chars.map((c, i) => (c === '/' ? i : -1)).filter((i) => i >= 0);
  for (const n of s.doubleSlashes) chars[slashes[n % slashes.length]] = '//';
  if (s.dot !== undefined) chars[slashes[1 % slashes.length]] = s.dot;
  return `${s.absolute}${chars.join('')}${s.trailing}${query !== undefined ? `?${query}` : ''}`;
}

describe('no spelling of a protected path gets past a guard', () => {
  it('answers 401 to every spelling that reaches a route with a valid token (case, escapes, slashes, dots, absolute form)', async () => {
    const port = await listening();
    let reached = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROTECTED), spelling, async (route, s) => {
        const target = respell(route.path, s);
        (app as FastifyInstance).world.reset();
        const withToken = await raw(port, route.method, target, { 'X-Auth-Token': TEST_TOKEN }, route.body);
        (app as FastifyInstance).world.reset();
        const without = await raw(port, route.method, target, {}, route.body);
        const what = `${route.method} ${target}: with token ${withToken.status}, without ${without.status} ${without.body.slice(0, 200)}`;
        // Nothing is served without a token, whatever the spelling.
        expect(without.status >= 200 && without.status < 300, what).toBe(false);
        // A spelling that routes somewhere (anything but 404 with the token) is refused with 401.
        // (A target the HTTP parser or the router cannot read is refused before any route.)
        const unroutable = withToken.status === 404 || (withToken.status === 400 && /not valid|Client Error/.test(withToken.body));
        if (!unroutable) {
          reached++;
          expect401(without, what);
        }
      }),
      replayable({ numRuns: RUNS }),
    );
    // Enough of the spellings did reach a route for the property to mean something.
    expect(reached).toBeGreaterThan(RUNS / 10);
  });

  it('answers 401 on the alert calls, whatever the spelling, when ALERTS_REQUIRE_TOKEN is set', async () => {
    const port = await listening({ alertsRequireToken: true });
    for (const path of [`${ALERTS}/alert-1/fire`, `${ALERTS}/alert-1/clear`]) {
      const variants = [path, path.toUpperCase(), `${path}/`, path.replace(/\//g, '//'), path.replace('alerts', 'al%65rts'), `http://h${path}`];
      for (const target of variants) {
        for (const [why, headers] of BAD_TOKENS) expect401(await raw(port, 'POST', target, headers), `${target} with ${why}`);
      }
      expect((await raw(port, 'POST', path, { 'X-Auth-Token': TEST_TOKEN })).status).toBe(204);
    }
  });

  it('answers 401 on the control API, whatever the spelling, when ADMIN_TOKEN is set', async () => {
    const port = await listening({ adminToken: 'admin-secret' });
    for (const [method, path] of [['GET', '/_emulator/state'], ['POST', '/_emulator/reset'], ['GET', '/_emulator/journal'], ['PUT', '/_emulator/clock']]) {
      for (const target of [path, path.toUpperCase(), `${path}/`, `/${path}`, path.replace('_emulator', '%5Femulator'), path.replace('emulator', 'EMULATOR'), `http://h${path}`]) {
        const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer wrong' }, { Authorization: 'admin-secret' }, { 'X-Auth-Token': TEST_TOKEN }];
        for (const headers of attempts) {
          const res = await raw(port, method, target, headers, method === 'PUT' ? '{"scale":2}' : undefined);
          expect401(res, `${method} ${target} ${JSON.stringify(headers)}`);
        }
      }
      const ok = await raw(port, method, path, { Authorization: 'Bearer admin-secret' }, method === 'PUT' ? '{"scale":2}' : undefined);
      expect(ok.status, `${method} ${path} with the admin token`).toBe(200);
    }
  });
});

describe('canonicalPath', () => {
  /** The definition, step by step; canonicalPath skips the steps a path cannot need. */
  function reference(url: string): string | undefined {
    let path = url.split(/[?#]/)[0].replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
    try {
      path = decodeURIComponent(path);
    } catch {
      // Undecodable: refused, never guessed at.
      return undefined;
    }
    return path.toLowerCase().replace(/\/{2,}/g, '/').replace(/\/+$/, '');
  }

  it('agrees with its definition on any spelling', () => {
    const piece = fc.constantFrom('/', '//', '/Concerto', 'services', '%2F', '%2f%2F', '%zz', '%', '?', '?a=/b//', 'http://h', 'HTTPS://x:1', '.', '..', ';p=1', 'Grid', '%41', '#f', ':', 'é', '%C3%A9');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('')), (url) => {
        expect(canonicalPath(url)).toBe(reference(url));
      }),
      replayable({ numRuns: RUNS * 10 }),
    );
  });
});

describe('the open calls stay open', () => {
  it('logs in and out, answers health, and fires and clears alerts without a token', async () => {
    const port = await listening();
    const login = await raw(port, 'PUT', `${REPO}/Tokens`, {}, JSON.stringify({ userName: TEST_USER.userName, password: TEST_USER.password }));
    expect(login.status).toBe(200);
    expect((await raw(port, 'DELETE', `${REPO}/Tokens/${(JSON.parse(login.body) as { token: string }).token}`)).status).toBe(204);
    expect((await raw(port, 'GET', '/_emulator/health')).status).toBe(200);
    expect((await raw(port, 'POST', `${ALERTS}/alert-1/fire`)).status).toBe(204);
    expect((await raw(port, 'POST', `${ALERTS}/alert-1/clear`)).status).toBe(204);
  });
});
