import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { takeMismatches } from '../helpers/conformance.js';
import { backtrackingProblem, compilePathPattern, globMatches } from '../../src/world/faults.js';

const OBJECTS = '/concerto/services/rest/RepositoryService/v1/Objects/grid';

let app: FastifyInstance;
afterEach(async () => app?.close());

async function addFault(rule: object) {
  const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: rule });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const get = (url = OBJECTS, headers: Record<string, string> = AUTH) => app.inject({ url, headers });

describe('fault rules', () => {
  it('answers the given status with the JSON error body on the next N matches only', async () => {
    ({ app } = await makeApp(authSeed()));
    const rule = await addFault({ method: 'GET', path: '/concerto/services/rest/RepositoryService/v1/Objects/*', action: { status: 503 }, times: 2 });
    expect(rule).toMatchObject({ id: 'fault-1', method: 'GET', times: 2, remaining: 2, probability: 1, active: true });

    const first = await get();
    expect(first.statusCode).toBe(503);
    expect(first.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: "fault injected by rule 'fault-1'" });
    expect(first.headers['x-emulator-fault']).toBe('fault-1');
    expect((await get()).statusCode).toBe(503);
    expect((await get()).statusCode).toBe(200);

    const listed = (await app.inject({ url: '/_emulator/faults' })).json();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: 'fault-1', remaining: 0, matched: 2, fired: 2, active: false });
  });

  it('matches the method, the path glob and an optional header', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ method: 'POST', path: '/concerto/*', action: { status: 500 } });
    await addFault({ path: '/concerto/services/rest/RepositoryService/v1/Objects/rsdb', header: { name: 'X-Chaos', value: 'on' }, action: { status: 502 } });
    expect((await get()).statusCode).toBe(200);
    expect((await get(OBJECTS.replace('grid', 'rsdb'))).statusCode).toBe(200);
    expect((await get(OBJECTS.replace('grid', 'rsdb'), { ...AUTH, 'x-chaos': 'off' })).statusCode).toBe(200);
    expect((await get(OBJECTS.replace('grid', 'rsdb'), { ...AUTH, 'x-chaos': 'on' })).statusCode).toBe(502);
    const post = await app.inject({ method: 'POST', url: '/concerto/anything', payload: {} });
    expect(post.statusCode).toBe(500);
  });

  it('accepts a regular expression when the path starts with ^, matched without the query', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: '^/concerto/services/rest/RepositoryService/v1/Objects/(grid|rsdb)$', action: { status: 418 } });
    expect((await get(`${OBJECTS}?name=x`)).statusCode).toBe(418);
    expect((await get(OBJECTS.replace('grid', 'domain'))).statusCode).toBe(200);
  });

  it('strikes before the X-Auth-Token check, as a failing proxy would', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: OBJECTS, action: { status: 503 } });
    expect((await get(OBJECTS, {})).statusCode).toBe(503);
  });

  it('answers a given JSON body, a given text body, and extra headers', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: OBJECTS, action: { status: 429, body: { custom: true }, headers: { 'Retry-After': '7' } }, times: 1 });
    await addFault({ path: OBJECTS, action: { status: 502, body: '<html>Bad Gateway</html>' }, times: 1 });
    const json = await get();
    expect(json.statusCode).toBe(429);
    expect(json.json()).toEqual({ custom: true });
    expect(json.headers['retry-after']).toBe('7');
    const text = await get();
    expect(text.statusCode).toBe(502);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toBe('<html>Bad Gateway</html>');
    // A staged body is off the OpenAPI document on purpose: that is what the rule asked for.
    expect(takeMismatches()).toHaveLength(2);
  });

  it('never applies to the control API itself', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: '*', action: { status: 500 } });
    expect((await app.inject({ url: '/_emulator/faults' })).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(500);
  });

  it('stops firing once its time span on the emulator clock has passed', async () => {
    let clock;
    ({ app, clock } = await makeApp(authSeed()));
    const rule = await addFault({ path: OBJECTS, action: { status: 503 }, untilMs: 60_000 });
    expect(rule.expiresAt).toBe(rule.createdAt + 60_000);
    clock.advance(59_999);
    expect((await get()).statusCode).toBe(503);
    clock.advance(1);
    expect((await get()).statusCode).toBe(200);
    expect((await app.inject({ url: '/_emulator/faults/fault-1' })).json().active).toBe(false);
  });

  it('with a probability and a seed, fires on the same requests on every run', async () => {
    const run = async () => {
      const made = await makeApp(authSeed());
      app = made.app;
      const rule = await addFault({ path: OBJECTS, action: { status: 500 }, probability: 0.5, seed: 42 });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await get()).statusCode);
      const listed = (await app.inject({ url: `/_emulator/faults/${rule.id}` })).json();
      await app.close();
      return { statuses, listed };
    };
    const a = await run();
    const b = await run();
    expect(a.statuses).toEqual(b.statuses);
    const fired = a.statuses.filter((s) => s === 500).length;
    // 40 draws at 0.5: some fire and some do not, and the counts add up.
    expect(fired).toBeGreaterThan(0);
    expect(fired).toBeLessThan(40);
    expect(a.listed).toMatchObject({ matched: 40, fired, seed: 42 });
  });

  it('reports the random seed it picked, so a run can be repeated', async () => {
    ({ app } = await makeApp(authSeed()));
    const rule = await addFault({ path: OBJECTS, action: { status: 500 }, probability: 0.3 });
    expect(Number.isInteger(rule.seed)).toBe(true);
  });

  it('adds latency and then serves the request', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: OBJECTS, action: { latencyMs: 30 }, times: 1 });
    const res = await get();
    expect(res.statusCode).toBe(200);
    const journal = (await app.inject({ url: '/_emulator/journal' })).json();
    expect(journal.entries[0]).toMatchObject({ path: OBJECTS, status: 200, faulted: ['fault-1'] });
    expect(journal.entries[0].durationMs).toBeGreaterThanOrEqual(25);
  });

  it('combines latency with a status rule: the delay, then the fault answer', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ id: 'slow', path: OBJECTS, action: { latencyMs: 20 } });
    await addFault({ id: 'down', path: OBJECTS, action: { status: 503 } });
    const res = await get();
    expect(res.statusCode).toBe(503);
    const [entry] = (await app.inject({ url: '/_emulator/journal' })).json().entries;
    expect(entry.faulted).toEqual(['slow', 'down']);
  });

  it('drops the connection without an answer', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: OBJECTS, action: { drop: true }, times: 1 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}${OBJECTS}`;
    await expect(fetch(url, { headers: AUTH })).rejects.toThrow();
    const after = await fetch(url, { headers: AUTH });
    expect(after.status).toBe(200);
    const journal = await (await fetch(`http://127.0.0.1:${port}/_emulator/journal`)).json();
    expect(journal.entries.map((e: { status: number }) => e.status)).toEqual([200, 0]);
  });

  it('drops an injected request too: inject rejects instead of hanging', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ path: OBJECTS, action: { drop: true }, times: 1 });
    await expect(get()).rejects.toThrow(/destroyed/);
    expect((await get()).statusCode).toBe(200);
  });

  it('lists, reads and deletes rules one by one or all at once', async () => {
    ({ app } = await makeApp(authSeed()));
    await addFault({ id: 'a', path: '/x', action: { status: 500 } });
    await addFault({ id: 'b', path: '/y', action: { drop: true } });
    expect((await app.inject({ url: '/_emulator/faults' })).json().map((r: { id: string }) => r.id)).toEqual(['a', 'b']);
    expect((await app.inject({ url: '/_emulator/faults/b' })).json().action).toEqual({ drop: true });
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/faults/a' })).statusCode).toBe(204);
    const gone = await app.inject({ method: 'DELETE', url: '/_emulator/faults/a' });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().message).toBe("no fault rule 'a'");
    expect((await app.inject({ url: '/_emulator/faults/a' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/faults' })).statusCode).toBe(204);
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
  });

  it('refuses bad rules with 400 naming the field, and a duplicate id with 409', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[object, RegExp]> = [
      [{ action: { status: 500 } }, /missing required field 'path'/],
      [{ path: '/x' }, /missing required field 'action'/],
      [{ path: '/x', action: {} }, /exactly one of status, latencyMs or drop \(got none\)/],
      [{ path: '/x', action: { status: 500, drop: true } }, /exactly one of status, latencyMs or drop \(got status, drop\)/],
      [{ path: '/x', action: { status: 99 } }, /field 'action.status'/],
      [{ path: '/x', action: { status: '500' } }, /field 'action.status'/],
      [{ path: '/x', action: { latencyMs: 10, body: 'x' } }, /body and headers go with status only/],
      [{ path: '/x', action: { drop: false } }, /field 'action.drop'/],
      [{ path: '/x', action: { status: 500 }, probability: 2 }, /field 'probability'/],
      [{ path: '/x', action: { status: 500 }, times: 0 }, /field 'times'/],
      [{ path: '/x', action: { status: 500 }, method: 'GE T' }, /field 'method'/],
      [{ path: '^(', action: { status: 500 } }, /field 'path': not a valid regular expression/],
      [{ path: '/x', action: { status: 500 }, colour: 'red' }, /unknown field 'colour'/],
    ];
    for (const [payload, message] of cases) {
      const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toMatch(message);
    }
    await addFault({ id: 'same', path: '/x', action: { status: 500 } });
    const dup = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { id: 'same', path: '/y', action: { status: 500 } } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toMatch(/'same' already exists/);
  });

  it('refuses regular expressions that could backtrack for minutes, and over-long patterns, with 400 naming the field', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[string, RegExp]> = [
      ['^(a+)+$', /nested quantifier/],
      ['^(a*)*$', /nested quantifier/],
      ['^(.*)*$', /nested quantifier/],
      ['^/x/(?:[a-z]+-?)+!', /nested quantifier/],
      ['^(a+){2,}$', /nested quantifier/],
      ['^(?=(a+)+b)', /nested quantifier/],
      [`^/${'a'.repeat(512)}`, /longer than 512 characters/],
      [`/${'a'.repeat(512)}`, /longer than 512 characters/],
    ];
    for (const [path, message] of cases) {
      const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path, action: { status: 500 } } });
      expect(res.statusCode, path).toBe(400);
      expect(res.json().message, path).toMatch(/^body field 'path': /);
      expect(res.json().message, path).toMatch(message);
    }
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
  });

  it('keeps ordinary regular expressions', () => {
    const ordinary = [
      '^/concerto/services/rest/RepositoryService/v1/Objects/(grid|rsdb)$',
      '^/concerto/mpulse/api/alerts/[^/]+/fire$',
      '^/concerto/.*/grid/.*$',
      '^/a/[^/]+/b/[^/]+/c/[^/]+/d/\\d+$',
      '^/concerto/services/rest/CloudService/v1/(grid|rsdb|environment)/\\d+(/action)?$',
      '^/v[0-9]{1,3}/(?:[a-z]+/)?items\\?*$',
      '^/x{2,3}[{}]\\{\\}',
      '^(?<kind>grid|rsdb)/\\k<kind>$',
      '^/(?!_emulator)',
      `^/${'a'.repeat(510)}`,
    ];
    for (const pattern of ordinary) {
      expect(backtrackingProblem(pattern), pattern).toBeUndefined();
      expect(() => compilePathPattern(pattern), pattern).not.toThrow();
    }
  });

  it('walks globs of several stars without regular expressions, so no glob can backtrack for long', async () => {
    expect(globMatches('/concerto/*', '/concerto/a/b/c')).toBe(true);
    expect(globMatches('/concerto/*', '/concerto')).toBe(false);
    expect(globMatches('/grid/?', '/grid/7')).toBe(true);
    expect(globMatches('/grid/?', '/grid/17')).toBe(false);
    expect(globMatches('*.json', '/a.b/c.json')).toBe(true);
    expect(globMatches('/a.b(c)+', '/a.b(c)+')).toBe(true);
    expect(globMatches('/a.b', '/axb')).toBe(false);
    expect(globMatches('*b', '*ab')).toBe(true);
    expect(globMatches('**', '')).toBe(true);
    expect(globMatches('*a*b*', '/xaybz')).toBe(true);
    expect(globMatches('*a*b*', '/xbyaz')).toBe(false);
    for (const [glob, path, expected] of [['/x/*', '/x/y/z', true], ['/x/*', '/y/x/z', false], ['/a.?', '/a.b', true], ['/a.?', '/axb', false], ['/*/b', '/a/c/b', true]] as const) {
      expect(compilePathPattern(glob).test(path), `${glob} ${path}`).toBe(expected);
      expect(globMatches(glob, path), `${glob} ${path}`).toBe(expected);
    }

    ({ app } = await makeApp(authSeed()));
    // As a regular expression (^.*a.*a.*a.*b$) this would take seconds on a path of 600
    // characters (and time this test out); the glob walk answers at once.
    await addFault({ path: '*a*a*a*b', action: { status: 500 } });
    const res = await app.inject({ url: `/${'a'.repeat(600)}`, headers: AUTH });
    expect(res.statusCode).toBe(404);
    expect((await app.inject({ url: `/${'a'.repeat(600)}b`, headers: AUTH })).statusCode).toBe(500);
  });
});
