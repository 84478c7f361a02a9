import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { parseOrigins } from '../../src/http/cors.js';

const OBJECTS = '/concerto/services/rest/RepositoryService/v1/Objects/grid';
const FRONTEND = 'http://localhost:5173';

let app: FastifyInstance;
afterEach(async () => app?.close());

const preflight = (url: string, origin = FRONTEND, method = 'GET', headers = 'x-auth-token, content-type') =>
  app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

describe('CORS, any origin (the default)', () => {
  it('answers a preflight to a token-protected path without asking for the token', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await preflight(OBJECTS, FRONTEND, 'PUT');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const allowedHeaders = String(res.headers['access-control-allow-headers']).toLowerCase();
    expect(allowedHeaders).toContain('x-auth-token');
    expect(allowedHeaders).toContain('content-type');
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/PUT/);
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/DELETE/);
  });

  it('lets a cross-origin caller read the body and the rate-limit headers', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ url: OBJECTS, headers: { ...AUTH, origin: FRONTEND } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
      expect(exposed).toContain(header);
    }
  });

  it('marks errors too, so a browser can read the 401 body', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ url: OBJECTS, headers: { origin: FRONTEND } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.json().message).toBe('the X-Auth-Token header is missing');
  });

  it('adds no CORS headers to a request without an Origin, which is no browser cross-origin call', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ url: OBJECTS, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-expose-headers']).toBeUndefined();
  });

  it('answers a bare OPTIONS (no Origin) without a text/plain error', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ method: 'OPTIONS', url: OBJECTS });
    expect(res.statusCode).toBeLessThan(300);
  });
});

describe('CORS, a list of origins', () => {
  const config = { corsOrigins: 'http://localhost:5173, https://app.example.com/' };

  it('allows a listed origin, echoing it with Vary: Origin', async () => {
    ({ app } = await makeApp(authSeed(), config));
    for (const origin of [FRONTEND, 'https://app.example.com']) {
      const res = await preflight(OBJECTS, origin);
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(String(res.headers.vary)).toMatch(/Origin/i);
      const simple = await app.inject({ url: OBJECTS, headers: { ...AUTH, origin } });
      expect(simple.headers['access-control-allow-origin']).toBe(origin);
    }
  });

  it('says Vary: Origin on every answer, with an Origin or without', async () => {
    ({ app } = await makeApp(authSeed(), config));
    for (const headers of [AUTH, { ...AUTH, origin: FRONTEND }, { ...AUTH, origin: 'https://evil.example.net' }]) {
      expect(String((await app.inject({ url: OBJECTS, headers })).headers.vary)).toMatch(/Origin/i);
    }
  });

  it('does not allow an origin that is not listed', async () => {
    ({ app } = await makeApp(authSeed(), config));
    const res = await preflight(OBJECTS, 'https://evil.example.net');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await app.inject({ url: OBJECTS, headers: { ...AUTH, origin: 'https://evil.example.net' } });
    expect(simple.statusCode).toBe(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads the setting as * or a trimmed list', () => {
    expect(parseOrigins('*')).toBe('*');
    expect(parseOrigins('http://a.test, *')).toBe('*');
    expect(parseOrigins(' http://a.test/ ,https://b.test ')).toEqual(['http://a.test', 'https://b.test']);
  });
});

describe('CORS for frontends with tracing and credentials', () => {
  it("allows the headers a preflight asks for (OpenTelemetry's and Sentry's among them)", async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await preflight(OBJECTS, FRONTEND, 'GET', 'x-auth-token, traceparent, tracestate, baggage, sentry-trace');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-headers']).toBe('x-auth-token, traceparent, tracestate, baggage, sentry-trace');
    expect(String(res.headers.vary)).toMatch(/Access-Control-Request-Headers/);
  });

  it('answers the fixed list for a request-headers value that is not a list of header names', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await preflight(OBJECTS, FRONTEND, 'GET', 'x-auth-token, bad header\u0001');
    expect(res.headers['access-control-allow-headers']).toBe('X-Auth-Token, Content-Type, Authorization, X-Request-Id');
    const many = await preflight(OBJECTS, FRONTEND, 'GET', Array.from({ length: 65 }, (_, i) => `x-h${i}`).join(','));
    expect(many.headers['access-control-allow-headers']).toBe('X-Auth-Token, Content-Type, Authorization, X-Request-Id');
  });

  it('answers only CORS_ALLOW_HEADERS when it is set', async () => {
    ({ app } = await makeApp(authSeed(), { corsAllowHeaders: 'X-Auth-Token, Content-Type' }));
    const res = await preflight(OBJECTS, FRONTEND, 'GET', 'x-auth-token, traceparent');
    expect(res.headers['access-control-allow-headers']).toBe('X-Auth-Token, Content-Type');
  });

  it("answers credentials: 'include' for a listed origin with CORS_CREDENTIALS", async () => {
    ({ app } = await makeApp(authSeed(), { corsOrigins: FRONTEND, corsCredentials: true }));
    const pre = await preflight(OBJECTS, FRONTEND);
    expect(pre.headers['access-control-allow-credentials']).toBe('true');
    expect(pre.headers['access-control-allow-origin']).toBe(FRONTEND);
    const res = await app.inject({ url: OBJECTS, headers: { ...AUTH, origin: FRONTEND } });
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const other = await app.inject({ url: OBJECTS, headers: { ...AUTH, origin: 'https://evil.example.net' } });
    expect(other.headers['access-control-allow-credentials']).toBeUndefined();
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses CORS_CREDENTIALS with any origin allowed', async () => {
    await expect(makeApp(authSeed(), { corsCredentials: true })).rejects.toThrow("CORS_CREDENTIALS=true needs CORS_ORIGINS to list the origins (it is '*')");
  });
});

describe('preflights in the journal', () => {
  it('journals preflights like other requests, and leaves the control API alone', async () => {
    ({ app } = await makeApp(authSeed()));
    await preflight(OBJECTS, FRONTEND, 'PUT', 'traceparent');
    await preflight('/_emulator/clock', FRONTEND, 'POST', 'content-type');
    const journal = (await app.inject({ url: '/_emulator/journal' })).json() as { entries: { method: string; path: string; status: number }[] };
    expect(journal.entries.filter((e) => e.method === 'OPTIONS').map((e) => [e.path, e.status])).toEqual([[OBJECTS, 204]]);
  });

  it('answers a preflight to a sandbox not made yet without making it', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await preflight(`/sandbox/not-yet${OBJECTS}`, FRONTEND, 'GET', 'x-auth-token');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const list = (await app.inject({ url: '/_emulator/sandboxes' })).json() as { sandboxes: unknown[] };
    expect(list.sandboxes).toEqual([]);
  });
});
