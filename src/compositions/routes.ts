import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Config } from '../config.js';
import { ErrorBodySchema, badRequest, installErrorHandling } from '../http/errors.js';
import { noContent, refuseOtherMethods, type StoreOf } from '../http/routing.js';
import { firstValue } from '../http/validation.js';
import type { CompositionStore } from './store.js';
import {
  CREATE_COMMANDS,
  ClipElementQuerySchema,
  ClipElementSchema,
  CollectionQuerySchema,
  CollectionSchema,
  CommandQuerySchema,
  CreateQuerySchema,
  INSTANCE_COMMANDS,
  InstanceBodySchema,
  InstanceIdSchema,
  InstanceListSchema,
  InstanceParamsSchema,
  InstanceSchema,
  type Instance,
  ResultIdParamsSchema,
  ResultListQuerySchema,
  ResultListSchema,
  ResultSchema,
  type InstanceBody,
  type InstanceCommand,
} from './schemas.js';

export const COMPOSITIONS_PREFIX = '/concerto/services/rest/composition/instances/v1';
export const RESULTS_PREFIX = '/concerto/services/rest/Results/v1';

export interface CompositionRouteOptions {
  store: StoreOf<CompositionStore>;
  config: Config;
}

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorBodySchema]));

/** The command of the query, one of `allowed`; 400 naming them otherwise. */
function commandOf<T extends string>(raw: string | string[] | undefined, allowed: readonly T[]): T {
  const command = firstValue(raw);
  const use = `use ${allowed.join(', ')}`;
  if (command === undefined) throw badRequest(`query parameter 'command' is required: ${use}`);
  if (!(allowed as readonly string[]).includes(command)) throw badRequest(`unknown command '${command}': ${use}`);
  return command as T;
}

/** A body may be left out (JAX-RS then hands the resource an empty one): taken as `{}` before validation. */
const emptyBodyIsObject = async (request: FastifyRequest): Promise<void> => {
  if (request.body === undefined) request.body = {};
};
const bodyOf = (request: FastifyRequest): InstanceBody => request.body as InstanceBody;

/** The composition-instance interface: load, play and command compositions, read their state. */
export const compositionRoutes: FastifyPluginAsyncTypebox<CompositionRouteOptions> = async (app, { store }) => {
  const refuseOthers = refuseOtherMethods(app);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  app.removeContentTypeParser('text/plain');
  const tags = ['Compositions'];
  // Instance ids are made of hex digits, '-' and ':', all of which a path segment may hold as they are.
  const urlOf = (request: FastifyRequest, id: string) => `${request.protocol}://${request.host}${COMPOSITIONS_PREFIX}/${id}`;

  /** POST /?command=load|play: create an instance of a composition on a checked grid. */
  app.post(
    '/',
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: 'Start or load a composition',
        querystring: CreateQuerySchema,
        body: InstanceBodySchema,
        response: { 200: InstanceIdSchema, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) => store(request).create(commandOf(request.query.command, CREATE_COMMANDS), bodyOf(request)),
  );

  /** GET /: every instance, unloaded ones included. */
  app.get(
    '/',
    { schema: { tags, summary: 'List composition instances', response: { 200: InstanceListSchema, ...errors(401) } } },
    async (request) => ({ instances: store(request).list().map((i) => ({ ...i, url: urlOf(request, i.instanceID) })) }),
  );

  /** GET /<instanceID>: the instance's state, worked out from the clock. */
  app.get(
    '/:instanceID',
    {
      schema: { tags, summary: 'Get a composition', params: InstanceParamsSchema, response: { 200: InstanceSchema, ...errors(401, 404) } },
    },
    async (request) => {
      // The view is this request's own object: the url is added to it rather than copied with a spread.
      const instance = store(request).get(request.params.instanceID) as Instance;
      instance.url = urlOf(request, request.params.instanceID);
      return instance;
    },
  );

  /** PUT /<instanceID>?command=...: play, stop, abort, pause, resume or unload; takes effect over emulated time. */
  app.put(
    '/:instanceID',
    {
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: 'Composition commands',
        params: InstanceParamsSchema,
        querystring: CommandQuerySchema,
        body: InstanceBodySchema,
        response: { 200: InstanceIdSchema, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) =>
      store(request).command(request.params.instanceID, commandOf<InstanceCommand>(request.query.command, INSTANCE_COMMANDS), bodyOf(request)),
  );
  refuseOthers();
};

const MAX_PERCENTILES = 10;

function percentilesOf(raw: string | string[] | undefined): number[] {
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.length > MAX_PERCENTILES) throw badRequest(`at most ${MAX_PERCENTILES} percentile parameters, got ${values.length}`);
  return values.map((v) => {
    const p = /^[0-9]{1,3}(\.[0-9]{1,3})?$/.test(v) ? Number(v) : Number.NaN;
    if (!(p > 0 && p <= 100)) throw badRequest(`percentile '${v}' is not a number in (0, 100]`);
    return p;
  });
}

function oneOf<T extends string>(raw: string | string[] | undefined, name: string, allowed: readonly T[], fallback: T): T {
  const value = firstValue(raw);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${name} '${value}' is not supported: use ${allowed.join(' or ')}`);
  return value as T;
}

/** The results interface: results that plays write, and their generated numbers. */
export const resultRoutes: FastifyPluginAsyncTypebox<CompositionRouteOptions> = async (app, { store }) => {
  const refuseOthers = refuseOtherMethods(app);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  app.removeContentTypeParser('text/plain');
  // One tag for the interface: results are what compositions' plays write.
  const tags = ['Compositions'];

  /** GET /?composition=<path>: results, newest first. */
  app.get(
    '/',
    {
      schema: { tags, summary: 'List results', querystring: ResultListQuerySchema, response: { 200: ResultListSchema, ...errors(401) } },
    },
    async (request) => ({ results: store(request).listResults({ composition: firstValue(request.query.composition), name: firstValue(request.query.name) }) }),
  );

  /** GET /<id>: one result. */
  app.get(
    '/:id',
    { schema: { tags, summary: 'Get a result', params: ResultIdParamsSchema, response: { 200: ResultSchema, ...errors(400, 401, 404) } } },
    async (request) => store(request).getResult(request.params.id),
  );

  /** DELETE /<id>: delete a result whose run has ended. */
  app.delete(
    '/:id',
    { schema: { tags, summary: 'Delete a result', params: ResultIdParamsSchema, response: { 204: Type.Null(), ...errors(400, 401, 404) } } },
    async (request, reply) => {
      store(request).deleteResult(request.params.id);
      return noContent(reply);
    },
  );

  /** GET /<id>/clip-element: HTTP message metrics, by element type, element name or error. */
  app.get(
    '/:id/clip-element',
    {
      schema: {
        tags,
        summary: 'Clip-element metrics of a result',
        params: ResultIdParamsSchema,
        querystring: ClipElementQuerySchema,
        response: { 200: ClipElementSchema, ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      oneOf(request.query.elementType, 'elementType', ['message'] as const, 'message');
      const groupBy = oneOf(request.query.groupBy, 'groupBy', ['elementType', 'elementName', 'error'] as const, 'elementType');
      return store(request).clipElement(request.params.id, groupBy);
    },
  );

  /** GET /<id>/collection: transactions and pages, with the asked percentiles. */
  app.get(
    '/:id/collection',
    {
      schema: {
        tags,
        summary: 'Collection metrics of a result',
        params: ResultIdParamsSchema,
        querystring: CollectionQuerySchema,
        response: { 200: CollectionSchema, ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const ps = percentilesOf(request.query.percentile);
      const groupBy = oneOf(request.query.groupBy, 'groupBy', ['flattenedHierarchy', 'containerType'] as const, 'flattenedHierarchy');
      return store(request).collection(request.params.id, ps, groupBy);
    },
  );
  refuseOthers();
};
