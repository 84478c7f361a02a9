import { readdir, readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv } from 'ajv';
import { makeDemoApp } from '../helpers/app.js';
import { checkResponse, documentPath } from '../helpers/conformance.js';
import { fixtureJsonSchemaText } from '../../src/fixture-schema.js';
import { INTERFACES } from '../../src/interfaces.js';

let app: FastifyInstance;
afterEach(async () => app?.close());

type Operation = { tags?: string[]; summary?: string; responses: Record<string, unknown>; security?: unknown[] };
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

async function documentOf(a: FastifyInstance): Promise<Document> {
  const res = await a.inject({ url: '/_emulator/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  return res.json();
}

/** `/grid/{gridId}/` and `/grid/{id}` are the same operation for this comparison. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/\/$/, '');

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
const QUERY = '/concerto/mpulse/api/v2';

/** Every operation of interfaces.md section 4, the Repository calls and the control API. */
const EXPECTED: Array<[string, string]> = [
  ['post', `${CLOUD}/grid/{}/action`],
  ['get', `${CLOUD}/grid/{}`],
  ['get', `${CLOUD}/grid`],
  ['get', `${CLOUD}/cloudserver`],
  ['get', `${CLOUD}/cloudserver/{}`],
  ['post', `${CLOUD}/cloudserver/{}/action`],
  ['get', `${CLOUD}/rsdb/{}`],
  ['post', `${CLOUD}/rsdb/{}/action`],
  ['get', `${CLOUD}/environment/{}`],
  ['post', `${CLOUD}/environment/{}/action`],
  ['post', ANNOTATIONS],
  ['get', ANNOTATIONS],
  ['get', `${ANNOTATIONS}/{}`],
  ['put', `${ANNOTATIONS}/{}`],
  ['delete', `${ANNOTATIONS}/{}`],
  ['post', `${ALERTS}/{}/fire`],
  ['post', `${ALERTS}/{}/clear`],
  ['put', `${REPO}/Tokens`],
  ['delete', `${REPO}/Tokens/{}`],
  ['get', `${REPO}/Objects/{}`],
  ['get', '/_emulator/health'],
  ['post', '/_emulator/reset'],
  ['get', '/_emulator/state'],
];

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3 document', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('lists every emulated interface of the list in its introduction, by name and base paths', async () => {
    ({ app } = await makeDemoApp());
    const { info } = (await documentOf(app)) as Document & { info: { description: string } };
    for (const i of INTERFACES) {
      const line = info.description.split('\n').find((l) => l.startsWith(`* **${i.label}** (`));
      expect(line, i.label).toContain(`\`${i.prefix}\``);
    }
    expect(info.description).toContain('`/concerto/services/rest/Results/v1`');
  });

  it('describes the /sandbox/<name> prefix, as a second server and in words', async () => {
    ({ app } = await makeDemoApp());
    const doc = (await documentOf(app)) as Document & { servers?: Array<{ url: string }>; info: { description: string } };
    expect(doc.servers?.map((s) => s.url)).toEqual(['/', '/sandbox/{sandbox}']);
    expect(doc.info.description).toContain('/sandbox/<name>');
    await app.close();
    ({ app } = await makeDemoApp({ sandboxes: 'off' }));
    expect(((await documentOf(app)) as { servers?: unknown }).servers).toBeUndefined();
  });

  it('covers the three interfaces, the Repository calls and the control API', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    const operations = new Set(
      Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${shape(path)}`)),
    );
    const missing = EXPECTED.map(([method, path]) => `${method} ${path}`).filter((op) => !operations.has(op));
    expect(missing).toEqual([]);
  });

  it('lists no 405 handler and no documentation route', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path).not.toMatch(/^\/_emulator\/(docs|openapi)/);
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.responses['405'], `${method} ${path}`).toBeUndefined();
      }
    }
  });

  it('gives every operation a tag, a summary, a success response and the shared error body', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(operation.tags?.length, where).toBeGreaterThan(0);
        expect(operation.summary, where).toBeTruthy();
        expect(Object.keys(operation.responses).some((s) => /^2\d\d$/.test(s)), where).toBe(true);
        expect(operation.responses['4XX'], where).toBeDefined();
      }
    }
  });

  it('names every operation of the control API by a unique operationId, which its MCP tool is named after', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    const ids = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/_emulator'))
      .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, id: (operation as { operationId?: string }).operationId })));
    expect(ids.filter((o) => o.id === undefined).map((o) => o.where), 'control operations without an operationId').toEqual([]);
    expect(new Set(ids.map((o) => o.id)).size).toBe(ids.length);
  });

  it('asks for X-Auth-Token exactly where the server does', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    const secured = (path: string, method: string) => JSON.stringify(doc.paths[path]?.[method]?.security ?? []);
    const tokens = Object.keys(doc.paths).find((p) => p.endsWith('/Tokens'))!;
    expect(secured(tokens, 'put')).toBe('[]');
    const objects = Object.keys(doc.paths).find((p) => p.startsWith(`${REPO}/Objects/`))!;
    expect(secured(objects, 'get')).toContain('XAuthToken');
    expect(secured('/_emulator/health', 'get')).toBe('[]');
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith(CLOUD) || p.startsWith(ANNOTATIONS))) {
      for (const method of Object.keys(doc.paths[path])) expect(secured(path, method), `${method} ${path}`).toContain('XAuthToken');
    }
  });

  it('marks the control API with the admin token when one is set, and stays readable without it', async () => {
    ({ app } = await makeDemoApp({ adminToken: 'sesame' }));
    const doc = await documentOf(app); // fetched without Authorization
    const secured = (path: string, method: string) => JSON.stringify(doc.paths[path]?.[method]?.security ?? []);
    expect(secured('/_emulator/health', 'get')).toBe('[]');
    expect(secured('/_emulator/reset', 'post')).toContain('AdminToken');
    expect(secured('/_emulator/state', 'get')).toContain('AdminToken');
    expect((await app.inject({ url: '/_emulator/docs' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(401);
  });

  it('declares every credential the server takes, and each operation lists exactly those its interface takes', async () => {
    ({ app } = await makeDemoApp({ adminToken: 'sesame', alertsRequireToken: true }));
    const doc = (await documentOf(app)) as Document & { components: { securitySchemes: Record<string, unknown> } };
    expect(doc.components.securitySchemes).toEqual({
      XAuthToken: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Auth-Token' }),
      Authentication: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Authentication' }),
      ApiToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      Basic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
      AdminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    // docs/security.md, "Who can call what": any one of the listed credentials is enough.
    const expected = (path: string): unknown[] | undefined => {
      if (path.startsWith(`${REPO}/Objects`)) return [{ XAuthToken: [] }, { ApiToken: [] }, { Basic: [] }];
      if (path.startsWith(`${REPO}/Tokens`) || path === '/_emulator/health') return undefined;
      if (path.startsWith(CLOUD)) return [{ XAuthToken: [] }, { ApiToken: [] }];
      if (path.startsWith(QUERY)) return [{ Authentication: [] }, { XAuthToken: [] }];
      if (path === '/_emulator' || path.startsWith('/_emulator/')) return [{ AdminToken: [] }];
      // The annotations, the alerts (ALERTS_REQUIRE_TOKEN is set), compositions and results.
      return [{ XAuthToken: [] }];
    };
    const checked = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.security, `${method} ${path}`).toEqual(expected(path));
        checked.add(JSON.stringify(expected(path) ?? []));
      }
    }
    // Every kind of operation above is in the document.
    expect(checked.size).toBe(6);
  });

  it('lists for an operation the credentials the server takes there, and no other', async () => {
    ({ app } = await makeDemoApp());
    const doc = await documentOf(app);
    const CREDENTIALS: Record<string, Record<string, string>> = {
      XAuthToken: { 'x-auth-token': 'demo-token' },
      Authentication: { authentication: 'demo-token' },
      ApiToken: { authorization: 'Bearer demo-api-token' },
      Basic: { authorization: `Basic ${Buffer.from('demo@example.com:demo').toString('base64')}` },
    };
    const reads: Array<[string, string]> = [
      [`${REPO}/Objects/license`, `${REPO}/Objects/{}`],
      [`${CLOUD}/grid/101`, `${CLOUD}/grid/{}`],
      [ANNOTATIONS, ANNOTATIONS],
      [`${QUERY}/SHOP9-X4T7K-M2QRB-V8DNE-H5WZC/summary?format=json`, `${QUERY}/{}/summary`],
    ];
    for (const [url, documented] of reads) {
      const path = Object.keys(doc.paths).find((p) => shape(p) === documented);
      expect(path, documented).toBeDefined();
      const listed = (doc.paths[path!].get.security ?? []).map((requirement) => Object.keys(requirement as object)[0]);
      for (const [scheme, headers] of Object.entries(CREDENTIALS)) {
        const { statusCode } = await app.inject({ url, headers });
        expect({ url, scheme, taken: statusCode === 200 }).toEqual({ url, scheme, taken: listed.includes(scheme) });
      }
    }
  });

  it('is the same document the reference page loads', async () => {
    ({ app } = await makeDemoApp());
    const page = await app.inject({ url: '/_emulator/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const uiDoc = await app.inject({ url: '/_emulator/docs/json' });
    expect(uiDoc.json()).toEqual(await documentOf(app));
  });

  it('sends the page and its files with the dashboard\'s headers, and keeps no credentials in localStorage', async () => {
    ({ app } = await makeDemoApp());
    for (const url of ['/_emulator/docs', '/_emulator/docs/', '/_emulator/docs/static/index.html', '/_emulator/docs/static/swagger-initializer.js']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBeLessThan(400);
      expect(res.headers['content-security-policy'], url).toMatch(/default-src 'self'; script-src 'self';.*frame-ancestors 'self'/);
      expect(res.headers['x-frame-options'], url).toBe('SAMEORIGIN');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
    }
    const init = (await app.inject({ url: '/_emulator/docs/static/swagger-initializer.js' })).body;
    expect(init).toMatch(/"persistAuthorization":\s*false/);
  });
});

describe('the response conformance check', () => {
  it('names the route, the status and what differs', async () => {
    ({ app } = await makeDemoApp());
    const route = { method: 'GET', url: '/_emulator/health', hidden: false };
    const ok = (await app.inject({ url: '/_emulator/health' })).body;
    expect(await checkResponse(app, route, 200, ok)).toBeUndefined();
    const wrong = await checkResponse(app, route, 200, JSON.stringify({ ...JSON.parse(ok), status: 'fine' }));
    expect(wrong).toMatch(/^GET \/_emulator\/health -> 200: the body does not match the documented schema: /);
    expect(wrong).toContain('/status must be equal to one of the allowed values');
    expect(await checkResponse(app, route, 201, ok)).toMatch(/status 201 is not documented/);
    expect(await checkResponse(app, route, 500, JSON.stringify({ statusCode: 500, error: 'Internal Server Error', message: 'x' }))).toBeUndefined();
    expect(await checkResponse(app, route, 503, 'oops')).toMatch(/not JSON/);
  });

  it('turns Fastify route patterns into document paths', () => {
    expect(documentPath('/a/:id/action')).toBe('/a/{id}/action');
    expect(documentPath('/a/:uid/fire')).toBe('/a/{uid}/fire');
  });
});

describe('the fixture JSON Schema', () => {
  const schemaUrl = new URL('../../fixtures/fixture.schema.json', import.meta.url);

  it('is the committed file, regenerated (npm run fixtures:schema)', async () => {
    expect(await readFile(schemaUrl, 'utf8'), 'fixtures/fixture.schema.json is stale: run npm run fixtures:schema').toBe(fixtureJsonSchemaText());
  });

  it('accepts every bundled fixture file, each of which points to it', async () => {
    const validate = new Ajv({ strict: false, allErrors: true }).compile(JSON.parse(await readFile(schemaUrl, 'utf8')));
    const dir = new URL('../../fixtures/', import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.endsWith('.schema.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const data = JSON.parse(await readFile(new URL(file, dir), 'utf8'));
      expect(data.$schema, file).toBe('./fixture.schema.json');
      expect(validate(data), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('lets an editor flag what the loader refuses, and not demand fields with defaults', async () => {
    const validate = new Ajv({ strict: false }).compile(JSON.parse(await readFile(schemaUrl, 'utf8')));
    expect(validate({ users: [{ userName: 'a@example.com', password: 'x' }], tokens: [{ token: 't', userName: 'a@example.com' }] })).toBe(true);
    expect(validate({ users: [{ userName: '', password: 'x' }] })).toBe(false);
    expect(validate({ gridz: [] })).toBe(false);
    expect(validate({ tokens: [{ token: 't' }] })).toBe(false);
  });
});
