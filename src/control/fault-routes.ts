import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema, notFound } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { FaultIdParamsSchema, FaultRuleInputSchema, FaultRuleSchema } from './schemas.js';

/** Fault injection: rules that make matching requests fail, slow down or drop. */
export const faultRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  // No rule strikes these, whatever its scope: a rule that hits everything can still be removed.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, faultExempt: true };
  });
  const refuseOthers = refuseOtherMethods(app);
  /** POST /_emulator/faults: add a rule; it applies from the next request on. */
  app.post(
    '/faults',
    {
      schema: {
        tags: ['Control'],
        operationId: 'addFault', summary: 'Add a fault rule (status, latency or drop for matching requests)',
        body: FaultRuleInputSchema,
        response: { 201: FaultRuleSchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      // A rule the store refuses throws a domain error, which the error handler answers.
      return reply.code(201).send(world(request).faults.add(request.body));
    },
  );

  /** GET /_emulator/faults: every rule, with how often it matched and fired and what is left. */
  app.get(
    '/faults',
    { schema: { tags: ['Control'], operationId: 'listFaults', summary: 'List fault rules', response: { 200: Type.Array(FaultRuleSchema) } } },
    async (request) => world(request).faults.list(),
  );

  /** DELETE /_emulator/faults: remove every rule. */
  app.delete(
    '/faults',
    { schema: { tags: ['Control'], operationId: 'clearFaults', summary: 'Remove every fault rule', response: { 204: Type.Null() } } },
    async (request, reply) => {
      world(request).faults.clear();
      return reply.code(204).send(null);
    },
  );

  /** GET /_emulator/faults/:id: one rule. */
  app.get(
    '/faults/:id',
    {
      schema: {
        tags: ['Control'],
        operationId: 'getFault', summary: 'Read one fault rule',
        params: FaultIdParamsSchema,
        response: { 200: FaultRuleSchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const rule = world(request).faults.get(request.params.id);
      if (!rule) throw notFound(`no fault rule '${request.params.id}'`);
      return rule;
    },
  );

  /** DELETE /_emulator/faults/:id: remove one rule. */
  app.delete(
    '/faults/:id',
    {
      schema: {
        tags: ['Control'],
        operationId: 'deleteFault', summary: 'Remove one fault rule',
        params: FaultIdParamsSchema,
        response: { 204: Type.Null(), 404: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      if (!world(request).faults.delete(request.params.id)) throw notFound(`no fault rule '${request.params.id}'`);
      return reply.code(204).send(null);
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
