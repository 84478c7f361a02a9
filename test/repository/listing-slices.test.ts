import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { turnsDuring } from '../helpers/loop.js';
import type { ObjectSeed } from '../../src/repository/schemas.js';

const OBJECTS = '/concerto/services/rest/RepositoryService/v1/Objects';

let app: FastifyInstance | undefined;
afterEach(async () => app?.close());

/** `n` licenses of about 600 bytes each, as a fixture holds them. */
const licenses = (n: number): ObjectSeed[] =>
  Array.from({ length: n }, (_, i) => ({
    id: 1000 + i,
    type: 'license',
    name: `Licence ${i}`,
    tenant: 'Default',
    description: `licence number ${i}`,
    schemaVersion: '1.0',
    attributes: [{ name: 'seats', value: String(i % 50) }],
    body: `<license id="${i}">${'x'.repeat(400)}</license>`,
  }));

describe('listing a type of many objects', () => {
  it('writes the list in slices, the event loop turning between them, with the bytes of one serialisation', async () => {
    ({ app } = await makeApp({ ...authSeed(), objects: licenses(10_000) }));
    const { value: res, turns } = await turnsDuring(() => app!.inject({ url: `${OBJECTS}/license`, headers: AUTH }));
    expect(res.statusCode).toBe(200);
    // Written at once, the listing had held the loop for all of its 10,000 objects (0-2 turns).
    expect(turns).toBeGreaterThan(5);
    const { objects } = res.json();
    expect(objects).toHaveLength(10_000);
    expect(objects[9999]).toMatchObject({ id: 10_999, name: 'Licence 9999', type: 'license', attributes: [{ name: 'seats', value: '49' }] });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    // Compact JSON, one text: the same as the serializer of the whole answer writes.
    expect(res.body).toBe(JSON.stringify(res.json()));
    // A short listing is sent whole, with its length.
    const none = await app!.inject({ url: `${OBJECTS}/boomerang`, headers: AUTH });
    expect(none.body).toBe('{"objects":[]}');
    expect(none.headers['content-length']).toBe('14');
  });

  it('answers the objects as they were when asked, however the store changes while it is written', async () => {
    ({ app } = await makeApp({ ...authSeed(), objects: licenses(10_000) }));
    const listing = app.inject({ url: `${OBJECTS}/license?includeDetails=false`, headers: AUTH });
    // Sent while the listing is written: a delete and a create.
    await new Promise((resolve) => setImmediate(resolve));
    const [deleted, created] = await Promise.all([
      app.inject({ method: 'DELETE', url: `${OBJECTS}/license/1000`, headers: AUTH }),
      app.inject({ method: 'PUT', url: `${OBJECTS}/license`, headers: AUTH, payload: { name: 'New licence' } }),
    ]);
    expect([deleted.statusCode, created.statusCode]).toEqual([204, 200]);
    const { objects } = (await listing).json();
    expect(objects).toHaveLength(10_000);
    expect(objects[0]).toMatchObject({ id: 1000, name: 'Licence 0' });
    expect(objects[0].body).toBeUndefined();
  });
});
