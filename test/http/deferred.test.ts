import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { DOCS_PATH, DOCS_ROUTES, recordSwaggerUi } from '../../src/http/openapi.js';
import { makeApp } from '../helpers/app.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('the API reference, run on its first request', () => {
  it('declares at start exactly the routes and hooks @fastify/swagger-ui adds', async () => {
    ({ app } = await makeApp());
    const recorded = await recordSwaggerUi(app);
    const routes = recorded.routes.map((r) => ({
      url: r.url.slice(DOCS_PATH.length),
      method: r.method,
      pageHooks: typeof r.options.onRequest === 'function',
      ...(r.errorHandler ? { files: true } : {}),
    }));
    expect(routes).toEqual(DOCS_ROUTES);
    for (const r of recorded.routes) expect(r.options.schema).toEqual({ hide: true });
    // Its one hook: the page's policy on every answer.
    expect(recorded.hooks.map((h) => h.name)).toEqual(['onSend']);
  });

  it('serves its files as @fastify/static does: GET, HEAD, a conditional GET, and the JSON 404 of a file it lacks', async () => {
    ({ app } = await makeApp());
    const url = `${DOCS_PATH}/static/swagger-ui.css`;
    const get = await app.inject({ url });
    expect(get.statusCode).toBe(200);
    expect(get.headers['content-type']).toMatch(/^text\/css/);
    expect(get.headers['content-security-policy']).toMatch(/^default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'/);
    expect(get.headers.etag).toBeDefined();
    expect(get.headers['last-modified']).toBeDefined();
    expect(Number(get.headers['content-length'])).toBe(get.rawPayload.length);
    expect(get.body.length).toBeGreaterThan(1000);
    const head = await app.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.body).toBe('');
    const again = await app.inject({ url, headers: { 'if-none-match': String(get.headers.etag) } });
    expect(again.statusCode).toBe(304);
    const missing = await app.inject({ url: `${DOCS_PATH}/static/no-such-file.js` });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('answers its page, its document as JSON and YAML, with the page\'s headers', async () => {
    ({ app } = await makeApp());
    const page = await app.inject({ url: `${DOCS_PATH}/` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/swagger-initializer\.js/);
    const yaml = await app.inject({ url: `${DOCS_PATH}/yaml` });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/x-yaml/);
    expect(yaml.body).toMatch(/^openapi: 3\.1\.0$/m);
    expect(yaml.headers['x-frame-options']).toBe('SAMEORIGIN');
  });
});

describe('the OpenAPI document, built on its first use', () => {
  it('is asked for only once the app is ready, as @fastify/swagger requires, and then holds every route', async () => {
    app = await buildApp();
    expect(() => app!.swagger()).toThrow('.swagger() must be called after .ready()');
    await app.ready();
    const document = app.swagger() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/_emulator/health');
    expect(Object.keys(document.paths).length).toBeGreaterThan(50);
    // Built once: the same object again.
    expect(app.swagger()).toBe(document);
  });
});
