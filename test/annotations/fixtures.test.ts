import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, authSeed, makeApp, makeDemoApp } from '../helpers/app.js';
import { parseState, type State } from '../../src/state.js';

const BASE = '/concerto/mpulse/api/annotations/v1';
const DEMO = { 'x-auth-token': 'demo-token' };
const JSON_DEMO = { ...DEMO, 'content-type': 'application/json' };
const DAY = 86_400_000;

let app: FastifyInstance;
afterEach(async () => app?.close());

interface Listed {
  id: number;
  start: number;
  end?: number;
  domains: Array<{ id: number; name: string }>;
  type: string;
}

describe('demo seed', () => {
  it('has at least 4 domains and 20 annotations within the last 30 days of the clock, of every kind', async () => {
    ({ app } = await makeDemoApp());
    const domains = await app.inject({ url: '/concerto/services/rest/RepositoryService/v1/Objects/domain', headers: DEMO });
    expect(domains.json().objects.length).toBeGreaterThanOrEqual(4);

    const res = await app.inject({ url: BASE, headers: DEMO });
    expect(res.statusCode).toBe(200);
    const all: Listed[] = res.json();
    expect(all.length).toBeGreaterThanOrEqual(20);
    for (const a of all) {
      expect(a.start, `annotation ${a.id}`).toBeGreaterThanOrEqual(T0 - 30 * DAY);
      expect(a.start, `annotation ${a.id}`).toBeLessThanOrEqual(T0);
      if (a.end !== undefined) expect(a.end).toBeGreaterThanOrEqual(a.start);
    }
    expect(all.filter((a) => a.end !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(all.filter((a) => a.domains.length > 1).length).toBeGreaterThanOrEqual(3);
    expect(all.filter((a) => a.domains.length === 0).length).toBeGreaterThanOrEqual(2);
    expect(new Set(all.filter((a) => a.type !== 'USER_ENTERED').map((a) => a.type)).size).toBeGreaterThanOrEqual(2);
    expect(all.map((a) => a.start)).toEqual([...all.map((a) => a.start)].sort((x, y) => x - y));
  });

  it('serves the newcomer walk-through: add, update, filter, read and delete with demo-token', async () => {
    ({ app } = await makeDemoApp());
    const add = await app.inject({ method: 'POST', url: BASE, headers: JSON_DEMO, payload: { title: 'Deploy', start: T0 - DAY, text: 'release', domainIds: 12345 } });
    expect(add.statusCode).toBe(200);
    const { id } = add.json();
    const put = await app.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: JSON_DEMO, payload: { end: T0 } });
    expect(put.json()).toMatchObject({ id, end: T0, user: 'demo@example.com', domains: [{ id: 12345, name: 'www.example.com' }] });
    const filtered: Listed[] = (await app.inject({ url: `${BASE}?date-start=${T0 - DAY}&date-end=${T0}&domain=12345`, headers: DEMO })).json();
    expect(filtered.map((a) => a.id)).toContain(id);
    expect(filtered.every((a) => a.start >= T0 - DAY && (a.domains.length === 0 || a.domains.some((d) => d.id === 12345)))).toBe(true);
    expect((await app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers: DEMO })).statusCode).toBe(204);
    expect((await app.inject({ url: `${BASE}/${id}`, headers: DEMO })).statusCode).toBe(404);
  });
});

const relativeSeed = (annotations: unknown[]): Partial<State> =>
  ({ ...authSeed(), domains: [{ id: 1, name: 'www.example.com' }], annotations }) as Partial<State>;

describe('relative times in the seed', () => {
  it('resolves startAgoMs and endAgoMs against the clock when the seed loads, and again on reset', async () => {
    let clock;
    ({ app, clock } = await makeApp(relativeSeed([{ id: 1, title: 't', text: 'x', startAgoMs: 2 * DAY, endAgoMs: DAY, user: 'u' }])));
    const store = () => app.world.stores.annotations;
    expect(store().get(1)).toMatchObject({ start: T0 - 2 * DAY, end: T0 - DAY, lastModified: T0, source: 'REST API', type: 'USER_ENTERED' });
    clock.advance(10 * DAY);
    app.world.reset();
    expect(store().get(1)).toMatchObject({ start: T0 + 8 * DAY, end: T0 + 9 * DAY });
  });

  it('refuses a seed with both or neither form of start, both forms of end, or end before start', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ id: 1, title: 't', text: 'x', user: 'u' }, /\$\.annotations\[0\]: give exactly one of start and startAgoMs \(it has neither\) \(id 1\)/],
      [{ id: 1, title: 't', text: 'x', start: T0, startAgoMs: 5, user: 'u' }, /give exactly one of start and startAgoMs/],
      [{ id: 1, title: 't', text: 'x', start: T0, end: T0 + 1, endAgoMs: 0, user: 'u' }, /give at most one of end and endAgoMs/],
      [{ id: 1, title: 't', text: 'x', startAgoMs: 10, endAgoMs: 20, user: 'u' }, /endAgoMs \(20\) is longer ago than startAgoMs \(10\)/],
    ];
    for (const [annotation, message] of cases) {
      await expect(makeApp(relativeSeed([annotation]))).rejects.toThrow(message);
    }
  });

  it('lists references before the rules of each annotation, every one of both in order, whatever pass found them', async () => {
    const a = (id: number, more: object) => ({ id, title: 't', text: 'x', user: 'u', start: T0, domainIds: [7], ...more });
    const annotations = [a(1, {}), a(2, { end: T0 - 1 }), a(3, { domainIds: [7, 8] }), a(4, { start: T0 + 5, end: T0 }), a(5, { domainIds: [9] })];
    const domains = [{ id: 7, name: 'www.example.com' }];
    for (const order of [annotations, [...annotations].reverse().map((x, i) => ({ ...x, id: 10 + i }))]) {
      const failed = (() => {
        try {
          parseState({ domains, annotations: order }, 'body', { now: T0 });
        } catch (err) {
          return (err as Error).message.split('\n');
        }
        return [];
      })();
      const refs = failed.filter((line) => line.includes('no domain'));
      const rules = failed.filter((line) => line.includes('before start'));
      expect(failed).toEqual([...refs, ...rules]);
      expect(refs).toHaveLength(2);
      expect(rules).toHaveLength(2);
    }
    // Nothing to report: the state loads, each check's pass made once by the first.
    expect(() => parseState({ domains, annotations: [a(1, {}), a(2, { end: T0 + 1 })] }, 'body', { now: T0 })).not.toThrow();
    // A relative time with a reference missing: both still found.
    expect(() => parseState({ domains, annotations: [a(1, { start: undefined, startAgoMs: 5, endAgoMs: 10, domainIds: [8] })] }, 'body', { now: T0 })).toThrow(
      /no domain 8[\s\S]*longer ago|no domain 8[\s\S]*before start/,
    );
  });

  it('refuses such a seed in a state import with 400, keeping the old state', async () => {
    ({ app } = await makeApp(relativeSeed([{ id: 1, title: 't', text: 'x', start: T0, user: 'u' }])));
    const state = { ...app.world.exportState(), annotations: [{ id: 2, title: 't', text: 'x', startAgoMs: 1, start: T0, user: 'u' }] };
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/give exactly one of start and startAgoMs/);
    expect(app.world.stores.annotations.get(1).start).toBe(T0);
  });
});

describe('export', () => {
  it('writes relative times and those given on stage relative to its clock, and re-imports to the same answers', async () => {
    let clock;
    ({ app, clock } = await makeDemoApp());
    clock.advance(5000);
    const add = await app.inject({ method: 'POST', url: BASE, headers: JSON_DEMO, payload: { title: 'new', start: T0, end: T0 + 1000, text: 'x', domainIds: [12345, 12346] } });
    await app.inject({ method: 'PUT', url: `${BASE}/1921102`, headers: JSON_DEMO, payload: { title: 'renamed', end: null } });
    await app.inject({ method: 'PUT', url: `${BASE}/1921104`, headers: JSON_DEMO, payload: { start: T0 - DAY } });
    await app.inject({ method: 'DELETE', url: `${BASE}/1921103`, headers: DEMO });

    const exported = app.world.exportState();
    expect(exported.clock).toEqual({ now: T0 + 5000, scale: 1, frozen: true, loadedAt: T0 });
    const byId = new Map(exported.annotations.map((a) => [a.id, a]));
    // The seed's startAgoMs, aged by the 5 s the clock moved; an end removed stays removed.
    expect(byId.get(1921101)).toMatchObject({ startAgoMs: 2527200000 + 5000, endAgoMs: 2520000000 + 5000 });
    expect(byId.get(1921102)).toMatchObject({ title: 'renamed', startAgoMs: 2419200000 + 5000 });
    expect(byId.get(1921102)).not.toHaveProperty('endAgoMs');
    // A time given while the world ran (by a create or an update) is written relative too, so
    // that it keeps its age however the export is loaded; a negative one is after the clock.
    expect(byId.get(1921104)).toMatchObject({ startAgoMs: DAY + 5000 });
    expect(byId.get(1921104)).not.toHaveProperty('start');
    expect(byId.get(add.json().id)).toMatchObject({ startAgoMs: 5000, endAgoMs: 4000, lastModified: T0 + 5000 });
    for (const a of exported.annotations) expect(typeof a.lastModified).toBe('number');
    const before = (await app.inject({ url: BASE, headers: DEMO })).json();
    const state = parseState(JSON.parse(JSON.stringify(exported)), 'export');

    // On its clock (as PUT /_emulator/state loads it), the very same answers.
    const copy = await makeApp({});
    try {
      expect((await copy.app.inject({ method: 'PUT', url: '/_emulator/state', payload: state })).statusCode).toBe(200);
      const after = await copy.app.inject({ url: BASE, headers: DEMO });
      expect(after.json()).toEqual(before);
      expect(copy.clock.now()).toBe(T0 + 5000);
      expect(copy.app.world.exportState()).toEqual(exported);
    } finally {
      await copy.app.close();
    }
  });
});
