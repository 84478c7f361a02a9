import { Type } from '@sinclair/typebox';
import { errorCodes } from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { invalid, missing } from '../core/errors.js';
import { trustImported } from '../alerts/deliveries.js';
import { ErrorBodySchema } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { SANDBOX_NAME_RULE, type Sandboxes } from '../world/sandboxes.js';
import { StateSchema, parseState } from '../state.js';
import { readStateBody, type BodyBytes } from '../world/state-parser.js';
import type { StoreOf } from '../http/routing.js';
import type { World } from '../world/world.js';
import { SandboxListSchema, SandboxSummarySchema } from '../world/sandbox-schemas.js';
import { STATE_BODY_LIMIT, clockModeOf, refuseDemo, takeStateBodies } from './state-routes.js';
import { ClockModeQuerySchema } from './schemas.js';

// The sandboxes' schemas belong to the world that keeps them (world/sandbox-schemas.ts).
export { SandboxListSchema, SandboxSummarySchema, type SandboxSummary } from '../world/sandbox-schemas.js';

/**
 * The name as sent: spelled with escapes (w%33), it is refused as in /sandbox/<name>/, where
 * names are never decoded, so one name never reaches two sandboxes.
 */
function nameOf(request: { url: string; params: { name: string } }): string {
  const sent = request.url.split(/[?#]/)[0].split('/').pop() ?? '';
  if (sent !== request.params.name) throw invalid(`sandbox name '${sent.slice(0, 80)}' is not valid: use ${SANDBOX_NAME_RULE}`);
  return request.params.name;
}

const NameParamsSchema = Type.Object({ name: Type.String({ description: SANDBOX_NAME_RULE }) });

/**
 * Managing sandboxes: only from the default world's control API (a sandbox does not manage
 * its siblings), under the same ADMIN_TOKEN rule.
 */
export const sandboxRoutes: FastifyPluginAsyncTypebox<{ sandboxes: Sandboxes; world: StoreOf<World> }> = async (app, { sandboxes, world }) => {
  const refuseOthers = refuseOtherMethods(app);
  // Management belongs to the default world; under /sandbox/<name>/ these paths do not exist.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.sandbox !== null) {
      reply.callNotFound();
      return;
    }
    done();
  });

  /** GET /_emulator/sandboxes: every sandbox with its counts. */
  app.get(
    '/sandboxes',
    { schema: { tags: ['Control'], operationId: 'listSandboxes', summary: 'List the sandboxes (isolated worlds under /sandbox/<name>)', response: { 200: SandboxListSchema } } },
    async () => ({ sandboxes: sandboxes.list(), max: sandboxes.max, mode: sandboxes.mode }),
  );

  /** GET /_emulator/sandboxes/<name>: one sandbox's summary. */
  app.get(
    '/sandboxes/:name',
    { schema: { tags: ['Control'], operationId: 'getSandbox', summary: "One sandbox's summary", params: NameParamsSchema, response: { 200: SandboxSummarySchema, 404: ErrorBodySchema } } },
    async (request) => {
      const summary = sandboxes.summaryOf(nameOf(request));
      if (!summary) throw missing(`no sandbox '${nameOf(request)}'`);
      return summary;
    },
  );

  /** PUT /_emulator/sandboxes/<name>: create or replace, from the seed or from a posted state. */
  await app.register(async (scope) => {
    takeStateBodies(scope);
    scope.withTypeProvider<TypeBoxTypeProvider>().put(
      '/sandboxes/:name',
      {
        bodyLimit: STATE_BODY_LIMIT,
        // parseState validates, as for PUT /_emulator/state: it names the JSON path and checks references.
        validatorCompiler: () => (data: unknown) => ({ value: data }),
        schema: {
          tags: ['Control'],
          operationId: 'putSandbox', summary: 'Create (201) or replace (200) a sandbox: no body = from the seed; a body = a state in the export format',
          params: NameParamsSchema,
          querystring: ClockModeQuerySchema,
          body: Type.Optional(StateSchema),
          response: { 200: SandboxSummarySchema, 201: SandboxSummarySchema, 400: ErrorBodySchema, 503: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        // No body (or JSON null or "") is the seed; a body is read off the event loop when large.
        const body = request.body as unknown as BodyBytes | null | undefined;
        const name = nameOf(request);
        const clock = clockModeOf(request.query);
        // Imports into this sandbox wait for one another; those into other worlds do not wait for them.
        const { importQueueMax, importQueueMaxBytes } = world(request).config;
        const bounds = { maxBodies: importQueueMax, maxBytes: importQueueMaxBytes };
        const read = body === undefined || body === null ? undefined : await readStateBody(body, 'body', parseState, name, bounds, world(request).clock.now());
        if (read?.kind === 'invalid-json') throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
        if (read?.kind === 'not-object') {
          throw invalid('body: expected a JSON object with the state sections (users, tokens, grids, ...), or no body for the seed');
        }
        const state = read?.kind === 'state' ? read.state : undefined;
        if (state) refuseDemo(state, world(request).seedState);
        // The long part of building the sandbox's stores, in slices; then the sandbox at once.
        if (state) await world(request).prepare(state);
        trustImported(world(request).config, state);
        const { summary, created } = sandboxes.put(name, state, clock);
        return reply.code(created ? 201 : 200).send(summary);
      },
    );
  });

  /** DELETE /_emulator/sandboxes/<name>: gone; a later request to the name (auto mode) starts afresh. */
  app.delete(
    '/sandboxes/:name',
    { schema: { tags: ['Control'], operationId: 'deleteSandbox', summary: 'Delete a sandbox', params: NameParamsSchema, response: { 204: Type.Null(), 404: ErrorBodySchema } } },
    async (request, reply) => {
      if (!sandboxes.delete(nameOf(request))) throw missing(`no sandbox '${nameOf(request)}'`);
      return reply.code(204).send(null);
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
