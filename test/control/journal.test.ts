import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';
import { Journal, JournalMatchError, partialMatch } from '../../src/world/journal.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';

let app: FastifyInstance;
afterEach(async () => app?.close());

const journal = async (query = '') => {
  const res = await app.inject({ url: `/_emulator/journal${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('request journal', () => {
  it('records method, path, query, status, duration and emulated time, newest first', async () => {
    let clock;
    ({ app, clock } = await makeApp(authSeed()));
    await app.inject({ url: `${REPO}/Objects/grid?name=Demo%20grid`, headers: AUTH });
    clock.advance(5000);
    await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'nobody', password: 'x' } });
    const { size, total, entries } = await journal();
    expect(size).toBe(1000);
    expect(total).toBe(2);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ method: 'PUT', path: `${REPO}/Tokens`, status: 401, time: T0 + 5000 });
    expect(entries[0].query).toBeUndefined();
    expect(entries[1]).toMatchObject({ method: 'GET', path: `${REPO}/Objects/grid`, query: 'name=Demo%20grid', status: 200, time: T0 });
    expect(entries[0].id).toBeGreaterThan(entries[1].id);
    expect(entries[1].durationMs).toBeGreaterThanOrEqual(0);
    expect(entries[1].faulted).toBeUndefined();
  });

  it('filters by method, path prefix, exact status or status class, and limits', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH });
    await app.inject({ url: `${REPO}/Objects/grid` });
    await app.inject({ url: '/nowhere' });
    await app.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: {} });
    expect((await journal('?method=get')).entries).toHaveLength(3);
    expect((await journal(`?pathPrefix=${REPO}/Objects`)).entries.map((e: { status: number }) => e.status)).toEqual([401, 200]);
    expect((await journal('?status=404')).entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere']);
    expect((await journal('?status=4xx')).entries).toHaveLength(3);
    expect((await journal('?status=2xx')).entries).toHaveLength(1);
    const limited = await journal('?limit=2');
    expect(limited.entries.map((e: { method: string }) => e.method)).toEqual(['PUT', 'GET']);
  });

  it("leaves out the dashboard's own requests (X-Emulator-Client: dashboard) unless include=dashboard", async () => {
    ({ app } = await makeApp(authSeed()));
    const DASHBOARD = { ...AUTH, 'x-emulator-client': 'dashboard' };
    await app.inject({ url: `${REPO}/Objects/grid`, headers: AUTH });
    await app.inject({ url: `${REPO}/Objects/domain`, headers: DASHBOARD });
    await app.inject({ url: `${REPO}/Objects/user`, headers: { ...AUTH, 'x-emulator-client': 'some-other-tool' } });
    const shown = await journal();
    expect(shown.entries.map((e: { path: string }) => e.path)).toEqual([`${REPO}/Objects/user`, `${REPO}/Objects/grid`]);
    // Recorded all the same: counted, and listed when asked for.
    expect(shown.total).toBe(3);
    const all = await journal('?include=dashboard');
    expect(all.entries.map((e: { path: string }) => e.path)).toEqual([`${REPO}/Objects/user`, `${REPO}/Objects/domain`, `${REPO}/Objects/grid`]);
    expect(all.entries[1].headers['x-emulator-client']).toBe('dashboard');
    // The searches a test asserts with leave them out too.
    const count = async (body: object) => (await app.inject({ method: 'POST', url: '/_emulator/journal/count', payload: body })).json().count;
    expect(await count({ path: `${REPO}/Objects/*` })).toBe(2);
    expect(await count({ path: `${REPO}/Objects/*`, include: 'dashboard' })).toBe(3);
    const found = await app.inject({ method: 'POST', url: '/_emulator/journal/find', payload: { path: `${REPO}/Objects/domain` } });
    expect(found.json().entries).toEqual([]);
    const bad = await app.inject({ url: '/_emulator/journal?include=everything' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("'include'");
  });

  it('refuses bad filters with 400 naming the parameter', async () => {
    ({ app } = await makeApp(authSeed()));
    for (const [query, field] of [['?status=abc', 'status'], ['?limit=0', 'limit'], ['?limit=x', 'limit'], ['?method=G%20T', 'method'], ['?colour=red', 'colour']]) {
      const res = await app.inject({ url: `/_emulator/journal${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toContain(`'${field}'`);
    }
  });

  it('keeps only the last JOURNAL_SIZE requests, and counts the ones pushed out', async () => {
    ({ app } = await makeApp(authSeed(), { journalSize: 5 }));
    for (let i = 0; i < 12; i++) await app.inject({ url: `/nowhere/${i}` });
    const { size, total, entries } = await journal();
    expect(size).toBe(5);
    expect(total).toBe(12);
    expect(entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere/11', '/nowhere/10', '/nowhere/9', '/nowhere/8', '/nowhere/7']);
  });

  it('records nothing with JOURNAL_SIZE=0', async () => {
    ({ app } = await makeApp(authSeed(), { journalSize: 0 }));
    await app.inject({ url: '/nowhere' });
    expect(await journal()).toEqual({ size: 0, total: 0, entries: [] });
  });

  it('leaves out calls to the control API itself', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: '/_emulator/health' });
    await app.inject({ url: '/_emulator/faults' });
    await journal();
    await app.inject({ url: '/nowhere' });
    expect((await journal()).entries.map((e: { path: string }) => e.path)).toEqual(['/nowhere']);
  });

  it('is emptied by DELETE and by a reset', async () => {
    ({ app } = await makeApp(authSeed()));
    await app.inject({ url: '/nowhere' });
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/journal' })).statusCode).toBe(204);
    expect((await journal()).entries).toEqual([]);
    await app.inject({ url: '/nowhere' });
    expect((await journal()).entries).toHaveLength(1);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    expect(await journal()).toMatchObject({ total: 0, entries: [] });
  });
});

const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const annotationSeed = () => ({ ...authSeed(), domains: [{ id: 11, name: 'www.example.com' }] });
const json = { ...AUTH, 'content-type': 'application/json' };

const post = async (url: string, payload: unknown) => {
  const res = await app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
  return res;
};
const count = async (matcher: unknown) => {
  const res = await post('/_emulator/journal/count', matcher);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().count as number;
};
const find = async (matcher: unknown) => {
  const res = await post('/_emulator/journal/find', matcher);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().entries as Array<Record<string, unknown>>;
};
const annotate = (title: string, extra: Record<string, unknown> = {}) =>
  app.inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: { title, text: 'from the test', start: T0, domainIds: [11], ...extra } });

describe('journal entries: headers, body, response size', () => {
  it('keeps the request headers with tokens masked, the body as JSON text and the response size', async () => {
    ({ app } = await makeApp(annotationSeed()));
    const created = await annotate('Deploy 1.2');
    expect(created.statusCode, created.body).toBe(200);
    await app.inject({ url: `${REPO}/Objects/grid`, headers: { ...AUTH, authorization: 'Bearer s3cret-value', 'x-trace': 'abc' } });
    const { entries } = await journal();
    const [read, write] = entries;
    expect(write).toMatchObject({ method: 'POST', path: ANNOTATIONS, status: 200, responseSize: Buffer.byteLength(created.body) });
    expect(JSON.parse(write.body)).toEqual({ title: 'Deploy 1.2', text: 'from the test', start: T0, domainIds: [11] });
    expect(write.bodyCut).toBeUndefined();
    expect(write.headers['content-type']).toBe('application/json');
    expect(write.headers['x-auth-token']).toBe('***');
    expect(read.headers).toMatchObject({ 'x-auth-token': '***', authorization: 'Bearer ***', 'x-trace': 'abc' });
    expect(JSON.stringify(entries)).not.toContain('s3cret');
    expect(JSON.stringify(entries)).not.toContain('test-token');
    expect(read.body).toBeUndefined();
  });

  it('records the response size in bytes, not characters, for a body with non-ASCII text', async () => {
    ({ app } = await makeApp(annotationSeed()));
    const created = await annotate('Café ☕ déploiement');
    const read = await app.inject({ url: `${ANNOTATIONS}/${created.json().id}`, headers: AUTH });
    expect(read.statusCode).toBe(200);
    expect(Buffer.byteLength(read.body)).toBeGreaterThan(read.body.length);
    const [entry] = (await journal()).entries;
    expect(entry).toMatchObject({ method: 'GET', status: 200, responseSize: Buffer.byteLength(read.body) });
  });

  it('records a response size of 0 for an answer without a body (204)', async () => {
    ({ app } = await makeApp(annotationSeed()));
    const created = await annotate('to delete');
    expect((await app.inject({ method: 'DELETE', url: `${ANNOTATIONS}/${created.json().id}`, headers: AUTH })).statusCode).toBe(204);
    const [deleted] = (await journal()).entries;
    expect(deleted).toMatchObject({ method: 'DELETE', status: 204, responseSize: 0 });
  });

  it('cuts a body longer than JOURNAL_BODY_LIMIT_BYTES, with a marker, and keeps none with 0', async () => {
    ({ app } = await makeApp(annotationSeed(), { journalBodyLimitBytes: 100 }));
    await annotate('short');
    await annotate('long', { text: 'é'.repeat(300) });
    const [long, short] = (await journal()).entries;
    expect(short.bodyCut).toBeUndefined();
    expect(long.bodyCut).toBe(true);
    const [kept, marker] = long.body.split('…');
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(100);
    expect(kept.startsWith('{"title":"long","text":"éé')).toBe(true);
    expect(marker).toMatch(/^\[cut: \d+ bytes in all\]$/);
    expect(Number(/\d+/.exec(marker)![0])).toBeGreaterThan(600);
    await app.close();

    // Nested deeper than JSON.stringify's stack: the body is kept as sent, not re-serialized.
    ({ app } = await makeApp(annotationSeed()));
    const deep = `{"title":${'['.repeat(20_000)}1${']'.repeat(20_000)},"text":"t","start":1}`;
    await app.inject({ method: 'POST', url: ANNOTATIONS, headers: json, payload: deep });
    const [entry] = (await journal()).entries;
    expect(entry.body).toBe(deep);
    expect(await count({ bodyContains: 'title' })).toBe(1);
    await app.close();

    ({ app } = await makeApp(annotationSeed(), { journalBodyLimitBytes: 0 }));
    await annotate('none kept');
    expect((await journal()).entries[0].body).toBeUndefined();
  });
});

describe('POST /_emulator/journal/count and /find', () => {
  async function traffic() {
    ({ app } = await makeApp(annotationSeed()));
    await annotate('Deploy 1.2');
    await annotate('Deploy 1.3', { text: 'second release' });
    await annotate('Rollback');
    await app.inject({ url: `${REPO}/Objects/grid?name=Demo%20grid&x=1`, headers: AUTH });
    await app.inject({ url: `${REPO}/Objects/grid?name=Other`, headers: { 'x-auth-token': 'wrong' } });
    await app.inject({ method: 'DELETE', url: `${ANNOTATIONS}/999`, headers: AUTH });
  }

  it('counts by method, path glob, status and status class', async () => {
    await traffic();
    expect(await count({})).toBe(6);
    expect(await count({ method: 'post' })).toBe(3);
    expect(await count({ path: `${ANNOTATIONS}` })).toBe(3);
    expect(await count({ path: '/concerto/*/annotations/v?' })).toBe(3);
    expect(await count({ path: '*/annotations/*' })).toBe(4);
    expect(await count({ path: '*/annotations/v1/*' })).toBe(1);
    expect(await count({ path: '*Objects*' })).toBe(2);
    expect(await count({ status: 401 })).toBe(1);
    expect(await count({ status: '2xx' })).toBe(4);
    expect(await count({ status: '404' })).toBe(1);
    expect(await count({ method: 'GET', status: 200, path: '*/grid' })).toBe(1);
  });

  it('matches query parameters (decoded) and header values as sent, not masked', async () => {
    await traffic();
    expect(await count({ query: { name: 'Demo grid' } })).toBe(1);
    expect(await count({ query: { name: 'Demo grid', x: '1' } })).toBe(1);
    expect(await count({ query: { name: 'Demo grid', x: '2' } })).toBe(0);
    expect(await count({ header: { 'X-Auth-Token': 'test-token' } })).toBe(5);
    expect(await count({ header: { 'x-auth-token': 'wrong' } })).toBe(1);
    expect(await count({ header: { 'content-type': 'application/json', 'x-auth-token': 'test-token' } })).toBe(3);
  });

  it('matches body text and a partial JSON body', async () => {
    await traffic();
    expect(await count({ bodyContains: 'second release' })).toBe(1);
    expect(await count({ bodyContains: '"title":"Deploy' })).toBe(2);
    expect(await count({ bodyJson: { title: 'Rollback' } })).toBe(1);
    expect(await count({ bodyJson: { title: 'Deploy 1.2', domainIds: [11] } })).toBe(1);
    expect(await count({ bodyJson: { domainIds: [11, 12] } })).toBe(0);
    expect(await count({ bodyJson: { title: 'Deploy 1.2', colour: 'red' } })).toBe(0);
    expect(await count({ method: 'POST', path: ANNOTATIONS, bodyJson: { title: 'Deploy 1.3' } })).toBe(1);
  });

  it('finds the matching entries newest first, with their bodies, at most limit', async () => {
    await traffic();
    const found = await find({ method: 'POST', bodyContains: 'Deploy' });
    expect(found.map((e) => JSON.parse(e.body as string).title)).toEqual(['Deploy 1.3', 'Deploy 1.2']);
    expect((found[0].id as number) > (found[1].id as number)).toBe(true);
    expect(await find({ method: 'POST', limit: 1 })).toHaveLength(1);
    expect(await find({ path: '/nowhere' })).toEqual([]);
  });

  it('refuses a bad matcher with 400 naming the field', async () => {
    ({ app } = await makeApp(authSeed()));
    const cases: Array<[unknown, string]> = [
      [{ colour: 'red' }, 'colour'],
      [{ method: 'G T' }, 'method'],
      [{ status: 'abc' }, 'status'],
      [{ path: '' }, 'path'],
      [{ path: `/${'a'.repeat(300)}` }, "'path': longer than 256 characters"],
      [{ header: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'])) }, "'header': 40 names, at most 32"],
      [{ query: { name: 1 } }, 'query'],
      [{ bodyContains: 5 }, 'bodyContains'],
      [{ bodyJson: JSON.parse(`${'['.repeat(70)}1${']'.repeat(70)}`) }, 'bodyJson'],
    ];
    for (const [matcher, field] of cases) {
      const res = await post('/_emulator/journal/count', matcher);
      expect(res.statusCode, JSON.stringify(matcher)).toBe(400);
      expect(res.json().message, JSON.stringify(matcher)).toContain(field);
    }
    const limited = await post('/_emulator/journal/find', { limit: 0 });
    expect(limited.statusCode).toBe(400);
    expect(limited.json().message).toContain('limit');
    expect((await app.inject({ url: '/_emulator/journal/count' })).statusCode).toBe(405);
  });

  it('is protected by the admin token like the rest of the control API', async () => {
    ({ app } = await makeApp(authSeed(), { adminToken: 'admin' }));
    expect((await post('/_emulator/journal/count', {})).statusCode).toBe(401);
    const res = await app.inject({ method: 'POST', url: '/_emulator/journal/count', headers: { authorization: 'Bearer admin' }, payload: {} });
    expect(res.json()).toEqual({ count: 0 });
  });
});

describe('journal search work is bounded', () => {
  it('matches a glob of many stars against long paths without backtracking, and refuses beyond its work budget', () => {
    const journal = new Journal(100);
    const long = `/${'a'.repeat(5000)}`;
    for (let i = 0; i < 100; i++) journal.record(T0, 'GET', long, 404, 0, null);
    // As a backtracking regular expression this glob takes exponential time on such a path.
    const glob = `/${'*a'.repeat(60)}*b`;
    expect(journal.count({ path: glob.slice(0, 12) }).items).toBe(100);
    expect(() => journal.count({ path: glob })).toThrow(JournalMatchError);
    // Past the fault rules' limit of stars, named as such (the matcher is theirs).
    expect(() => journal.count({ path: glob })).toThrow(/more than 32 '\*'/);
    // Within the stars, the work of one search is still bounded.
    expect(() => journal.count({ path: `/*${'a'.repeat(200)}*b` })).toThrow(/too long/);
    // A glob whose literal start turns the entries away costs nothing.
    expect(journal.count({ path: `/b${'*a'.repeat(100)}` }).items).toBe(0);
  });

  it('partial JSON matching compares fields, arrays element by element, and values exactly', () => {
    expect(partialMatch({ a: 1 }, { a: 1, b: 2 })).toBe(true);
    expect(partialMatch({ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 2, d: 3 }] } })).toBe(true);
    expect(partialMatch({ a: [1] }, { a: [1, 2] })).toBe(false);
    expect(partialMatch({ a: '1' }, { a: 1 })).toBe(false);
    expect(partialMatch({ a: null }, { a: null })).toBe(true);
    expect(partialMatch({}, [])).toBe(false);
    expect(partialMatch({ toString: 1 }, {})).toBe(false);
  });
});
