import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import fastJson from 'fast-json-stringify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';
import { AnnotationListSchema, AnnotationListWrappedSchema, AnnotationSchema } from '../../src/annotations/schemas.js';
import { ErrorBodySchema } from '../../src/http/errors.js';
import type { State } from '../../src/state.js';

/**
 * The annotation list and read are answered with JSON.stringify instead of the schema
 * serializer (http/view-serializer.ts). That is only right while the store's views build
 * exactly the schema's keys in the schema's order: every body must come out of the schema
 * serializer byte for byte the same, with and without an end, on domains or tenant-wide,
 * with text that needs escaping, wrapped or not.
 */
const BASE = '/concerto/mpulse/api/annotations/v1';
const HOUR = 3_600_000;

let app: FastifyInstance;
afterEach(async () => app?.close());

function seed(): Partial<State> {
  return {
    ...authSeed(),
    domains: [
      { id: 11, name: 'www.example.com' },
      { id: 12, name: 'shöp "quoted" \\ example' },
    ],
    annotations: [
      { id: 100, title: 'Deploy', text: 'release 1.2', start: T0 - 5 * HOUR, domainIds: [11], lastModified: T0 - 5 * HOUR, source: 'REST API', type: 'USER_ENTERED', user: 'a@example.com' },
      { id: 101, title: 'Sale "spring"', text: 'line\nbreak\ttab \u2028 ✓ \ud83d\ude00', start: T0 - 4 * HOUR, end: T0 - 2 * HOUR, domainIds: [11, 12], source: 'REST API', type: 'USER_ENTERED', user: 'b@example.com' },
      { id: 102, title: 'CDN outage', text: 'all domains', start: T0 - 3 * HOUR, domainIds: [], source: 'mPulse', type: 'MP_SYSTEM_EVENT', user: 'system' },
    ],
  };
}

describe('annotation bodies written by JSON.stringify', () => {
  it('are the bytes the schema serializer writes, for the list, a read and an error', async () => {
    ({ app } = await makeApp(seed()));
    const list = await app.inject({ url: `${BASE}?date-start=${T0 - 6 * HOUR}&date-end=${T0}`, headers: AUTH });
    expect(list.statusCode, list.body).toBe(200);
    expect(JSON.parse(list.body)).toHaveLength(3);
    expect(list.body).toBe(fastJson(AnnotationListSchema as object)(JSON.parse(list.body)));
    for (const id of [100, 101, 102]) {
      const one = await app.inject({ url: `${BASE}/${id}`, headers: AUTH });
      expect(one.statusCode, one.body).toBe(200);
      expect(one.body).toBe(fastJson(AnnotationSchema as object)(JSON.parse(one.body)));
    }
    // An annotation made through the interface, and one changed by it.
    const made = await app.inject({ method: 'POST', url: BASE, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { title: 't', text: 'x', start: T0, domainIds: [12] } });
    const id = (made.json() as { id: number }).id;
    await app.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { end: T0 + HOUR } });
    const changed = await app.inject({ url: `${BASE}/${id}`, headers: AUTH });
    expect(changed.json()).toMatchObject({ id, end: T0 + HOUR });
    expect(changed.body).toBe(fastJson(AnnotationSchema as object)(JSON.parse(changed.body)));
    const missing = await app.inject({ url: `${BASE}/999`, headers: AUTH });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe(fastJson(ErrorBodySchema as object)(JSON.parse(missing.body)));
  });

  it('writes the wrapped list as the schema serializer does', async () => {
    ({ app } = await makeApp(seed(), { annotationsListWrapped: true }));
    const list = await app.inject({ url: BASE, headers: AUTH });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.body).toBe(fastJson(AnnotationListWrappedSchema as object)(JSON.parse(list.body)));
  });

  it('lists an annotation as it is now after it was listed, changed and deleted (the kept texts follow)', async () => {
    ({ app } = await makeApp(seed()));
    const url = `${BASE}?date-start=${T0 - 6 * HOUR}&date-end=${T0 + HOUR}`;
    const listed = async () => (await app.inject({ url, headers: AUTH })).json() as Array<{ id: number; title: string; end?: number }>;
    expect((await listed()).map((a) => a.title)).toEqual(['Deploy', 'Sale "spring"', 'CDN outage']);
    const json = { ...AUTH, 'content-type': 'application/json' };
    const put = await app.inject({ method: 'PUT', url: `${BASE}/100`, headers: json, payload: { title: 'Deploy 2', end: T0 - 4.5 * HOUR } });
    expect(put.statusCode, put.body).toBe(200);
    expect((await listed())[0]).toMatchObject({ id: 100, title: 'Deploy 2', end: T0 - 4.5 * HOUR });
    expect((await app.inject({ method: 'DELETE', url: `${BASE}/101`, headers: AUTH })).statusCode).toBe(204);
    expect((await listed()).map((a) => a.id)).toEqual([100, 102]);
    const made = await app.inject({ method: 'POST', url: BASE, headers: json, payload: { title: 'new', text: 'x', start: T0 } });
    expect((await listed()).map((a) => a.id)).toEqual([100, 102, (made.json() as { id: number }).id]);
  });

  it("lists a seed annotation with each world's own load time, though the worlds share its record", async () => {
    const made = await makeApp(seed());
    app = made.app;
    const clock = made.clock;
    const url = (prefix: string) => `${prefix}${BASE}?date-start=${T0 - 6 * HOUR}&date-end=${T0}`;
    const lastModifiedOf102 = async (prefix: string) =>
      ((await app.inject({ url: url(prefix), headers: AUTH })).json() as Array<{ id: number; lastModified: number }>).find((a) => a.id === 102)?.lastModified;
    // 102 gives no lastModified: a world shows its own load time.
    expect(await lastModifiedOf102('')).toBe(T0);
    clock.advance(HOUR);
    expect(await lastModifiedOf102('/sandbox/later')).toBe(T0 + HOUR);
    expect(await lastModifiedOf102('')).toBe(T0);
    expect(await lastModifiedOf102('/sandbox/later')).toBe(T0 + HOUR);
  });
});
