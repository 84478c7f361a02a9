import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pageFiles } from '../../src/ui/plugin.js';
import { PATHS, SANDBOX_PREFIX } from '../../src/http/paths.js';
import { AREAS, INTERFACES } from '../../src/interfaces.js';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from '../../src/world/sandboxes.js';
import { areaIn } from '../../src/ui/static/areas.js';
import { OBJECT_TYPES } from '../../src/repository/schemas.js';
import { NO_TEARDOWN_STATES, STATE_FAMILIES } from '../../src/provisioning/schemas.js';
import { ACCEPTED_IN, INSTANCE_FAMILIES } from '../../src/compositions/lifecycles.js';

const UI = '/_emulator/ui';
let app: FastifyInstance;
afterEach(async () => app?.close());

describe('dashboard files', () => {
  it('redirects the bare path to the folder form, keeping the query, so relative links resolve', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ url: `${UI}?x=1` });
    expect(res.statusCode).toBe(302);
    const target = new URL(res.headers.location as string, `http://localhost${UI}?x=1`);
    expect(`${target.pathname}${target.search}`).toBe(`${UI}/?x=1`);
  });

  it('serves the page, its script, style sheet and icon with their types and a strict CSP', async () => {
    ({ app } = await makeApp());
    const page = await app.inject({ url: `${UI}/` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).toContain('<script type="module" src="app.js"></script>');
    const types: Record<string, string> = {
      'app.js': 'text/javascript; charset=utf-8',
      'style.css': 'text/css; charset=utf-8',
      'favicon.svg': 'image/svg+xml',
    };
    for (const [file, type] of Object.entries(types)) {
      const res = await app.inject({ url: `${UI}/${file}` });
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['content-type'], file).toBe(type);
    }
  });

  it('links only files it serves, and loads nothing from another origin', async () => {
    ({ app } = await makeApp());
    const page = (await app.inject({ url: `${UI}/` })).body;
    const linked = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(linked.length).toBeGreaterThan(2);
    for (const link of linked) {
      expect(link, link).not.toMatch(/^[a-z]+:|^\/\//i);
      expect((await app.inject({ url: `${UI}/${link}` })).statusCode, link).toBe(200);
    }
    // Every module the page loads, following the imports from app.js.
    const imports: string[] = [];
    for (const queue = ['app.js']; queue.length > 0; ) {
      const file = queue.shift()!;
      const res = await app.inject({ url: `${UI}/${file}` });
      expect(res.statusCode, file).toBe(200);
      expect(res.headers['content-type'], file).toBe('text/javascript; charset=utf-8');
      const script = res.body;
      expect(script, file).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      for (const [, name] of script.matchAll(/^import [^;]* from '\.\/([^']+)';$/gm)) {
        if (imports.includes(name)) continue;
        imports.push(name);
        queue.push(name);
      }
    }
    expect(imports).toContain('states.js');
  });

  it('stays under 200 KB in total', () => {
    const { dir, types } = pageFiles();
    const total = [...types.keys()].reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeGreaterThan(10_000);
    expect(total).toBeLessThan(200 * 1024);
  });

  it('answers a revalidation with 304 when the file did not change', async () => {
    ({ app } = await makeApp());
    const first = await app.inject({ url: `${UI}/app.js` });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const again = await app.inject({ url: `${UI}/app.js`, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const changed = await app.inject({ url: `${UI}/app.js`, headers: { 'if-none-match': '"other"' } });
    expect(changed.statusCode).toBe(200);
  });

  it('answers an unknown file with the JSON 404 body, and other methods with 405', async () => {
    ({ app } = await makeApp());
    for (const file of ['nope.js', '__proto__', 'constructor', '..%2Fplugin.ts', 'plugin.ts']) {
      const res = await app.inject({ url: `${UI}/${file}` });
      expect(res.statusCode, file).toBe(404);
      expect(res.json(), file).toMatchObject({ statusCode: 404, error: 'Not Found' });
      expect(res.json().message).toMatch(/the dashboard has no file/);
    }
    const post = await app.inject({ method: 'POST', url: `${UI}/app.js` });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('keeps the dashboard out of the OpenAPI document', async () => {
    ({ app } = await makeApp());
    const doc = (await app.inject({ url: '/_emulator/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith(UI))).toEqual([]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/_emulator/'))).toBe(true);
  });

  it('serves the page without the admin token, while the control API it calls still needs one', async () => {
    ({ app } = await makeApp({}, { adminToken: 'let-me-in' }));
    for (const file of ['', 'app.js', 'states.js', 'style.css']) {
      expect((await app.inject({ url: `${UI}/${file}` })).statusCode, file).toBe(200);
    }
    expect((await app.inject({ url: '/_emulator/clock' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/_emulator/clock', headers: { authorization: 'Bearer let-me-in' } })).statusCode).toBe(200);
  });

  it('tells the page the path prefixes and who may call what, from the table the server uses', async () => {
    ({ app } = await makeApp({}, { adminToken: 'let-me-in' }));
    const res = await app.inject({ url: `${UI}/paths.json` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    const interfaces = INTERFACES.map(({ name, prefix, label }) => ({ name, prefix, label }));
    expect(interfaces.slice(0, 3)).toEqual([
      { name: 'repository', prefix: PATHS.repository, label: 'Repository' },
      { name: 'provisioning', prefix: PATHS.provisioning, label: 'Provisioning' },
      { name: 'annotations', prefix: PATHS.annotations, label: 'Annotations' },
    ]);
    // The alerts come last: their rules read the Query API's data, listed before them.
    expect(interfaces.at(-1)).toEqual({ name: 'alerts', prefix: PATHS.alerts, label: 'Alerts' });
    const sandboxes = { prefix: SANDBOX_PREFIX, name: SANDBOX_NAME.source, rule: SANDBOX_NAME_RULE };
    const states = { ...STATE_FAMILIES, noTeardown: NO_TEARDOWN_STATES };
    const instances = { acceptedIn: ACCEPTED_IN, families: INSTANCE_FAMILIES };
    expect(res.json()).toEqual({ paths: PATHS, areas: AREAS.areas, interfaces, sandboxes, objectTypes: [...OBJECT_TYPES], states, instances });
    expect(new RegExp(res.json().sandboxes.name).test('w1')).toBe(true);
    const again = await app.inject({ url: `${UI}/paths.json`, headers: { 'if-none-match': res.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    const post = await app.inject({ method: 'POST', url: `${UI}/paths.json` });
    expect(post.statusCode).toBe(405);
  });

  it("matches a path to its area as the server does, so the page sends each call the credentials it needs", () => {
    const paths = [
      ...Object.values(PATHS),
      ...Object.values(PATHS).map((p) => `${p}/x`),
      `${PATHS.control}x`,
      `${PATHS.provisioning}/grid/101`,
      `${PATHS.provisioning}/environment/301/`,
      '/concerto/services/rest/CloudService/v2/grid',
      `${PATHS.repository}/Tokens`,
      `${PATHS.repository}/Objects/grid`,
      `${PATHS.alerts}/demo-alert/fire`,
      '/',
      '/elsewhere',
    ];
    for (const path of paths) {
      const server = AREAS.of(path);
      expect(areaIn(AREAS.areas, path) ?? null, path).toEqual(AREAS.areas.includes(server) ? server : null);
    }
  });

  it("gives the page the demo's title from the seed's fixtures, in every world, and nothing when they give none", async () => {
    const demo = { title: 'Checkout under load', subtitle: 'A grid that fails, then one that does not' };
    ({ app } = await makeApp({ demo }));
    const settings = (await app.inject({ url: `${UI}/paths.json` })).json();
    expect(settings.demo).toEqual(demo);
    expect((await app.inject({ url: `/sandbox/w1${UI}/paths.json` })).json().demo).toEqual(demo);
    await app.close();
    ({ app } = await makeApp());
    expect((await app.inject({ url: `${UI}/paths.json` })).json()).not.toHaveProperty('demo');
  });

  it('is served under /sandbox/<name>/ too, paths.json and all, by that sandbox', async () => {
    ({ app } = await makeApp());
    for (const file of ['', 'app.js', 'paths.json']) {
      expect((await app.inject({ url: `/sandbox/w1${UI}/${file}` })).statusCode, file).toBe(200);
    }
    const settings = (await app.inject({ url: `/sandbox/w1${UI}/paths.json` })).json();
    expect(settings).toEqual((await app.inject({ url: `${UI}/paths.json` })).json());
  });

  it('is not recorded in the request journal', async () => {
    ({ app } = await makeApp());
    await app.inject({ url: `${UI}/` });
    await app.inject({ url: `${UI}/app.js` });
    const journal = (await app.inject({ url: '/_emulator/journal' })).json();
    expect(journal.entries.filter((e: { path: string }) => e.path.startsWith(UI))).toEqual([]);
  });
});
