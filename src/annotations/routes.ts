import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../world/world.js';
import { ApiError, ErrorBodySchema, badRequest, installErrorHandling, unauthorized } from '../http/errors.js';
import { parseId } from '../http/routing.js';
import { registerRateLimit } from '../http/rate-limit.js';
import {
  AnnotationCreateBodySchema,
  AnnotationIdSchema,
  AnnotationListQuerySchema,
  AnnotationListSchema,
  AnnotationListWrappedSchema,
  AnnotationParamsSchema,
  AnnotationSchema,
  AnnotationUpdateBodySchema,
  type AnnotationListQuery,
} from './schemas.js';
import type { AnnotationFilter } from './store.js';

export const ANNOTATIONS_PREFIX = '/concerto/mpulse/api/annotations/v1';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorBodySchema]));

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*application\/json\s*(;|$)/i.test(contentType);
}

/** A query time: epoch milliseconds as an integer, nothing else. */
function parseTime(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,16}$/.test(raw)) throw badRequest(`query parameter '${name}' must be an integer (UTC epoch milliseconds), got '${raw}'`);
  return Number(raw);
}

/** `domain=5`, `domain=5,7` or `domain=5&domain=7`. */
function parseDomains(raw: string | string[] | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  const ids = text.split(',').map((part) => part.trim());
  if (ids.some((id) => !/^\d{1,15}$/.test(id) || Number(id) < 1)) {
    throw badRequest(`query parameter 'domain' must be a domain id or a comma-separated list of domain ids, got '${text}'`);
  }
  return ids.map(Number);
}

function filterOf(query: AnnotationListQuery): AnnotationFilter {
  return {
    from: parseTime(query['date-start'], 'date-start'),
    to: parseTime(query['date-end'], 'date-end'),
    domainIds: parseDomains(query.domain),
  };
}

/** The user an annotation is made by: the session the root guard found for the token. */
function userOf(request: FastifyRequest): string {
  if (!request.session) throw unauthorized();
  return request.session.userName;
}

/** The annotation interface: add, update, delete, get and list annotations. */
export const annotationRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app, { emulator }) => {
  installErrorHandling(app, { unsupportedMediaType: 415 });

  // The spec's 415 covers any create or update without application/json, an empty one
  // included; checked before parsing so that no body parser gets a say first.
  app.addHook('preParsing', async (request) => {
    if (request.method !== 'POST' && request.method !== 'PUT') return;
    const type = request.headers['content-type'];
    if (!isJson(type)) {
      throw new ApiError(
        415,
        type === undefined
          ? 'the request has no Content-Type: send the body as application/json'
          : `unsupported Content-Type '${type}': send the body as application/json`,
      );
    }
  });

  await registerRateLimit(app, {
    max: emulator.config.rateLimitMax,
    windowMs: emulator.config.rateLimitWindowMs,
    per: 'token',
    // The root guard has already refused requests without a valid token.
    key: (request) => `token:${request.session?.token ?? String(request.headers['x-auth-token'])}`,
    counters: () => emulator.stores.annotations.rateLimits,
  });

  const store = () => emulator.stores.annotations;
  const wrapped = emulator.config.annotationsListWrapped;
  const tags = ['Annotations'];

  /** POST /: add an annotation; answers its id. */
  app.post(
    '/',
    {
      schema: {
        tags,
        summary: 'Add an annotation',
        body: AnnotationCreateBodySchema,
        response: { 200: AnnotationIdSchema, ...errors(400, 401, 415, 429) },
      },
    },
    async (request) => ({ id: store().create(request.body, userOf(request)) }),
  );

  /** GET /: list annotations, filtered by date-start, date-end and domain. */
  app.get(
    '/',
    {
      schema: {
        tags,
        summary: 'List annotations (ascending start, then id)',
        querystring: AnnotationListQuerySchema,
        response: { 200: wrapped ? AnnotationListWrappedSchema : AnnotationListSchema, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const annotations = store().list(filterOf(request.query));
      return wrapped ? { annotations } : annotations;
    },
  );

  /** GET /<id>: read one annotation. */
  app.get(
    '/:id',
    {
      schema: {
        tags,
        summary: 'Get an annotation',
        params: AnnotationParamsSchema,
        response: { 200: AnnotationSchema, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => store().get(parseId(request.params.id, 'annotation')),
  );

  /** PUT /<id>: change any subset of the create fields; answers the whole annotation. */
  app.put(
    '/:id',
    {
      schema: {
        tags,
        summary: 'Update an annotation',
        params: AnnotationParamsSchema,
        body: AnnotationUpdateBodySchema,
        response: { 200: AnnotationSchema, ...errors(400, 401, 404, 415, 429) },
      },
    },
    async (request) => store().update(parseId(request.params.id, 'annotation'), request.body),
  );

  /** DELETE /<id>: delete an annotation; a later read answers 404. */
  app.delete(
    '/:id',
    {
      schema: {
        tags,
        summary: 'Delete an annotation',
        params: AnnotationParamsSchema,
        response: { 204: Type.Null(), ...errors(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      store().delete(parseId(request.params.id, 'annotation'));
      return reply.code(204).send(null);
    },
  );
};
