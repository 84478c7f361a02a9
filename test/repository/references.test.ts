import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { REPOSITORY_PREFIX as R } from '../../src/repository/routes.js';

let app: FastifyInstance;
afterEach(() => app?.close());

const T = { 'x-auth-token': 'demo-token' };
/** The demo seed's domain and boomerang build (fixtures/objects.json). */
const DOMAIN = 12346;
const BUILD = { id: 9101, name: 'boomerang-1.737.0' };

const get = async (path: string) => (await app.inject({ url: `${R}${path}`, headers: T })).json();
const post = (path: string, payload: object) => app.inject({ method: 'POST', url: `${R}${path}`, headers: T, payload });

describe('references on repository objects', () => {
  it("are stored by POST, read back by get and list, and removed by POSTing them without it (a domain's boomerang build)", async () => {
    ({ app } = await makeDemoApp());
    const set = await post(`/Objects/domain/${DOMAIN}`, { references: [{ name: BUILD.name, type: 'boomerang', internalID: 'boomr' }] });
    expect(set.statusCode).toBe(204);
    const expected = [{ internalID: 'boomr', id: BUILD.id, type: 'boomerang', name: BUILD.name }];
    expect((await get(`/Objects/domain/${DOMAIN}`)).references).toEqual(expected);
    const listed = (await get('/Objects/domain')).objects.find((o: { id: number }) => o.id === DOMAIN);
    expect(listed.references).toEqual(expected);
    // A POST that leaves them out leaves them as they are; an empty list removes them.
    expect((await post(`/Objects/domain/${DOMAIN}`, { description: 'changed' })).statusCode).toBe(204);
    expect((await get(`/Objects/domain/${DOMAIN}`)).references).toEqual(expected);
    expect((await post(`/Objects/domain/${DOMAIN}`, { references: [] })).statusCode).toBe(204);
    expect((await get(`/Objects/domain/${DOMAIN}`)).references).toBeUndefined();
  });

  it('take the element as a GET gives it back (id as text too), and keep what they say of the slot', async () => {
    ({ app } = await makeDemoApp());
    const created = await app.inject({
      method: 'PUT',
      url: `${R}/Objects`,
      headers: T,
      payload: { type: 'statisticalmodel', name: 'uses a build', references: [{ internalID: 'boomr', id: String(BUILD.id), embedded: false, type: 'boomerang', path: '/boomerang', name: BUILD.name }] },
    });
    expect(created.statusCode).toBe(200);
    const { id } = created.json();
    expect((await get(`/Objects/statisticalmodel/${id}`)).references).toEqual([
      { internalID: 'boomr', id: BUILD.id, embedded: false, type: 'boomerang', path: '/boomerang', name: BUILD.name },
    ]);
  });

  it('refuse a reference to nothing with a 400 that names it, and change nothing', async () => {
    ({ app } = await makeDemoApp());
    const before = await get(`/Objects/domain/${DOMAIN}`);
    const cases: Array<[object, string]> = [
      [{ name: 'boomerang-9.9.9', type: 'boomerang' }, "body: references[0]: no boomerang object named 'boomerang-9.9.9' in tenant 'Default'"],
      [{ id: 424242, type: 'boomerang' }, "body: references[0]: no boomerang object with id 424242 in tenant 'Default'"],
      [{ id: BUILD.id, name: 'other', type: 'boomerang' }, `body: references[0]: boomerang ${BUILD.id} is named '${BUILD.name}', not 'other'`],
      [{ type: 'boomerang' }, "body: references[0]: name the referenced boomerang object by 'name' or 'id'"],
      [{ name: BUILD.name, type: 'boomerrang' }, "body: references[0]: unknown object type 'boomerrang'"],
    ];
    for (const [reference, message] of cases) {
      const res = await post(`/Objects/domain/${DOMAIN}`, { description: 'not kept', references: [reference] });
      expect(res.statusCode, JSON.stringify(reference)).toBe(400);
      expect(res.json().message).toContain(message);
    }
    const unknownField = await post(`/Objects/domain/${DOMAIN}`, { references: [{ name: BUILD.name, type: 'boomerang', colour: 'red' }] });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().message).toContain('colour');
    expect(await get(`/Objects/domain/${DOMAIN}`)).toEqual(before);
  });

  it('keep a referenced object from being deleted (409 naming who uses it), until the reference is gone', async () => {
    ({ app } = await makeDemoApp());
    await post(`/Objects/domain/${DOMAIN}`, { references: [{ name: BUILD.name, type: 'boomerang', internalID: 'boomr' }] });
    const refused = await app.inject({ method: 'DELETE', url: `${R}/Objects/boomerang/${BUILD.id}`, headers: T });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain(`domain ${DOMAIN}`);
    await post(`/Objects/domain/${DOMAIN}`, { references: [] });
    expect((await app.inject({ method: 'DELETE', url: `${R}/Objects/boomerang/${BUILD.id}`, headers: T })).statusCode).toBe(204);
  });

  it('go out with an export and come back with an import', async () => {
    ({ app } = await makeDemoApp());
    await post(`/Objects/domain/${DOMAIN}`, { references: [{ name: BUILD.name, type: 'boomerang', internalID: 'boomr' }] });
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    const entry = state.objects.find((o: { type: string; id: number }) => o.type === 'domain' && o.id === DOMAIN);
    expect(entry.references).toEqual([{ internalID: 'boomr', id: BUILD.id, type: 'boomerang', name: BUILD.name }]);
    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect((await get(`/Objects/domain/${DOMAIN}`)).references).toBeUndefined();
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
    expect(put.statusCode).toBe(200);
    expect((await get(`/Objects/domain/${DOMAIN}`)).references).toEqual(entry.references);
  });

  it('in a state or fixture, a reference to no object is a problem named by its JSON path', async () => {
    ({ app } = await makeDemoApp());
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    const i = state.objects.findIndex((o: { type: string }) => o.type === 'statisticalmodel');
    state.objects[i].references = [{ id: 777, type: 'boomerang', name: 'gone' }];
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(`$.objects[${i}].references[0]: no boomerang object 777 to reference`);
  });
});
