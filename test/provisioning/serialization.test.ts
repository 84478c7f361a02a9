import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { AUTH, makeApp, type TestApp } from '../helpers/app.js';
import { ErrorBodySchema } from '../../src/http/errors.js';
import { CloudServerListItemSchema, CloudServerSchema, GRID_START_OUTCOMES, GridSchema } from '../../src/provisioning/schemas.js';
import { CLOUD, GRID_DURATIONS as D, act, grid, seed, template } from './seed.js';

/**
 * The hot provisioning reads are answered with JSON.stringify instead of the schema
 * serializer (provisioning/routes.ts). That is only right while the views build exactly the
 * schema's keys, in the order the schema serializer writes them: every body here must come
 * out of the schema serializer byte for byte the same.
 */

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

/** Fastify's own schema serializer, one route per response schema. */
let echo: FastifyInstance;
beforeAll(async () => {
  echo = Fastify();
  const schemas: Record<string, TSchema> = {
    grid: GridSchema,
    grids: Type.Array(GridSchema),
    server: CloudServerSchema,
    servers: Type.Array(CloudServerListItemSchema),
    error: ErrorBodySchema,
  };
  for (const [name, schema] of Object.entries(schemas)) {
    echo.post(`/${name}`, { schema: { response: { 200: schema } } }, async (request) => request.body);
  }
  await echo.ready();
});
afterAll(async () => echo?.close());

async function schemaSerialized(kind: string, body: string): Promise<string> {
  const res = await echo.inject({ method: 'POST', url: `/${kind}`, headers: { 'content-type': 'application/json' }, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** Reads `path` and checks its body against the schema serializer. */
async function expectSchemaBytes(path: string, kind: string, status = 200): Promise<void> {
  const res = await app.inject({ url: `${CLOUD}${path}`, headers: AUTH });
  expect(res.statusCode, `${path}: ${res.body}`).toBe(status);
  expect(res.body, path).toBe(await schemaSerialized(status === 200 ? kind : 'error', res.body));
}

async function expectAllReads(gridIds: number[]): Promise<void> {
  await expectSchemaBytes('/grid/', 'grids');
  await expectSchemaBytes('/cloudserver/', 'servers');
  for (const id of gridIds) await expectSchemaBytes(`/grid/${id}`, 'grid');
  const servers = JSON.parse((await app.inject({ url: `${CLOUD}/cloudserver/`, headers: AUTH })).body) as Array<{ id: number }>;
  for (const { id } of servers) await expectSchemaBytes(`/cloudserver/${id}`, 'server');
}

// Names that take every escaping path: quotes, backslashes, control characters, non-ASCII.
const oddNames = { name: 'Grid "quoted" \\ back\tslash \u0001 é ✓ 😀', serverName: 'amazon - "EC2" \\ Server\n(Large) ü' };

describe('the provisioning reads answer exactly what the schema serializer writes', () => {
  it('in every state of every start outcome, with monitors, failures, late servers and odd names', async () => {
    const outcomes = GRID_START_OUTCOMES;
    const grids = outcomes.map((outcome, i) =>
      grid({
        id: 101 + i,
        name: i === 0 ? oddNames.name : `Grid ${outcome}`,
        startOutcome: outcome,
        monitors: i % 2 === 0,
        failingServers: 1,
        servers: [
          template({ count: 2, name: i === 0 ? oddNames.serverName : 'amazon - EC2 Test Server (Large)' }),
          template({ role: 'RESULTS', location: { id: 2, name: 'amazon - eu-west-1' }, region: 'eu-west-1', zone: 'eu-west-1b' }),
          template({ role: 'COLLECTOR', location: { id: 3, name: 'collector "zone"' } }),
        ],
      }),
    );
    const ids = grids.map((g) => g.id);
    ({ app, clock } = await makeApp(seed({ grids: [...grids, grid({ id: 199, name: 'Never started' })] })));
    await expectAllReads([...ids, 199]);
    const startedAt = clock.now();
    for (const id of ids) expect((await act(app, `/grid/${id}`, 'start')).status).toBe(202);
    const end = D.allocating + D.allocated + D.startingMonitors + D.checking + D.pendingServers;
    for (const t of [0, 1, D.allocating / 2, D.allocating, D.allocating + D.allocated, end - 1, end, end + 1000]) {
      clock.advanceTo(startedAt + t);
      await expectAllReads([...ids, 199]);
    }
    // Restarted, terminated and failed servers; a terminated and a cancelled grid; a second start.
    await act(app, '/cloudserver/58201', 'restart');
    await act(app, '/cloudserver/58202', 'terminate');
    app.world.stores.provisioning.failServer(58203);
    await act(app, `/grid/${ids[1]}`, 'terminate');
    await act(app, `/grid/${ids[2]}`, 'start');
    await act(app, `/grid/${ids[2]}`, 'terminate');
    await expectAllReads([...ids, 199]);
    clock.advance(D.terminating + D.serverShutdown);
    await act(app, `/grid/${ids[1]}`, 'start');
    await expectAllReads([...ids, 199]);
  });

  it('in the error bodies of these routes', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] })));
    await expectSchemaBytes('/grid/999', 'grid', 404);
    await expectSchemaBytes('/grid/x', 'grid', 400);
    await expectSchemaBytes('/cloudserver/999', 'server', 404);
    const unauthorized = await app.inject({ url: `${CLOUD}/cloudserver/` });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.body).toBe(await schemaSerialized('error', unauthorized.body));
  });
});
