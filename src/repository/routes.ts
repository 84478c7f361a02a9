import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError, ErrorBodySchema, badRequest, installErrorHandling, notFound } from '../http/errors.js';
import { installBodyRules } from '../http/bodies.js';
import type { StoreOf } from '../http/routing.js';
import type { AuthStore } from './store.js';
import { firstValue, repeatable } from '../http/validation.js';
import { LogInBodySchema, ObjectsResponseSchema, TokenResponseSchema, type Credentials, type LogInBody, type RepositoryObject } from './schemas.js';

export const REPOSITORY_PREFIX = '/concerto/services/rest/RepositoryService/v1';

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
  /** The repository's objects of each type the Objects call knows, in the request's world. */
  catalog: StoreOf<RepositoryCatalog>;
}

/** The objects of one type, listed when asked. */
export type RepositoryCatalog = Record<ObjectType, () => ReadonlyArray<{ id: number; name: string }>>;
export const OBJECT_TYPES = ['grid', 'testenvironment', 'rsdb', 'domain', 'composition', 'result'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/** Object types the Objects call knows, each listing the repository's objects of that type. */
function objectsOfType(catalog: RepositoryCatalog, type: string): RepositoryObject[] | undefined {
  if (!(OBJECT_TYPES as readonly string[]).includes(type)) return undefined;
  return catalog[type as ObjectType]().map(({ id, name }) => ({ id, name, type }));
}

/** The Repository service calls real clients need: log in, log out, find objects by name. */
export const repositoryRoutes: FastifyPluginAsyncTypebox<RepositoryOptions> = async (app, { auth, catalog }) => {
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

  /** GET /Objects/<type>[?name=]: repository objects of a type, optionally by exact name. */
  app.get(
    '/Objects/:type',
    {
      schema: {
        tags: ['Repository'],
        summary: 'Find repository objects (grid, testenvironment, rsdb, domain, composition, result) by name',
        params: Type.Object({ type: Type.String() }),
        // Other query parameters are ignored, as the real service ignores them.
        querystring: Type.Object({ name: Type.Optional(repeatable({ description: 'exact name (repeated: the first counts)' })) }),
        response: { 200: ObjectsResponseSchema, 401: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const objects = objectsOfType(catalog(request), request.params.type);
      if (!objects) throw notFound(`unknown object type '${request.params.type}': use grid, testenvironment, rsdb, domain, composition or result`);
      const name = firstValue(request.query.name);
      return { objects: name === undefined ? objects : objects.filter((o) => o.name === name) };
    },
  );
};
