import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { REPOSITORY_PREFIX as R } from '../../src/repository/routes.js';

let app: FastifyInstance;
afterEach(() => app?.close());

const T = { 'x-auth-token': 'demo-token' };

describe('fields the service makes, sent by a client', () => {
  it('are taken on an update when they are what a GET shows (a fetched object sent back as it is)', async () => {
    ({ app } = await makeDemoApp());
    const fetched = (await app.inject({ url: `${R}/Objects/license/9001`, headers: T })).json();
    const res = await app.inject({ method: 'POST', url: `${R}/Objects/license/9001`, headers: T, payload: { ...fetched, description: 'sent back' } });
    expect(res.statusCode).toBe(204);
    expect((await app.inject({ url: `${R}/Objects/license/9001`, headers: T })).json().description).toBe('sent back');
  });

  it('are refused, named, on an update when they differ from what is stored, and nothing changes', async () => {
    ({ app } = await makeDemoApp());
    const before = (await app.inject({ url: `${R}/Objects/license/9001`, headers: T })).json();
    const cases: Array<[string, unknown]> = [
      ['created', '1999-01-01T00:00:00.000Z'],
      ['lastModified', 0],
      ['tenantID', 999],
      ['deleted', true],
      ['hidden', true],
      ['readOnly', true],
      ['effectivePermissions', { read: true, write: false, use: true, fullControl: false }],
      ['ownerID', 7],
    ];
    for (const [field, value] of cases) {
      const res = await app.inject({ method: 'POST', url: `${R}/Objects/license/9001`, headers: T, payload: { description: 'not kept', [field]: value } });
      expect(res.statusCode, field).toBe(400);
      expect(res.json().message, field).toContain(`body field '${field}'`);
    }
    expect((await app.inject({ url: `${R}/Objects/license/9001`, headers: T })).json()).toEqual(before);
  });

  it('are refused on a create, which has no object yet to match', async () => {
    ({ app } = await makeDemoApp());
    for (const [field, value] of [['id', 5], ['created', '2026-01-01T00:00:00.000Z'], ['tenantID', 1]] as const) {
      const res = await app.inject({ method: 'PUT', url: `${R}/Objects`, headers: T, payload: { type: 'statisticalmodel', name: `m-${field}`, [field]: value } });
      expect(res.statusCode, field).toBe(400);
      expect(res.json().message).toContain(`body field '${field}' is made by the service`);
    }
    // null is the same as leaving a field out, as clients that write every field send it.
    const ok = await app.inject({ method: 'PUT', url: `${R}/Objects`, headers: T, payload: { type: 'statisticalmodel', name: 'm', id: null, created: null } });
    expect(ok.statusCode).toBe(200);
  });
});

describe('an action body', () => {
  it('holds only action: another field is refused, named, and the resource does not move', async () => {
    ({ app } = await makeDemoApp());
    const url = '/concerto/services/rest/CloudService/v1/grid/101';
    const res = await app.inject({ method: 'POST', url: `${url}/action`, headers: T, payload: { action: 'start', servers: 5 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe("body: unknown field 'servers': an action body holds only 'action'");
    expect((await app.inject({ url, headers: T })).json().state).toBe('LOADED');
  });
});
