import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, makeDemoApp } from '../helpers/app.js';
import { version } from '../../src/config.js';
import { prefersHtml } from '../../src/ui/home.js';

let app: FastifyInstance;
afterEach(async () => app?.close());

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('GET / (the home page)', () => {
  it('answers a browser with a page naming the version and linking the dashboard, the API reference and health', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ url: '/', headers: { accept: BROWSER } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers.vary).toMatch(/accept/i);
    expect(res.body).toContain(`cloud-emulator ${version()}`);
    const links = [...res.body.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    expect(links).toEqual(expect.arrayContaining(['_emulator/ui/', '_emulator/docs', '_emulator/health']));
    // Every link resolves (relative to /) to something the emulator serves.
    for (const link of links) {
      const target = await app.inject({ url: `/${link}` });
      expect(target.statusCode, link).toBe(200);
    }
  });

  it('answers a program with JSON: name, version, links and the interfaces', async () => {
    ({ app } = await makeApp());
    for (const accept of ['application/json', '*/*', undefined]) {
      const res = await app.inject({ url: '/', headers: accept === undefined ? {} : { accept } });
      expect(res.statusCode, String(accept)).toBe(200);
      expect(res.headers['content-type'], String(accept)).toBe('application/json; charset=utf-8');
      expect(res.json()).toEqual({
        name: 'cloud-emulator',
        version: version(),
        links: { dashboard: '/_emulator/ui/', apiReference: '/_emulator/docs', openapi: '/_emulator/openapi.json', health: '/_emulator/health' },
        interfaces: {
          provisioning: '/concerto/services/rest/CloudService/v1',
          repository: '/concerto/services/rest/RepositoryService/v1',
          annotations: '/concerto/mpulse/api/annotations/v1',
          alerts: '/concerto/mpulse/api/alerts',
          compositions: '/concerto/services/rest/composition/instances/v1',
          results: '/concerto/services/rest/Results/v1',
          query: '/concerto/mpulse/api/v2',
          control: '/_emulator',
        },
      });
    }
  });

  it('chooses by the q-values of the Accept header', () => {
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('application/json, text/html;q=0.5')).toBe(false);
    expect(prefersHtml('text/*;q=0.9, application/json;q=0.1')).toBe(true);
    expect(prefersHtml('text/html;q=0, */*')).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml(`${'a/b;q=1,'.repeat(10_000)}text/html`)).toBe(false); // only the first 64 ranges count
  });

  it('is open with ADMIN_TOKEN set, stays out of the journal and of fault rules, and refuses other methods with 405', async () => {
    ({ app } = await makeDemoApp({ adminToken: 'sesame' }));
    const admin = { authorization: 'Bearer sesame' };
    const fault = await app.inject({ method: 'POST', url: '/_emulator/faults', headers: admin, payload: { path: '*', action: { status: 503 } } });
    expect(fault.statusCode).toBe(201);
    expect((await app.inject({ url: '/' })).statusCode).toBe(200);
    const journal = await app.inject({ url: '/_emulator/journal', headers: admin });
    expect(journal.json().total).toBe(0);
    const post = await app.inject({ method: 'POST', url: '/' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect((await app.inject({ method: 'HEAD', url: '/' })).statusCode).toBe(200);
  });
});

describe('the API reference', () => {
  it('links the dashboard and health from the description the reference page shows', async () => {
    ({ app } = await makeApp());
    const doc = (await app.inject({ url: '/_emulator/openapi.json' })).json();
    expect(doc.info.description).toContain('](/_emulator/ui/)');
    expect(doc.info.description).toContain('](/_emulator/health)');
    expect((await app.inject({ url: '/_emulator/ui/' })).statusCode).toBe(200);
  });
});
