import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';

let app: FastifyInstance;
afterEach(async () => app?.close());

/** A bug inside a store must never leak as a crash, an HTML page or a stack trace. */
describe('unexpected errors', () => {
  const boom = () => {
    throw new TypeError('secret internal detail');
  };

  it.each([
    ['provisioning', 'getGrid', { url: '/concerto/services/rest/CloudService/v1/grid/1', headers: AUTH }],
    ['annotations', 'listText', { url: '/concerto/mpulse/api/annotations/v1', headers: AUTH }],
  ] as const)('answer 500 with the JSON error body in %s', async (store, method, request) => {
    ({ app } = await makeApp(authSeed()));
    (app.world.stores[store] as unknown as Record<string, unknown>)[method] = boom;
    const res = await app.inject(request);
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'internal server error; try again later' });
    expect(res.body).not.toContain('secret internal detail');
    // The server keeps answering afterwards.
    expect((await app.inject({ url: '/_emulator/health' })).statusCode).toBe(200);
  });

  it('answers an unknown path with the JSON 404 body', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ url: '/nothing/here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'no resource at GET /nothing/here' });
  });
});
