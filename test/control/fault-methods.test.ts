import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { runCli } from '../../src/cli/run.js';
import { emptyState, parseState } from '../../src/state.js';

/**
 * A rule's method is one the routes answer, or *: a mistyped one (PSOT) would match no
 * request and never fire, so it is refused where it is written, with the nearest name.
 */

const OBJECTS = '/concerto/services/rest/RepositoryService/v1/Objects/grid';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('the method of a fault rule', () => {
  it('POST /_emulator/faults: refuses an unknown method with 400, the nearest name, and adds nothing', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { method: 'PSOT', path: '*', action: { status: 500 } } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(
      "body field 'method': 'PSOT' is not a method a rule can match (did you mean 'POST'?); one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, or * for any",
    );
    expect((await app.inject({ url: '/_emulator/faults' })).json()).toEqual([]);
    // A name far from every method gets no guess, only the list; a long one is cut.
    const far = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { method: 'FETCHALLTHETHINGSPLEASENOW', path: '*', action: { status: 500 } } });
    expect(far.statusCode).toBe(400);
    expect(far.json().message).toBe(
      "body field 'method': 'FETCHALLTHETHINGSPLE...' is not a method a rule can match; one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, or * for any",
    );
  });

  it('takes every method the routes answer in any case, kept in capitals, and *', async () => {
    ({ app } = await makeApp(authSeed()));
    for (const method of ['get', 'Head', 'POST', 'put', 'patch', 'delete', 'options', '*']) {
      const res = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { method, path: '/nowhere', action: { status: 500 } } });
      expect(res.statusCode, method).toBe(201);
      expect(res.json().method).toBe(method.toUpperCase());
    }
    const rule = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { method: 'get', path: OBJECTS, action: { status: 503 } } });
    expect(rule.statusCode).toBe(201);
    expect((await app.inject({ url: OBJECTS, headers: AUTH })).statusCode).toBe(503);
  });

  it('fixtures: the state format and check name the rule by its place', async () => {
    expect(() => parseState({ ...emptyState(), faults: [{ path: '/a', action: { status: 500 } }, { method: 'PSOT', path: '/a', action: { status: 500 } }] }, 'body')).toThrow(
      "body: $.faults[1].method: 'PSOT' is not a method a rule can match (did you mean 'POST'?); one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, or * for any",
    );
    const dir = await mkdtemp(join(tmpdir(), 'fault-methods-'));
    try {
      await writeFile(join(dir, 'faults.json'), '{\n  "faults": [\n    { "method": "DELTE", "path": "/a", "action": { "status": 500 } }\n  ]\n}\n');
      let err = '';
      const code = await runCli(['check', dir], {}, { out: () => {}, err: (t) => void (err += t) });
      expect(code).toBe(1);
      expect(err).toContain(`faults.json:3:7: $.faults[0].method: 'DELTE' is not a method a rule can match (did you mean 'DELETE'?)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
