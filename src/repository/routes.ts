import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError, ErrorBodySchema, badRequest, installErrorHandling, unauthorized } from '../http/errors.js';
import { installBodyRules } from '../http/bodies.js';
import { noContent, parseId, type StoreOf } from '../http/routing.js';
import type { AuthStore } from './store.js';
import type { ObjectFilter, ObjectStore } from './objects.js';
import { firstValue, repeatable } from '../http/validation.js';
import {
  CreateObjectBodySchema,
  LogInBodySchema,
  ObjectIdResponseSchema,
  ObjectsResponseSchema,
  RepositoryObjectSchema,
  TokenResponseSchema,
  UpdateObjectBodySchema,
  type CreateObjectBody,
  type Credentials,
  type LogInBody,
  type RepositoryObject,
} from './schemas.js';
import { PATHS } from '../http/paths.js';
import { sendListInSlices } from '../http/sliced-json.js';

/** Where the routes are served: its entry of the path table the client and the dashboard read. */
export const REPOSITORY_PREFIX = PATHS.repository;

/** A log-in field as sent: `null` and (for the tenant) `""` mean it was left out. */
const given = (value: string | null | undefined) => (value === null ? undefined : value);

function credentials(body: LogInBody): Credentials {
  const userName = given(body.userName);
  const password = given(body.password);
  const apiToken = given(body.apiToken);
  // An empty tenant means the user's own, as the real service reads it.
  const tenant = given(body.tenant) || undefined;
  if (apiToken !== undefined) {
    if (userName !== undefined || password !== undefined) throw badRequest('send either userName and password, or apiToken, not both');
    return { apiToken, tenant };
  }
  if (userName === undefined || password === undefined) throw badRequest('missing credentials: send userName and password, or apiToken');
  return { userName, password, tenant };
}

/** Says what a log-in body should look like before the schema lists what it is not. */
async function logInBodyIsObject(request: FastifyRequest): Promise<void> {
  const body: unknown = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(
      `the log-in body must be a JSON object such as {"userName":"...","password":"..."} or {"apiToken":"..."}${body === undefined ? ', and the request has none' : ''}`,
    );
  }
}

export interface RepositoryOptions {
  auth: StoreOf<AuthStore>;
  /** The repository's objects, in the request's world. */
  objects: StoreOf<ObjectStore>;
}

/** Query parameters of a list that are not filters. */
const NOT_FILTERS = new Set(['includeDetails']);

/** The list of a listing's answer, serialised a batch at a time. */
const ObjectListSchema = Type.Array(RepositoryObjectSchema);

const TypeParamsSchema = Type.Object({ type: Type.String({ description: 'object type: grid, domain, license, ...' }) });
const ObjectParamsSchema = Type.Object({ type: Type.String({ description: 'object type' }), id: Type.String({ description: 'integer id' }) });

/** The tenant of the request's session (the guard has set one on every Objects path). */
function tenantOf(request: FastifyRequest): string {
  if (!request.session) throw unauthorized();
  return request.session.tenant;
}

/** `name` and every other parameter but includeDetails filter; a repeated one counts by its first value. */
function filterOf(query: Record<string, string | string[] | undefined>): ObjectFilter {
  const attributes: Array<[string, string]> = [];
  let name: string | undefined;
  // Bounded by the query string, which the HTTP parser has bounded.
  for (const [key, raw] of Object.entries(query)) {
    const value = firstValue(raw);
    if (value === undefined || NOT_FILTERS.has(key)) continue;
    if (key === 'name') name = value;
    else attributes.push([key, value]);
  }
  return { name, attributes };
}

function detailsOf(raw: string | string[] | undefined): boolean {
  const value = firstValue(raw);
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw badRequest(`query parameter 'includeDetails' must be true or false, got '${value}'`);
}

/** A body's `type` and `id`, when sent, must be those of the path. */
function checkSameObject(body: { type?: string; id?: unknown }, type: string, id?: number): void {
  if (body.type !== undefined && body.type !== type) throw badRequest(`body field 'type' is '${body.type}' but the path names type '${type}'`);
  if (id !== undefined && body.id !== undefined && body.id !== null && body.id !== id && body.id !== String(id)) {
    throw badRequest(`body field 'id' is ${JSON.stringify(body.id)} but the path names id ${id}`);
  }
}

const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 503: ErrorBodySchema, 507: ErrorBodySchema };

/** The Repository service calls real clients need: log in, log out, and read and change objects. */
export const repositoryRoutes: FastifyPluginAsyncTypebox<RepositoryOptions> = async (app, { auth, objects }) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
  // Clients written against the real service send the log-in JSON labelled as a form
  // (`curl --data-binary` without -H), as octet-stream, as text, or with no type at all.
  installBodyRules(app, { anyContentType: true });

  /** PUT /Tokens: log in with user name and password, or an API token. */
  app.put(
    '/Tokens',
    {
      preValidation: logInBodyIsObject,
      schema: {
        tags: ['Repository'],
        summary: 'Log in: get a session token for X-Auth-Token',
        description: 'The body is read as JSON whatever its Content-Type, or without one.',
        body: LogInBodySchema,
        response: { 200: TokenResponseSchema, 400: ErrorBodySchema, 401: ErrorBodySchema },
      },
    },
    async (request) => {
      const token = auth(request).logIn(credentials(request.body));
      if (!token) throw new ApiError(401, 'bad credentials: unknown user, wrong password or API token, or wrong tenant');
      return { token };
    },
  );

  /** DELETE /Tokens/<token>: log out; idempotent, and needs no X-Auth-Token. */
  app.delete(
    '/Tokens/:token',
    {
      schema: {
        tags: ['Repository'],
        summary: 'Log out: invalidate a session token',
        params: Type.Object({ token: Type.String() }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      auth(request).logOut(request.params.token);
      return reply.code(204).send(null);
    },
  );

  /** GET /Objects/<type>[?name=&<attribute>=...]: the objects of a type the filters match. */
  app.get(
    '/Objects/:type',
    {
      schema: {
        tags: ['Repository'],
        summary: "List a type's objects, filtered by name and by any attribute",
        description:
          'Every query parameter but includeDetails is a filter: name= matches the name, any other the attribute of that name. ' +
          'A filter no object matches gives an empty list.',
        params: TypeParamsSchema,
        querystring: Type.Object(
          {
            name: Type.Optional(repeatable({ description: 'exact name (repeated: the first value counts)' })),
            includeDetails: Type.Optional(repeatable({ description: 'false: leave the body out' })),
          },
          { additionalProperties: repeatable({ description: 'any other parameter: the attribute of that name must have this value' }) },
        ),
        response: { 200: ObjectsResponseSchema, ...errors },
      },
    },
    async (request, reply) => {
      const query = request.query as Record<string, string | string[] | undefined>;
      const details = detailsOf(query.includeDetails);
      const listed = objects(request).listing(request.params.type, tenantOf(request), filterOf(query), details);
      // A type may hold REPOSITORY_MAX_BYTES of objects: written in slices, the bytes of the response schema's serializer.
      const serialize = reply.compileSerializationSchema(ObjectListSchema, '200') as unknown as (objects: RepositoryObject[]) => string;
      return sendListInSlices(reply, '{"objects":[', listed, serialize, ']}');
    },
  );

  /** GET /Objects/<type>/<id>: one object, unwrapped. */
  app.get(
    '/Objects/:type/:id',
    {
      schema: {
        tags: ['Repository'],
        summary: 'Get an object',
        params: ObjectParamsSchema,
        response: { 200: RepositoryObjectSchema, ...errors },
      },
    },
    async (request) => objects(request).get(request.params.type, parseId(request.params.id, 'object'), tenantOf(request)),
  );

  const create = async (request: FastifyRequest, body: CreateObjectBody, type: string | undefined) => {
    const kind = type ?? body.type;
    if (kind === undefined) throw badRequest("body: the field 'type' is required");
    checkSameObject(body, kind);
    return { id: objects(request).create(kind, body, tenantOf(request)) };
  };
  const createSchema = {
    tags: ['Repository'],
    summary: 'Create an object',
    body: CreateObjectBodySchema,
    response: { 200: ObjectIdResponseSchema, ...errors },
  };

  /** PUT /Objects: a new object of the body's type. */
  app.put('/Objects', { preValidation: bodyIsObject, schema: createSchema }, async (request) => create(request, request.body, undefined));

  /** PUT /Objects/<type>: a new object of that type. */
  app.put(
    '/Objects/:type',
    { preValidation: bodyIsObject, schema: { ...createSchema, params: TypeParamsSchema } },
    async (request) => create(request, request.body, request.params.type),
  );

  /** POST /Objects/<type>/<id>: changes the fields sent. */
  app.post(
    '/Objects/:type/:id',
    {
      preValidation: bodyIsObject,
      schema: {
        tags: ['Repository'],
        summary: 'Update an object: the fields sent; attributes merge by name',
        params: ObjectParamsSchema,
        body: UpdateObjectBodySchema,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      const { type } = request.params;
      const id = parseId(request.params.id, 'object');
      checkSameObject(request.body, type, id);
      objects(request).update(type, id, request.body, tenantOf(request));
      return noContent(reply);
    },
  );

  /** DELETE /Objects/<type>/<id>: removes an object. */
  app.delete(
    '/Objects/:type/:id',
    {
      schema: {
        tags: ['Repository'],
        summary: 'Delete an object',
        params: ObjectParamsSchema,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      objects(request).delete(request.params.type, parseId(request.params.id, 'object'), tenantOf(request));
      return noContent(reply);
    },
  );
};

/** Says what an object body should look like before the schema lists what it is not. */
async function bodyIsObject(request: FastifyRequest): Promise<void> {
  const body: unknown = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(`the body must be a JSON object such as {"type":"license","name":"..."}${body === undefined ? ', and the request has none' : ''}`);
  }
}
