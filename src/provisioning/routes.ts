import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema, badRequest, installErrorHandling } from '../http/errors.js';
import { viewSerializer } from '../http/view-serializer.js';
import { refuseOtherMethods, parseId, type StoreOf } from '../http/routing.js';
import type { ProvisioningStore } from './store.js';
import { PATHS } from '../http/paths.js';
import {
  ActionBodySchema,
  CloudServerListItemSchema,
  CloudServerSchema,
  EnvironmentSchema,
  GridSchema,
  IdParamsSchema,
  RsdbSchema,
} from './schemas.js';

/** Where the routes are served: its entry of the path table the client and the dashboard read. */
export const PROVISIONING_PREFIX = PATHS.provisioning;

const TAGS = ['Provisioning'];
const READ_ERRORS = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema };
const LIST_ERRORS = { 401: ErrorBodySchema };

/**
 * Checks an action body before the schema does, so that each way of getting it wrong gets
 * its own message (the schema's type coercion would turn `{"action":5}` into "5").
 */
function actionBody(resource: string, actions: readonly string[]) {
  const use = `use ${actions.join(' or ')}`;
  return async (request: FastifyRequest): Promise<void> => {
    const body: unknown = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest(`the body must be a JSON object such as {"action":"${actions[0]}"}`);
    }
    if (!('action' in body)) throw badRequest(`the body has no 'action': ${use}`);
    const { action } = body;
    if (typeof action !== 'string') throw badRequest(`'action' must be a string: ${use}`);
    if (!actions.includes(action)) throw badRequest(`unknown action '${action}' for ${resource}: ${use}`);
    // The body is one key: anything else would be taken and ignored, so it is refused, named.
    for (const key in body) {
      if (key !== 'action') throw badRequest(`body: unknown field '${key.slice(0, 80)}': an action body holds only 'action'`);
    }
  };
}

const userOf = (request: FastifyRequest) => request.session?.userName ?? 'unknown';

// The hot reads (a grid, the grid and cloud-server lists, a cloud server) are serialised by
// JSON.stringify (http/view-serializer.ts); test/provisioning/serialization.test.ts checks the
// bytes in every lifecycle state.

/** The provisioning interface: grids, cloud servers, RSDBs and test environments. */
export const provisioningRoutes: FastifyPluginAsyncTypebox<{ store: StoreOf<ProvisioningStore> }> = async (app, { store }) => {
  const refuseOthers = refuseOtherMethods(app);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  // Without a text/plain parser, a non-JSON body is a media-type error, rendered as a 400.
  app.removeContentTypeParser('text/plain');


  // --- Grids ---------------------------------------------------------------------------

  /** GET /grid/: every grid started at least once, terminated ones included */
  app.get(
    '/grid',
    {
      schema: { tags: TAGS, summary: 'List active grids', response: { 200: Type.Array(GridSchema), ...LIST_ERRORS } },
      serializerCompiler: viewSerializer,
    },
    async (request) => store(request).listGrids(),
  );

  /** GET /grid/:id: a grid with its servers, journal and statistics */
  app.get(
    '/grid/:id',
    {
      schema: { tags: TAGS, summary: 'Get a grid', params: IdParamsSchema, response: { 200: GridSchema, ...READ_ERRORS } },
      serializerCompiler: viewSerializer,
    },
    async (request) => store(request).getGrid(parseId(request.params.id, 'grid')),
  );

  /** POST /grid/:id/action: start a new deployment, or terminate (cancel) the current one */
  app.post(
    '/grid/:id/action',
    {
      preValidation: actionBody('a grid', ['start', 'terminate']),
      schema: {
        tags: TAGS,
        summary: 'Start or terminate a grid',
        params: IdParamsSchema,
        body: ActionBodySchema,
        response: { 202: GridSchema, ...READ_ERRORS },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id, 'grid');
      const grid = request.body.action === 'start' ? store(request).startGrid(id, userOf(request)) : store(request).terminateGrid(id);
      return reply.code(202).send(grid);
    },
  );

  // --- Cloud servers ---------------------------------------------------------------------

  /** GET /cloudserver/: every cloud server on the system, terminated ones included */
  app.get(
    '/cloudserver',
    {
      schema: { tags: TAGS, summary: 'List cloud servers', response: { 200: Type.Array(CloudServerListItemSchema), ...LIST_ERRORS } },
      serializerCompiler: viewSerializer,
    },
    async (request) => store(request).listCloudServers(),
  );

  /** GET /cloudserver/:id: a cloud server with its host names */
  app.get(
    '/cloudserver/:id',
    {
      schema: { tags: TAGS, summary: 'Get a cloud server', params: IdParamsSchema, response: { 200: CloudServerSchema, ...READ_ERRORS } },
      serializerCompiler: viewSerializer,
    },
    async (request) => store(request).getCloudServer(parseId(request.params.id, 'cloud server')),
  );

  /** POST /cloudserver/:id/action: restart or terminate one cloud server */
  app.post(
    '/cloudserver/:id/action',
    {
      preValidation: actionBody('a cloud server', ['restart', 'terminate']),
      schema: {
        tags: TAGS,
        summary: 'Restart or terminate a cloud server',
        params: IdParamsSchema,
        body: ActionBodySchema,
        response: { 202: CloudServerSchema, ...READ_ERRORS },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id, 'cloud server');
      const server = request.body.action === 'restart' ? store(request).restartCloudServer(id) : store(request).terminateCloudServer(id);
      return reply.code(202).send(server);
    },
  );

  // --- RSDBs -----------------------------------------------------------------------------

  /** GET /rsdb/:id: a results database and its server */
  app.get(
    '/rsdb/:id',
    { schema: { tags: TAGS, summary: 'Get an RSDB', params: IdParamsSchema, response: { 200: RsdbSchema, ...READ_ERRORS } } },
    async (request) => store(request).getRsdb(parseId(request.params.id, 'RSDB')),
  );

  /** POST /rsdb/:id/action: start or terminate a results database */
  app.post(
    '/rsdb/:id/action',
    {
      preValidation: actionBody('an RSDB', ['start', 'terminate']),
      schema: {
        tags: TAGS,
        summary: 'Start or terminate an RSDB',
        params: IdParamsSchema,
        body: ActionBodySchema,
        response: { 202: RsdbSchema, ...READ_ERRORS },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id, 'RSDB');
      const rsdb = request.body.action === 'start' ? store(request).startRsdb(id) : store(request).terminateRsdb(id);
      return reply.code(202).send(rsdb);
    },
  );

  // --- Test environments -----------------------------------------------------------------

  /** GET /environment/:id: a test environment, with its url once the main server exists */
  app.get(
    '/environment/:id',
    {
      schema: { tags: TAGS, summary: 'Get a test environment', params: IdParamsSchema, response: { 200: EnvironmentSchema, ...READ_ERRORS } },
    },
    async (request) => store(request).getEnvironment(parseId(request.params.id, 'test environment')),
  );

  /** POST /environment/:id/action: launch, or terminate (cancel) a test environment */
  app.post(
    '/environment/:id/action',
    {
      preValidation: actionBody('a test environment', ['start', 'terminate']),
      schema: {
        tags: TAGS,
        summary: 'Start or terminate a test environment',
        params: IdParamsSchema,
        body: ActionBodySchema,
        response: { 202: EnvironmentSchema, ...READ_ERRORS },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id, 'test environment');
      const env =
        request.body.action === 'start' ? store(request).startEnvironment(id, userOf(request)) : store(request).terminateEnvironment(id);
      return reply.code(202).send(env);
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
