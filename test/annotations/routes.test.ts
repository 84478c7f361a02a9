import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, TEST_USER, authSeed, makeApp } from '../helpers/app.js';
import type { State } from '../../src/state.js';

const BASE = '/concerto/mpulse/api/annotations/v1';
const HOUR = 3_600_000;

let app: FastifyInstance;
afterEach(async () => app?.close());

const domains = [
  { id: 11, name: 'www.example.com' },
  { id: 12, name: 'shop.example.com' },
  { id: 13, name: 'm.example.com' },
];

/** Five annotations: on one domain, on two, tenant-wide, with a range, and one on domain 13. */
function seed(): Partial<State> {
  return {
    ...authSeed(),
    domains,
    annotations: [
      { id: 100, title: 'Deploy', text: 'release 1.2', start: T0 - 5 * HOUR, domainIds: [11], lastModified: T0 - 5 * HOUR, source: 'REST API', type: 'USER_ENTERED', user: 'a@example.com' },
      { id: 101, title: 'Sale', text: 'spring sale', start: T0 - 4 * HOUR, end: T0 - 2 * HOUR, domainIds: [11, 12], source: 'REST API', type: 'USER_ENTERED', user: 'b@example.com' },
      { id: 102, title: 'CDN outage', text: 'all domains', start: T0 - 3 * HOUR, domainIds: [], source: 'mPulse', type: 'MP_SYSTEM_EVENT', user: 'system' },
      { id: 103, title: 'Mobile fix', text: 'm only', start: T0 - 2 * HOUR, domainIds: [13], source: 'REST API', type: 'USER_ENTERED', user: 'a@example.com' },
      // Same start as 103: the id decides the order.
      { id: 99, title: 'Shop fix', text: 'shop only', start: T0 - 2 * HOUR, domainIds: [12], source: 'REST API', type: 'USER_ENTERED', user: 'a@example.com' },
    ],
  };
}

const json = { ...AUTH, 'content-type': 'application/json' };
const ids = (body: Array<{ id: number }>) => body.map((a) => a.id);

async function list(query = ''): Promise<number[]> {
  const res = await app.inject({ url: `${BASE}${query}`, headers: AUTH });
  expect(res.statusCode, res.body).toBe(200);
  return ids(res.json());
}

describe('add, read, update, delete', () => {
  it('adds an annotation and reads back every field of section 2.5', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed()));
    clock.advance(1234);
    const add = await app.inject({
      method: 'POST',
      url: BASE,
      headers: json,
      payload: { title: 'Killed A/B test', start: T0 - HOUR, end: T0, text: 'ref ABCD-1', domainIds: [11, 12] },
    });
    expect(add.statusCode).toBe(200);
    expect(add.json()).toEqual({ id: 1_000_000 });

    const read = await app.inject({ url: `${BASE}/1000000`, headers: AUTH });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      id: 1_000_000,
      title: 'Killed A/B test',
      text: 'ref ABCD-1',
      start: T0 - HOUR,
      end: T0,
      domains: [
        { id: 11, name: 'www.example.com' },
        { id: 12, name: 'shop.example.com' },
      ],
      lastModified: T0 + 1234,
      source: 'REST API',
      type: 'USER_ENTERED',
      user: TEST_USER.userName,
    });
  });

  it('accepts domainIds as a single integer, and omits end when there is no range', async () => {
    ({ app } = await makeApp(seed()));
    const add = await app.inject({ method: 'POST', url: BASE, headers: json, payload: { title: 't', start: T0, text: 'x', domainIds: 13 } });
    const body = (await app.inject({ url: `${BASE}/${add.json().id}`, headers: AUTH })).json();
    expect(body.domains).toEqual([{ id: 13, name: 'm.example.com' }]);
    expect(body).not.toHaveProperty('end');
  });

  it('makes a tenant-wide annotation when domainIds is absent or empty', async () => {
    ({ app } = await makeApp(seed()));
    for (const payload of [{ title: 't', start: T0, text: 'x' }, { title: 't', start: T0, text: 'x', domainIds: [] }]) {
      const add = await app.inject({ method: 'POST', url: BASE, headers: json, payload });
      expect((await app.inject({ url: `${BASE}/${add.json().id}`, headers: AUTH })).json().domains).toEqual([]);
    }
  });

  it('gives each new annotation a seven-digit id after the largest, never reusing a deleted one', async () => {
    ({ app } = await makeApp(seed()));
    const add = () => app.inject({ method: 'POST', url: BASE, headers: json, payload: { title: 't', start: T0, text: 'x' } });
    expect((await add()).json().id).toBe(1_000_000);
    await app.inject({ method: 'DELETE', url: `${BASE}/1000000`, headers: AUTH });
    expect((await add()).json().id).toBe(1_000_001);
  });

  it('updates any subset of fields, answers the whole object and moves lastModified', async () => {
    let clock;
    ({ app, clock } = await makeApp(seed()));
    clock.advance(60_000);
    const put = await app.inject({ method: 'PUT', url: `${BASE}/100`, headers: json, payload: { end: T0 - HOUR, text: 'release 1.2.1' } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({
      id: 100,
      title: 'Deploy',
      text: 'release 1.2.1',
      start: T0 - 5 * HOUR,
      end: T0 - HOUR,
      domains: [{ id: 11, name: 'www.example.com' }],
      lastModified: T0 + 60_000,
      source: 'REST API',
      type: 'USER_ENTERED',
      user: 'a@example.com',
    });
    expect((await app.inject({ url: `${BASE}/100`, headers: AUTH })).json()).toEqual(put.json());

    const domainsOnly = await app.inject({ method: 'PUT', url: `${BASE}/100`, headers: json, payload: { domainIds: 12 } });
    expect(domainsOnly.json().domains).toEqual([{ id: 12, name: 'shop.example.com' }]);
    expect(domainsOnly.json().text).toBe('release 1.2.1');
  });

  it('removes the range with end: null', async () => {
    ({ app } = await makeApp(seed()));
    const put = await app.inject({ method: 'PUT', url: `${BASE}/101`, headers: json, payload: { end: null } });
    expect(put.statusCode).toBe(200);
    expect(put.json()).not.toHaveProperty('end');
  });

  it('keeps the list order when an update moves start', async () => {
    ({ app } = await makeApp(seed()));
    await app.inject({ method: 'PUT', url: `${BASE}/100`, headers: json, payload: { start: T0 - HOUR } });
    expect(await list()).toEqual([101, 102, 99, 103, 100]);
    expect(await list(`?date-start=${T0 - HOUR}`)).toEqual([100]);
  });

  it('deletes with 204 and no body; afterwards read, update and delete answer 404', async () => {
    ({ app } = await makeApp(seed()));
    const del = await app.inject({ method: 'DELETE', url: `${BASE}/102`, headers: AUTH });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await app.inject({ url: `${BASE}/102`, headers: AUTH })).statusCode).toBe(404);
    expect((await app.inject({ method: 'PUT', url: `${BASE}/102`, headers: json, payload: { text: 'x' } })).statusCode).toBe(404);
    const again = await app.inject({ method: 'DELETE', url: `${BASE}/102`, headers: AUTH });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'annotation 102 does not exist' });
    expect(await list()).not.toContain(102);
  });
});

describe('list filters', () => {
  it('lists everything in ascending start, then id', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list()).toEqual([100, 101, 102, 99, 103]);
  });

  it('date-start keeps start >= date-start (inclusive)', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list(`?date-start=${T0 - 3 * HOUR}`)).toEqual([102, 99, 103]);
    expect(await list(`?date-start=${T0 - 3 * HOUR + 1}`)).toEqual([99, 103]);
  });

  it('date-end keeps start <= date-end (inclusive), even when the range ends later', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list(`?date-end=${T0 - 4 * HOUR}`)).toEqual([100, 101]);
    expect(await list(`?date-end=${T0 - 4 * HOUR - 1}`)).toEqual([100]);
  });

  it('both bounds together; an empty window answers an empty array', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list(`?date-start=${T0 - 4 * HOUR}&date-end=${T0 - 2 * HOUR}`)).toEqual([101, 102, 99, 103]);
    expect(await list(`?date-start=${T0 - 2 * HOUR}&date-end=${T0 - 2 * HOUR}`)).toEqual([99, 103]);
    expect(await list(`?date-start=${T0 - HOUR}&date-end=${T0 - 4 * HOUR}`)).toEqual([]);
    expect(await list(`?date-start=${T0}`)).toEqual([]);
  });

  it('domain keeps annotations on that domain plus tenant-wide ones', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list('?domain=11')).toEqual([100, 101, 102]);
    expect(await list('?domain=13')).toEqual([102, 103]);
  });

  it('domain takes a comma-separated list (and repeated parameters)', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list('?domain=12,13')).toEqual([101, 102, 99, 103]);
    expect(await list('?domain=12&domain=13')).toEqual([101, 102, 99, 103]);
    expect(await list('?domain=13,%2011')).toEqual([100, 101, 102, 103]);
  });

  it('domain combined with dates', async () => {
    ({ app } = await makeApp(seed()));
    expect(await list(`?domain=12&date-start=${T0 - 4 * HOUR}`)).toEqual([101, 102, 99]);
    expect(await list(`?domain=12&date-end=${T0 - 3 * HOUR - 1}`)).toEqual([101]);
    expect(await list(`?domain=11,13&date-start=${T0 - 3 * HOUR}&date-end=${T0 - 2 * HOUR}`)).toEqual([102, 103]);
  });

  it('sees annotations as they are added, updated and deleted', async () => {
    ({ app } = await makeApp(seed()));
    const add = await app.inject({ method: 'POST', url: BASE, headers: json, payload: { title: 't', start: T0 - 3 * HOUR, text: 'x', domainIds: 13 } });
    const id = add.json().id;
    expect(await list(`?domain=13&date-start=${T0 - 3 * HOUR}&date-end=${T0 - 3 * HOUR}`)).toEqual([102, id]);
    await app.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: json, payload: { domainIds: [11] } });
    expect(await list('?domain=13')).toEqual([102, 103]);
    await app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers: AUTH });
    expect(await list('?domain=11')).toEqual([100, 101, 102]);
  });

  it('answers {"annotations":[...]} when the list is configured wrapped', async () => {
    ({ app } = await makeApp(seed(), { annotationsListWrapped: true }));
    const res = await app.inject({ url: `${BASE}?domain=13`, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['annotations']);
    expect(ids(res.json().annotations)).toEqual([102, 103]);
    expect(res.json().annotations[1].domains).toEqual([{ id: 13, name: 'm.example.com' }]);
  });

  it('list elements omit end when there is no range', async () => {
    ({ app } = await makeApp(seed()));
    const body = (await app.inject({ url: BASE, headers: AUTH })).json();
    expect(body.find((a: { id: number }) => a.id === 101).end).toBe(T0 - 2 * HOUR);
    expect(body.find((a: { id: number }) => a.id === 100)).not.toHaveProperty('end');
  });
});

describe('errors', () => {
  const bad = async (method: 'POST' | 'PUT', url: string, payload: unknown, message: RegExp) => {
    const res = await app.inject({ method, url, headers: json, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('Bad Request');
    expect(res.json().message).toMatch(message);
  };

  it('400 on a create with invalid JSON, a missing, mistyped or unknown field', async () => {
    ({ app } = await makeApp(seed()));
    await bad('POST', BASE, '{"title":', /not valid JSON/);
    await bad('POST', BASE, '', /body is empty/);
    await bad('POST', BASE, { start: T0, text: 'x' }, /missing required field 'title'/);
    await bad('POST', BASE, { title: 't', text: 'x' }, /missing required field 'start'/);
    await bad('POST', BASE, { title: 't', start: T0 }, /missing required field 'text'/);
    await bad('POST', BASE, { title: 't', start: '1e3', text: 'x' }, /field 'start' must be an integer/);
    await bad('POST', BASE, { title: 't', start: T0 + 0.5, text: 'x' }, /field 'start' must be an integer/);
    await bad('POST', BASE, { title: 7, start: T0, text: 'x' }, /field 'title' must be a string/);
    await bad('POST', BASE, { title: 't', start: T0, text: 'x', end: 'later' }, /field 'end' must be an integer/);
    await bad('POST', BASE, { title: 't', start: T0, text: 'x', domainIds: 'x' }, /field 'domainIds' must be an integer .*or an array of integers/);
    await bad('POST', BASE, { title: 't', start: T0, text: 'x', domainIds: [11, 'x'] }, /field 'domainIds.1' must be an integer/);
    await bad('POST', BASE, { title: 't', start: T0, text: 'x', domainId: 11 }, /unknown field 'domainId'/);
    await bad('POST', BASE, [{ title: 't', start: T0, text: 'x' }], /body must be a JSON object/);
    expect(await list()).toHaveLength(5);
  });

  it('400 when end is before start, on create and after merging an update', async () => {
    ({ app } = await makeApp(seed()));
    await bad('POST', BASE, { title: 't', start: T0, end: T0 - 1, text: 'x' }, new RegExp(`end \\(${T0 - 1}\\) is before start \\(${T0}\\)`));
    await bad('PUT', `${BASE}/101`, { start: T0 - HOUR }, /end .* is before start/);
    await bad('PUT', `${BASE}/101`, { end: T0 - 5 * HOUR }, /end .* is before start/);
    // Nothing of a refused update is kept.
    await bad('PUT', `${BASE}/101`, { title: 'changed', end: T0 - 5 * HOUR }, /before start/);
    expect((await app.inject({ url: `${BASE}/101`, headers: AUTH })).json().title).toBe('Sale');
    // Moving both together is fine.
    const ok = await app.inject({ method: 'PUT', url: `${BASE}/101`, headers: json, payload: { start: T0 - HOUR, end: T0 } });
    expect(ok.statusCode).toBe(200);
  });

  it('400 on an unknown domain, on create, update and the domain filter', async () => {
    ({ app } = await makeApp(seed()));
    await bad('POST', BASE, { title: 't', start: T0, text: 'x', domainIds: [11, 999] }, /unknown domain id 999/);
    await bad('PUT', `${BASE}/100`, { domainIds: 998 }, /unknown domain id 998/);
    const res = await app.inject({ url: `${BASE}?domain=11,997`, headers: AUTH });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/unknown domain id 997/);
  });

  it('400 on a mistyped or unknown field of an update', async () => {
    ({ app } = await makeApp(seed()));
    await bad('PUT', `${BASE}/100`, { start: 'soon' }, /field 'start' must be an integer/);
    await bad('PUT', `${BASE}/100`, { user: 'me' }, /unknown field 'user'/);
    await bad('PUT', `${BASE}/100`, '{"text": "x",}', /not valid JSON/);
  });

  it('400 on a non-integer id or query value', async () => {
    ({ app } = await makeApp(seed()));
    for (const [method, url] of [['GET', `${BASE}/abc`], ['DELETE', `${BASE}/1.5`], ['GET', `${BASE}/-1`]] as const) {
      const res = await app.inject({ method, url, headers: AUTH });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().message).toMatch(/annotation id .* is not an integer/);
    }
    const put = await app.inject({ method: 'PUT', url: `${BASE}/abc`, headers: json, payload: { text: 'x' } });
    expect(put.statusCode).toBe(400);
    for (const [query, message] of [
      ['date-start=abc', /'date-start' must be an integer .* got 'abc'/],
      ['date-end=1.5', /'date-end' must be an integer/],
      ['date-start=', /'date-start' must be an integer/],
      ['domain=1,x', /'domain' must be a domain id or a comma-separated list .* got '1,x'/],
      ['domain=', /'domain' must be/],
    ] as const) {
      const res = await app.inject({ url: `${BASE}?${query}`, headers: AUTH });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toMatch(message);
    }
  });

  it('401 without a token or with an invalid one, on every operation', async () => {
    ({ app } = await makeApp(seed()));
    for (const [method, url] of [['GET', BASE], ['POST', BASE], ['GET', `${BASE}/100`], ['PUT', `${BASE}/100`], ['DELETE', `${BASE}/100`]] as const) {
      for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', 'x-auth-token': 'nope' }]) {
        const res = await app.inject({ method, url, headers, payload: method === 'POST' || method === 'PUT' ? '{}' : undefined });
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      }
    }
    expect(await list()).toContain(100);
  });

  it('404 on an unknown id', async () => {
    ({ app } = await makeApp(seed()));
    const res = await app.inject({ url: `${BASE}/424242`, headers: AUTH });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'annotation 424242 does not exist' });
  });

  it('415 on a create or update without Content-Type application/json, before the body is read', async () => {
    ({ app } = await makeApp(seed()));
    const payload = JSON.stringify({ title: 't', start: T0, text: 'x' });
    const cases = [
      { method: 'POST' as const, url: BASE, headers: AUTH, payload, message: /no Content-Type/ },
      { method: 'POST' as const, url: BASE, headers: AUTH, payload: undefined, message: /no Content-Type/ },
      { method: 'POST' as const, url: BASE, headers: { ...AUTH, 'content-type': 'text/plain' }, payload, message: /unsupported Content-Type 'text\/plain'/ },
      { method: 'POST' as const, url: BASE, headers: { ...AUTH, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'title=t', message: /application\/json/ },
      { method: 'PUT' as const, url: `${BASE}/100`, headers: AUTH, payload: undefined, message: /no Content-Type/ },
      { method: 'PUT' as const, url: `${BASE}/100`, headers: { ...AUTH, 'content-type': 'text/plain' }, payload: '{"text":"x"}', message: /text\/plain/ },
      // A non-JSON body still gets 415, not 400: the content type is checked first.
      { method: 'PUT' as const, url: `${BASE}/100`, headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'not json', message: /text\/plain/ },
    ];
    for (const c of cases) {
      const res = await app.inject(c);
      expect(res.statusCode, `${c.method} ${JSON.stringify(c.headers)}`).toBe(415);
      expect(res.json()).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
      expect(res.json().message).toMatch(c.message);
    }
    expect(await list()).toHaveLength(5);
    expect((await app.inject({ url: `${BASE}/100`, headers: AUTH })).json().text).toBe('release 1.2');
  });

  it('accepts application/json with a charset parameter', async () => {
    ({ app } = await makeApp(seed()));
    const res = await app.inject({ method: 'POST', url: BASE, headers: { ...AUTH, 'content-type': 'application/json; charset=utf-8' }, payload: { title: 't', start: T0, text: 'x' } });
    expect(res.statusCode).toBe(200);
  });

  it('does not answer 415 for reads and deletes without a Content-Type', async () => {
    ({ app } = await makeApp(seed()));
    expect((await app.inject({ method: 'DELETE', url: `${BASE}/100`, headers: AUTH })).statusCode).toBe(204);
  });
});
