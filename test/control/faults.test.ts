import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { takeMismatches } from '../helpers/conformance.js';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import {
  MAX_MATCHED_PATH_LENGTH,
  MAX_REGEX_PROGRAM_SIZE,
  MAX_GLOB_STARS,
  MAX_WILDCARD_PART_LENGTH,
  compileGlob,
  compilePathPattern,
  compileRegex,
  RegexSet,
} from '../../src/core/path-patterns.js';
import { MAX_RULES } from '../../src/world/faults.js';

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
      [{ path: '^(', action: { status: 500 } }, /field 'path': not a regular expression the emulator can run: .*missing closing \)/],
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

  it('refuses response headers Node could not send, naming them (400), instead of failing every match', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'Retry After': '7' }, /^body field 'action.headers': "Retry After" is not a valid header name/],
      [{ 'X-A\nB': '7' }, /^body field 'action.headers': "X-A\\nB" is not a valid header name/],
      [{ '': '7' }, /^body field 'action.headers': "" is not a valid header name/],
      [{ 'X-Note': 'one\r\nSet-Cookie: a=b' }, /^body field 'action.headers': the value of 'X-Note' holds a character not allowed in a header/],
      [{ 'X-Note': 'bell\u0007' }, /the value of 'X-Note' holds a character not allowed/],
      [{ 'X-Note': 'snow \u2603' }, /the value of 'X-Note' holds a character not allowed/],
    ];
    for (const [headers, message] of cases) {
      const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: OBJECTS, action: { status: 503, headers } } });
      expect(res.statusCode, JSON.stringify(headers)).toBe(400);
      expect(res.json().message, JSON.stringify(headers)).toMatch(message);
    }
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
    await addFault({ path: OBJECTS, action: { status: 503, headers: { 'Retry-After': '7', 'X-Tab': 'a\tb', 'X-Latin': 'caf\u00e9' } } });
    const res = await get();
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.headers['x-tab']).toBe('a\tb');
  });

  it('matches a header only when the request carries it: no inherited names such as __proto__', async () => {
    ({ app } = await makeApp(authSeed()));
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      await addFault({ path: OBJECTS, header: { name }, action: { status: 503 } });
    }
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect((await app.inject({ url: '/_emulator/faults' })).json().map((r: { matched: number }) => r.matched)).toEqual([0, 0, 0, 0]);
    await addFault({ path: OBJECTS, header: { name: 'X-Chaos' }, action: { status: 502 } });
    expect((await get(OBJECTS, { ...AUTH, 'x-chaos': 'yes' })).statusCode).toBe(502);
  });

  it('runs regular expressions on a linear-time engine: the classic slow ones are accepted and answer at once', async () => {
    ({ app } = await makeApp(authSeed()));
    // On a backtracking engine each of these takes minutes on a path of a few dozen characters.
    await addFault({ id: 'nested', path: '^/((a+))+$', action: { status: 500 } });
    await addFault({ id: 'alternation', path: '^/(a|aa)+$', action: { status: 500 } });
    await addFault({ id: 'repeat', path: '^/(.*a){12}$', action: { status: 500 } });
    const hostile = `/${'a'.repeat(48)}!`;
    const res = await get(hostile);
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-emulator-fault']).toBeUndefined();
    expect((await get(`/${'a'.repeat(48)}`)).headers['x-emulator-fault']).toBe('nested');
    for (let n = 1; n <= 4; n++) expect((await get(`/${'a'.repeat(n * 1000)}!`)).statusCode).toBe(404);
    const listed = (await app.inject({ url: '/_emulator/faults' })).json();
    expect(listed.map((r: { matched: number }) => r.matched)).toEqual([1, 0, 0]);
  });

  it('refuses what only a backtracking engine can do, and over-long patterns, with 400 naming the field', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[string, RegExp]> = [
      ['^/(?!_emulator)', /not a regular expression the emulator can run: .*\(\?!.*lookaround and backreferences are not supported/],
      ['^(?=(a+)+b)', /not a regular expression the emulator can run/],
      ['^/(?<=a)b', /not a regular expression the emulator can run/],
      ['^(?<kind>grid|rsdb)/\\k<kind>$', /not a regular expression the emulator can run: \\k<\.\.\.> is a backreference/],
      ['^(a)\\1', /not a regular expression the emulator can run/],
      ['^/a{1001}', /not a regular expression the emulator can run: .*repeat count/],
      ['^/(?:a{1000}){3}', /not a regular expression the emulator can run|compiles to \d+ instructions/],
      [`^/${'a{500}'.repeat(Math.ceil(MAX_REGEX_PROGRAM_SIZE / 500))}`, new RegExp(`compiles to \\d+ instructions, more than the ${MAX_REGEX_PROGRAM_SIZE}`)],
      [`^/${'a'.repeat(512)}`, /longer than 512 characters/],
      [`/${'a'.repeat(512)}`, /longer than 512 characters/],
      [`${'*a'.repeat(MAX_GLOB_STARS)}*`, /a glob of more than 32 '\*' \(this one has 33\)/],
      [`*/${'?'.repeat(MAX_WILDCARD_PART_LENGTH)}*`, /the part '\/\?+' between two '\*' holds a '\?' and is longer than 31 characters/],
    ];
    for (const [path, message] of cases) {
      const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path, action: { status: 500 } } });
      expect(res.statusCode, path).toBe(400);
      expect(res.json().message, path).toMatch(/^body field 'path': /);
      expect(res.json().message, path).toMatch(message);
    }
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
  });

  it('keeps ordinary regular expressions, in JavaScript syntax', async () => {
    const ordinary: Array<[string, string[], string[]]> = [
      ['^/concerto/services/rest/RepositoryService/v1/Objects/(grid|rsdb)$', ['/concerto/services/rest/RepositoryService/v1/Objects/rsdb'], ['/concerto/services/rest/RepositoryService/v1/Objects/grids']],
      ['^/concerto/mpulse/api/alerts/[^/]+/fire$', ['/concerto/mpulse/api/alerts/a.b/fire'], ['/concerto/mpulse/api/alerts/a/b/fire']],
      ['^/concerto/.*/grid/.*$', ['/concerto/x/grid/1'], ['/concerto/grid/1']],
      ['^/a/[^/]+/b/[^/]+/c/[^/]+/d/\\d+$', ['/a/1/b/2/c/3/d/45'], ['/a/1/b/2/c/3/d/x']],
      ['^/concerto/services/rest/CloudService/v1/(grid|rsdb|environment)/\\d+(/action)?$', ['/concerto/services/rest/CloudService/v1/grid/7/action'], ['/concerto/services/rest/CloudService/v1/grid/7/actions']],
      ['^/v[0-9]{1,3}/(?:[a-z]+/)?items\\?*$', ['/v12/items', '/v1/x/items??'], ['/v1234/items']],
      ['^/x{2,3}[{}]\\{\\}', ['/xx{{}'], ['/x{{}']],
      ['^/(?<kind>grid|rsdb)\\/\\u0031', ['/grid/1'], ['/grid/2']],
      ['^/\\w+-\\d\\b', ['/ab-1', '/ab-1/x'], ['/ab-12']],
      ['^/caf\\u00e9', ['/café'], ['/cafe']],
      ['^/a\\\\k<x>', ['/a\\k<x>'], ['/ak<x>']],
      [`^/${'a'.repeat(400)}`, [`/${'a'.repeat(400)}`], [`/${'a'.repeat(399)}`]],
    ];
    ({ app } = await makeApp(authSeed()));
    for (const [pattern, matching, other] of ordinary) {
      const made = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: pattern, action: { status: 500 } } });
      expect(made.statusCode, pattern).toBe(201);
      const rule = compilePathPattern(pattern);
      expect('regex' in rule, pattern).toBe(true);
      // The same answers as JavaScript's own engine gives.
      for (const path of [...matching, ...other]) expect(new RegExp(pattern).test(path), `${pattern} ${path}`).toBe(matching.includes(path));
      const judge = (path: string) => app.world.faults.judge({ method: 'GET', path, headers: {} }).ruleIds.length > 0;
      for (const path of matching) expect(judge(path), `${pattern} ${path}`).toBe(true);
      for (const path of other) expect(judge(path), `${pattern} ${path}`).toBe(false);
      await app.inject({ method: 'DELETE', url: '/_emulator/faults' });
    }
  });

  it('answers like JavaScript regular expressions on simple patterns and paths', () => {
    const atom = fc.constantFrom('a', 'b', '/', '.', '[ab]', '[^/]', '\\d', '1', '(a|b)', '(?:ab|a)');
    const quantifier = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}');
    const pattern = fc.array(fc.tuple(atom, quantifier).map(([a, q]) => a + q), { minLength: 1, maxLength: 6 }).map((parts) => `^${parts.join('')}${parts.length % 2 ? '$' : ''}`);
    const path = fc.array(fc.constantFrom('a', 'b', '/', '1', '.'), { maxLength: 12 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, fc.array(path, { minLength: 1, maxLength: 5 }), (p, paths) => {
        const { source } = compileRegex(p);
        const store = new FaultStoreForTest(source);
        for (const candidate of paths) expect(store.matches(candidate), `${p} ${candidate}`).toBe(new RegExp(p).test(candidate));
      }),
      replayable({ numRuns: 300 }),
    );
  });

  it('limits the regular expressions of all rules together, and says how to go on (409)', async () => {
    ({ app } = await makeApp(authSeed()));
    const rule = `^/${'[ab]'.repeat(40)}`;
    const size = compileRegex(rule).size;
    const fit = Math.floor(MAX_REGEX_PROGRAM_SIZE / size);
    for (let i = 0; i < fit; i++) await addFault({ path: rule, action: { status: 500 } });
    const over = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: rule, action: { status: 500 } } });
    expect(over.statusCode).toBe(409);
    expect(over.json().message).toMatch(new RegExp(`^the regular expressions of the fault rules would compile to \\d+ instructions together, more than ${MAX_REGEX_PROGRAM_SIZE} \\(this one: ${size}\\): delete some rules first, or use a glob$`));
    // Globs are not counted, and deleting a rule makes room again.
    await addFault({ path: '/x*', action: { status: 500 } });
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/faults/fault-1' })).statusCode).toBe(204);
    await addFault({ path: rule, action: { status: 500 } });
    expect((await get(`/${'ab'.repeat(20)}`)).statusCode).toBe(500);
  });

  it('matches globs in one pass over the path, with the usual meaning of * and ?', async () => {
    const cases: Array<[string, string, boolean]> = [
      ['/concerto/*', '/concerto/a/b/c', true],
      ['/concerto/*', '/concerto', false],
      ['/grid/?', '/grid/7', true],
      ['/grid/?', '/grid/17', false],
      ['*.json', '/a.b/c.json', true],
      ['/a.b(c)+', '/a.b(c)+', true],
      ['/a.b', '/axb', false],
      ['*b', '*ab', true],
      ['**', '', true],
      ['*a*b*', '/xaybz', true],
      ['*a*b*', '/xbyaz', false],
      ['/x/*', '/x/y/z', true],
      ['/x/*', '/y/x/z', false],
      ['/a.?', '/a.b', true],
      ['/a.?', '/axb', false],
      ['/*/b', '/a/c/b', true],
      ['*a?c*', '/xabbc', false],
      ['*a?c*', '/xabcabc', true],
      ['*ab*ba*', '/aba', false],
      ['*ab*ba*', '/abba', true],
      ['/a*a', '/a', false],
      ['?*?', 'ab', true],
    ];
    for (const [glob, path, expected] of cases) expect(compileGlob(glob).test(path), `${glob} ${path}`).toBe(expected);

    ({ app } = await makeApp(authSeed()));
    // As a regular expression (^.*a.*a.*a.*b$) this would take seconds on a path of 600
    // characters (and time this test out); the glob walk answers at once.
    await addFault({ path: '*a*a*a*b', action: { status: 500 } });
    const res = await app.inject({ url: `/${'a'.repeat(600)}`, headers: AUTH });
    expect(res.statusCode).toBe(404);
    expect((await app.inject({ url: `/${'a'.repeat(600)}b`, headers: AUTH })).statusCode).toBe(500);
  });

  it('answers like a glob turned into a regular expression, on any glob and path', () => {
    const glob = fc.array(fc.constantFrom('a', 'b', '/', '*', '?', '.'), { maxLength: 8 }).map((chars) => chars.join(''));
    const path = fc.array(fc.constantFrom('a', 'b', '/', '.'), { maxLength: 10 }).map((chars) => chars.join(''));
    const reference = (g: string) => new RegExp(`^${[...g].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&'))).join('')}$`, 's');
    fc.assert(
      fc.property(glob, fc.array(path, { minLength: 1, maxLength: 5 }), (g, paths) => {
        const matcher = compileGlob(g);
        for (const p of paths) expect(matcher.test(p), `${g} ${p}`).toBe(reference(g).test(p));
      }),
      replayable({ numRuns: 2000 }),
    );
  });

  it('keeps every request cheap with the most rules of the costliest patterns on the longest path', async () => {
    ({ app } = await makeApp(authSeed()));
    const wild = `*${'?'.repeat(MAX_WILDCARD_PART_LENGTH - 1)}b*`;
    const stars = `${'*a'.repeat(MAX_GLOB_STARS - 1)}*`;
    const regex = `^/(?:.*a){${Math.floor((MAX_REGEX_PROGRAM_SIZE - 10) / 3)}}`;
    expect(compileRegex(regex).size).toBeLessThanOrEqual(MAX_REGEX_PROGRAM_SIZE);
    await addFault({ path: regex, action: { latencyMs: 0 } });
    for (let i = 1; i < MAX_RULES; i++) await addFault({ id: `${i % 2 ? 'wild' : 'stars'}-${i}`, path: i % 2 ? wild : stars, action: { latencyMs: 0 } });
    const full = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: '/x', action: { status: 500 } } });
    expect(full.statusCode).toBe(409);
    // The longest path any rule is tried on, and one past it, which no rule matches.
    const longest = `/${'a'.repeat(MAX_MATCHED_PATH_LENGTH - 1)}`;
    for (const path of [longest, `${longest}a`]) {
      const res = await get(path);
      expect(res.statusCode).toBe(404);
      expect(res.headers['x-emulator-fault']).toBeUndefined();
    }
    const rules = (await app.inject({ url: '/_emulator/faults' })).json();
    // The globs of stars and the regular expression match the first path only; no wildcard glob does.
    const matchedOnce = rules.filter((r: { matched: number }) => r.matched === 1).map((r: { id: string }) => r.id);
    expect(matchedOnce).toEqual(rules.filter((r: { id: string }) => !r.id.startsWith('wild')).map((r: { id: string }) => r.id));
    expect(rules.filter((r: { matched: number }) => r.matched > 1)).toHaveLength(0);
  }, 120_000);
});

/** A one-rule store for comparing the engine's answers with JavaScript's. */
class FaultStoreForTest {
  private readonly set: RegexSet;
  constructor(source: string) {
    this.set = new RegexSet([source]);
  }

  matches(path: string): boolean {
    return this.set.match(path).has(0);
  }
}
