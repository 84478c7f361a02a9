import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { authSeed, makeApp } from '../helpers/app.js';

/** PUT /_emulator/state refused: the message, and each problem on its own, as health lists a seed's. */

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('PUT /_emulator/state with an invalid state', () => {
  it('answers 400 with the message and the list of problems, each with its path, and changes nothing', async () => {
    ({ app } = await makeApp(authSeed()));
    const before = (await app.inject({ url: '/_emulator/state' })).body;
    const res = await app.inject({
      method: 'PUT',
      url: '/_emulator/state',
      payload: { grids: [{ id: 'x' }], users: [{ userName: 'a@example.com', pasword: 'p' }] },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.problems.length).toBeGreaterThanOrEqual(3);
    expect(body.message).toBe(body.problems.map((p: { text: string }) => p.text).join('\n'));
    expect(body.problems).toContainEqual({ path: '$.grids[0].id', message: 'Expected integer, got "x"', text: 'body: $.grids[0].id: Expected integer, got "x"' });
    expect(body.problems).toContainEqual({
      path: '$.users[0].pasword',
      message: `unknown key "pasword" (did you mean 'password'?)`,
      text: `body: $.users[0].pasword: unknown key "pasword" (did you mean 'password'?)`,
    });
    expect(body.unlisted).toBe(0);
    expect((await app.inject({ url: '/_emulator/state' })).body).toBe(before);
  });

  it('a body that is no state at all keeps the plain error body', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: '[]', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'body: expected a JSON object with the state sections (users, tokens, grids, ...)' });
  });
});
