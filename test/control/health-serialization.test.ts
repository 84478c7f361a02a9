import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { HealthSchema } from '../../src/control/schemas.js';
import { healthView } from '../../src/control/state-routes.js';
import { makeDemoApp } from '../helpers/app.js';

/**
 * A healthy answer of GET /_emulator/health is written by JSON.stringify instead of the schema
 * serializer (control/state-routes.ts). That is only right while healthView builds exactly
 * the schema's keys, in the order the schema serializer writes them: every body here must
 * come out of the schema serializer byte for byte the same.
 */

let echo: FastifyInstance;
beforeAll(async () => {
  echo = Fastify();
  echo.post('/', { schema: { response: { 200: HealthSchema } } }, async (request) => request.body);
  await echo.ready();
});
afterAll(async () => echo?.close());

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function schemaSerialized(value: unknown): Promise<string> {
  const res = await echo.inject({ method: 'POST', url: '/', payload: value as object });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

const odd = 'a "quoted" \\ back\tslash \u0001 é ✓ 😀 \ud800 lone';

describe('the health answer', () => {
  it('is what the schema serializer writes, from a running app', async () => {
    ({ app } = await makeDemoApp());
    const res = await app.inject({ url: '/_emulator/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(await schemaSerialized(JSON.parse(res.body)));
  });

  it('is what the schema serializer writes with every optional part, whatever order and extra keys its parts come with', async () => {
    const full = {
      faultRules: 2,
      status: 'ok' as const,
      uptimeSeconds: 12.3,
      now: 1_795_000_000_123,
      counts: { rsdbs: 0, grids: 3, environments: 1, domains: 2 },
      clock: { frozen: true, scale: 2.5, iso: '2026-11-22T09:00:00.000Z', now: 1_795_000_000_123, extra: 'dropped' },
      stateFile: `/data/${odd}.json`,
      persistence: { lastWrittenAt: '2026-11-22T09:00:00.000Z', failingSince: '2026-11-22T08:00:00.000Z', error: odd, ok: false },
      seed: {
        stopped: odd,
        watching: true,
        checkedAt: '2026-11-22T09:00:01.000Z',
        loadedAt: '2026-11-22T09:00:00.000Z',
        unlisted: true,
        problems: [
          { text: `x.json:1:2: $.grids[0]: ${odd}`, message: odd, path: '$.grids[0]', column: 2, line: 1, file: `/f/${odd}.json` },
          { text: '$.x: y', message: 'y', path: '$.x' },
        ],
        status: 'error' as const,
        serving: 'empty' as const,
      },
    };
    for (const value of [
      full,
      { ...full, stateFile: undefined, persistence: { ok: true }, seed: { ...full.seed, unlisted: 7, problems: [], stopped: undefined, serving: 'fixtures' } },
      { ...full, seed: undefined, persistence: undefined, stateFile: undefined },
    ]) {
      const view = healthView(value as never);
      expect(JSON.stringify(view)).toBe(await schemaSerialized(value));
    }
  });
});
