import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { ApiError, ErrorBodySchema, badRequest, installErrorHandling, unauthorized } from '../http/errors.js';
import { viewSerializer } from '../http/view-serializer.js';
import { noContent, parseId, type StoreOf } from '../http/routing.js';
import { registerRateLimit } from '../http/rate-limit.js';
import type { AnnotationStore } from './store.js';
import { installBodyRules } from '../http/bodies.js';
import { firstValue, integerOf } from '../http/validation.js';
import {
  AnnotationCreateBodySchema,
  AnnotationIdSchema,
  AnnotationListQuerySchema,
  AnnotationListSchema,
  AnnotationListWrappedSchema,
  AnnotationParamsSchema,
  AnnotationSchema,
  AnnotationUpdateBodySchema,
  DOMAIN_ID_RANGE,
  TIME_RANGE,
  type AnnotationCreate,
  type AnnotationCreateBody,
  type AnnotationListQuery,
  type AnnotationUpdate,
  type AnnotationUpdateBody,
} from './schemas.js';
import type { AnnotationFilter } from './store.js';
import { PATHS } from '../http/paths.js';

/** Where the routes are served: its entry of the path table the client and the dashboard read. */
export const ANNOTATIONS_PREFIX = PATHS.annotations;

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorBodySchema]));

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return contentType === 'application/json' || /^\s*application\/json\s*(;|$)/i.test(contentType);
}

/** A query time: epoch milliseconds as an integer, nothing else. */
function parseTime(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,16}$/.test(raw)) throw badRequest(`query parameter '${name}' must be an integer (UTC epoch milliseconds), got '${raw}'`);
  return Number(raw);
}

/** `domain=5`, `domain=5,7` or `domain=5&domain=7` (every repeat counts: a list is what was meant). */
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
    from: parseTime(firstValue(query['date-start']), 'date-start'),
    to: parseTime(firstValue(query['date-end']), 'date-end'),
    domainIds: parseDomains(query.domain),
  };
}

type Digits = number | string;

function timeOf(value: Digits, field: string): number {
  return integerOf(value, field, TIME_RANGE);
}

/** `domainIds` as a list of numbers, from one id or an array, each maybe a string of digits. */
function domainIdsOf(value: Digits | Digits[] | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return [integerOf(value, 'domainIds', DOMAIN_ID_RANGE)];
  const ids: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const id = value[i];
    // A number has passed the schema's range already; only a string of digits needs integerOf
    // (and only then is the field's name worth building).
    ids.push(typeof id === 'number' && id >= DOMAIN_ID_RANGE.minimum ? id : integerOf(id, `domainIds.${i}`, DOMAIN_ID_RANGE));
  }
  return ids;
}

function createOf(body: AnnotationCreateBody): AnnotationCreate {
  const create: AnnotationCreate = { title: body.title, text: body.text, start: timeOf(body.start, 'start') };
  if (body.end !== undefined) create.end = timeOf(body.end, 'end');
  if (body.domainIds !== undefined) create.domainIds = domainIdsOf(body.domainIds);
  return create;
}

function updateOf(body: AnnotationUpdateBody): AnnotationUpdate {
  const { start, end, domainIds, ...rest } = body;
  return {
    ...rest,
    ...(start !== undefined ? { start: timeOf(start, 'start') } : {}),
    ...(end !== undefined ? { end: end === null ? null : timeOf(end, 'end') } : {}),
    ...(domainIds !== undefined ? { domainIds: domainIdsOf(domainIds) } : {}),
  };
}

/** The user an annotation is made by: the session the root guard found for the token. */
function userOf(request: FastifyRequest): string {
  if (!request.session) throw unauthorized();
  return request.session.userName;
}

/** The annotation interface: add, update, delete, get and list annotations. */
export interface AnnotationOptions {
  store: StoreOf<AnnotationStore>;
  config: Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs' | 'annotationsListWrapped'>;
}

export const annotationRoutes: FastifyPluginAsyncTypebox<AnnotationOptions> = async (app, { store, config }) => {
  installErrorHandling(app, { unsupportedMediaType: 415 });
  // A read or delete that comes with a Content-Type (and maybe `{}`) is not refused for it.
  installBodyRules(app, { anyContentType: false });

  registerRateLimit(app, {
    max: config.rateLimitMax,
    windowMs: config.rateLimitWindowMs,
    per: 'user',
    // Per user, not per token: logging in again hands out a new token, and must not hand out a
    // new budget with it. The root guard has already refused requests without a valid token,
    // so every request here has its session; the counters are the world's own.
    key: (request) => request.session?.userName ?? `token ${String(request.headers['x-auth-token'])}`,
    counters: (request) => store(request).rateLimits,
  });

  // The spec's 415 covers any create or update without application/json, an empty one
  // included; checked before parsing so that no body parser gets a say first. The last
  // onRequest hook of the create and update routes (after the rate limit's, which counts
  // the request): a callback hook on the two routes that take a body costs no promise, and
  // the reads and deletes skip it.
  const requireJson = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const type = request.headers['content-type'];
    if (isJson(type)) return done();
    done(
      new ApiError(
        415,
        type === undefined
          ? 'the request has no Content-Type: send the body as application/json'
          : `unsupported Content-Type '${type}': send the body as application/json`,
      ),
    );
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') && !methods.includes('PUT')) return;
    const own = route.onRequest;
    route.onRequest = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), requireJson] as typeof route.onRequest;
  });

  const wrapped = config.annotationsListWrapped;
  const tags = ['Annotations'];

  /** POST /: add an annotation; answers its id. */
  app.post(
    '/',
    {
      schema: {
        tags,
        summary: 'Add an annotation',
        body: AnnotationCreateBodySchema,
        response: { 200: AnnotationIdSchema, ...errors(400, 401, 415, 429, 507) },
      },
    },
    async (request) => ({ id: store(request).create(createOf(request.body), userOf(request)) }),
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
      serializerCompiler: viewSerializer,
    },
    async (request, reply) => {
      // The list's JSON text, written from each annotation's text kept since its first listing.
      const text = store(request).listText(filterOf(request.query), wrapped);
      // Sent as text: the typed reply expects the list's value, which the text is written from.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(text);
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
      serializerCompiler: viewSerializer,
    },
    async (request) => store(request).get(parseId(request.params.id, 'annotation')),
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
        response: { 200: AnnotationSchema, ...errors(400, 401, 404, 415, 429, 507) },
      },
    },
    async (request) => {
      const patch = updateOf(request.body);
      return store(request).update(parseId(request.params.id, 'annotation'), patch);
    },
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
      store(request).delete(parseId(request.params.id, 'annotation'));
      return noContent(reply);
    },
  );
};
