import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema, badRequest, notFound } from '../http/errors.js';
import { refuseOtherMethods, parseId } from '../http/routing.js';
import { DEFAULT_ENVIRONMENT_DURATIONS, DEFAULT_GRID_DURATIONS, DEFAULT_RSDB_DURATIONS } from '../provisioning/lifecycles.js';
import {
  LifecyclesSchema,
  NextStartBodySchema,
  NextStartSchema,
  NoBodySchema,
  RESOURCE_KINDS,
  ResourceLifecycleSchema,
  ResourceParamsSchema,
  type Lifecycles,
  type ResourceKind,
} from './schemas.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorBodySchema]));

function resourceOf(params: { kind: string; id: string }, allowed: readonly ResourceKind[] = RESOURCE_KINDS) {
  const kind = params.kind as ResourceKind;
  if (!RESOURCE_KINDS.includes(kind)) throw badRequest(`unknown resource kind '${params.kind}': use ${RESOURCE_KINDS.join(', ')}`);
  if (!allowed.includes(kind)) throw badRequest(`not possible for a ${kind}: only for ${allowed.join(', ')}`);
  return { kind, id: parseId(params.id, kind) };
}

function lifecycleOf(world: World, kind: ResourceKind, id: number) {
  const found = world.stores.provisioning.position(kind, id);
  if (!found) throw notFound(`${kind} ${id} does not exist`);
  return found;
}

/** Lifecycle scenarios: where every resource is, and steering what happens next. */
export const scenarioRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/lifecycles: every lifecycle table, and each resource's state and next transition. */
  app.get(
    '/lifecycles',
    { schema: { tags: ['Control'], operationId: 'listLifecycles', summary: 'Lifecycle tables, durations, and where every resource is', response: { 200: LifecyclesSchema } } },
    async (request) => {
      const { provisioning } = world(request).stores;
      const { tables, resources } = provisioning.lifecycles();
      const next = provisioning.nextTransitionAt();
      return {
        now: world(request).clock.now(),
        timeScale: world(request).config.timeScale,
        ...(next !== undefined ? { nextTransitionAt: next } : {}),
        // The tables are frozen data; the schema describes their shape, not their readonliness.
        tables: tables as unknown as Lifecycles['tables'],
        defaultDurations: { grid: DEFAULT_GRID_DURATIONS, rsdb: DEFAULT_RSDB_DURATIONS, environment: DEFAULT_ENVIRONMENT_DURATIONS },
        resources,
      };
    },
  );

  /** GET /_emulator/lifecycles/:kind/:id: one resource's state, since when, and what comes next. */
  app.get(
    '/lifecycles/:kind/:id',
    {
      schema: {
        tags: ['Control'],
        operationId: 'getLifecycle', summary: "One resource's lifecycle position",
        params: ResourceParamsSchema,
        response: { 200: ResourceLifecycleSchema, ...errors(400, 404) },
      },
    },
    async (request) => {
      const { kind, id } = resourceOf(request.params);
      return lifecycleOf(world(request), kind, id);
    },
  );

  /** PUT /_emulator/lifecycles/:kind/:id/next-start: choose how the next start of a grid, environment or RSDB ends. */
  app.put(
    '/lifecycles/:kind/:id/next-start',
    {
      schema: {
        tags: ['Control'],
        operationId: 'setNextStart', summary: 'Choose the outcome of the next start (a failure, or success); used up by that start',
        params: ResourceParamsSchema,
        body: NextStartBodySchema,
        response: { 200: NextStartSchema, ...errors(400, 404) },
      },
    },
    async (request) => {
      const { kind, id } = resourceOf(request.params, ['grid', 'environment', 'rsdb']);
      world(request).stores.provisioning.setNextStartOutcome(kind, id, request.body.outcome);
      return { kind, id, outcome: request.body.outcome };
    },
  );

  /** DELETE /_emulator/lifecycles/:kind/:id/next-start: the next start ends as the fixture says again. */
  app.delete(
    '/lifecycles/:kind/:id/next-start',
    {
      schema: {
        tags: ['Control'],
        operationId: 'clearNextStart', summary: 'Forget a chosen next-start outcome',
        params: ResourceParamsSchema,
        response: { 204: Type.Null(), ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const { kind, id } = resourceOf(request.params, ['grid', 'environment', 'rsdb']);
      world(request).stores.provisioning.setNextStartOutcome(kind, id, null);
      return reply.code(204).send(null);
    },
  );

  /** POST /_emulator/lifecycles/environment/:id/externally-terminate: someone else kills a RUNNING environment. */
  app.post(
    '/lifecycles/:kind/:id/externally-terminate',
    {
      schema: {
        tags: ['Control'],
        operationId: 'externallyTerminate', summary: 'A RUNNING test environment becomes EXTERNALLY_TERMINATED now',
        body: NoBodySchema,
        params: ResourceParamsSchema,
        response: { 200: ResourceLifecycleSchema, ...errors(400, 404) },
      },
    },
    async (request) => {
      const { kind, id } = resourceOf(request.params, ['environment']);
      world(request).stores.provisioning.externallyTerminate(id);
      return lifecycleOf(world(request), kind, id);
    },
  );

  /** POST /_emulator/lifecycles/cloudServer/:id/fail: a cloud server fails now. */
  app.post(
    '/lifecycles/:kind/:id/fail',
    {
      schema: {
        tags: ['Control'],
        operationId: 'failCloudServer', summary: 'A cloud server becomes FAILED now',
        body: NoBodySchema,
        params: ResourceParamsSchema,
        response: { 200: ResourceLifecycleSchema, ...errors(400, 404) },
      },
    },
    async (request) => {
      const { kind, id } = resourceOf(request.params, ['cloudServer']);
      world(request).stores.provisioning.failServer(id);
      return lifecycleOf(world(request), kind, id);
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
