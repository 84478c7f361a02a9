import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.js';

let app: FastifyInstance | undefined;
afterEach(async () => app?.close());

describe('GET /_emulator', () => {
  it('lists every operation of the control API, as its routes are registered, with their summaries', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ url: '/_emulator' });
    expect(res.statusCode).toBe(200);
    const index = res.json() as { operations: Array<{ method: string; path: string; summary: string }>; openapi: string; docs: string };
    expect(index.openapi).toBe('/_emulator/openapi.json');
    // Exactly the control operations the OpenAPI document has (made from the same routes), the index itself aside.
    await app.ready();
    const document = app.swagger() as { paths: Record<string, Record<string, { summary?: string }>> };
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/_emulator/'))
      .flatMap(([path, item]) => Object.entries(item).filter(([m]) => m !== 'head').map(([m, op]) => `${m.toUpperCase()} ${path} ${op.summary ?? ''}`));
    expect(index.operations.map((o) => `${o.method} ${o.path} ${o.summary}`).sort()).toEqual(documented.sort());
    expect(index.operations).toContainEqual(expect.objectContaining({ method: 'POST', path: '/_emulator/clock/advance' }));
  });

  it('needs the admin token like the rest of the control API', async () => {
    ({ app } = await makeApp({}, { adminToken: 's3cret' }));
    expect((await app.inject({ url: '/_emulator' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/_emulator', headers: { authorization: 'Bearer s3cret' } })).statusCode).toBe(200);
  });
});

describe('X-Emulator-Now', () => {
  it("carries the emulated time of every answer, the sandbox's own in a sandbox, and is exposed to pages", async () => {
    let clock;
    ({ app, clock } = await makeApp());
    const T = clock.now();
    expect((await app.inject({ url: '/_emulator/health' })).headers['x-emulator-now']).toBe(String(T));
    clock.advance(90_000);
    const missing = await app.inject({ url: '/concerto/services/rest/CloudService/v1/grid/1', headers: { origin: 'http://localhost:5173' } });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['x-emulator-now']).toBe(String(T + 90_000));
    expect(String(missing.headers['access-control-expose-headers'])).toContain('x-emulator-now');
    // A sandbox starts at the default world's time and keeps a clock of its own.
    await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1' });
    await app.inject({ method: 'POST', url: '/sandbox/w1/_emulator/clock/advance', payload: { ms: 60_000 } });
    expect((await app.inject({ url: '/sandbox/w1/_emulator/health' })).headers['x-emulator-now']).toBe(String(T + 150_000));
    expect((await app.inject({ url: '/_emulator/health' })).headers['x-emulator-now']).toBe(String(T + 90_000));
  });
});
