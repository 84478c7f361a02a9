import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema } from './errors.js';
import type { Config } from '../config.js';
import { version } from '../config.js';
import { PATHS, SANDBOX_PREFIX, type AreaTable } from './paths.js';

export const OPENAPI_PATH = PATHS.openapi;
export const DOCS_PATH = PATHS.docs;

/**
 * The error body every status this document does not list answers with. Its `$id` is left
 * out: in the document it is a component, referenced by path.
 */
const { $id: _unused, ...ErrorBodyComponent } = ErrorBodySchema;

/**
 * The Swagger UI page's policy: the dashboard's, except for styles, which Swagger UI sets
 * inline on its elements.
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'";
export const DOCS_HEADERS = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'SAMEORIGIN', 'referrer-policy': 'no-referrer' };

type Operation = { responses?: Record<string, unknown>; security?: unknown[] };

const DESCRIPTION = `A stateful emulator of a cloud load-testing service.

* **Provisioning** (\`{base_url}\` = \`/concerto\`): grids, cloud servers, results databases, test environments. Needs \`X-Auth-Token\`.
* **Repository** calls real clients need: log in for a token (\`PUT .../Tokens\`), log out, find objects by name.
* **Annotations** and **Alerts** (\`{rum_base_url}\` = \`/concerto/mpulse\`). Annotations need \`X-Auth-Token\`.
* **Control** (\`/_emulator\`): health, reset, state, clock and more, for tests.

Every error answers \`{"statusCode", "error", "message"}\`. The demo session token is \`demo-token\`.

**Sandboxes:** every path here is also served under \`${SANDBOX_PREFIX}<name>\` (1 to 64 characters of A-Z, a-z, 0-9, _ and -) by an isolated world with its own state, clock, tokens, faults and journal, e.g. \`${SANDBOX_PREFIX}w3${PATHS.provisioning}/grid/101\`. Paths without the prefix are the default sandbox. Pick the second server below to try a sandbox here.

**[Open the dashboard](${PATHS.ui}/)** to watch grids come up, move the clock, fire alerts and read the request journal in a browser. Health: [\`${PATHS.health}\`](${PATHS.health}).`;

/**
 * The OpenAPI 3.1 document, generated from the routes' own TypeBox schemas, so it cannot
 * drift from what the server validates and sends. Must be registered before the routes:
 * @fastify/swagger collects them as they are added.
 */
export async function installOpenApi(
  app: FastifyInstance,
  config: Config,
  {
    tags,
    areas,
  }: {
    /** The tag of each emulated interface, in order; the control API's follows. */
    tags: ReadonlyArray<{ name: string; description?: string }>;
    /** Who may call what: the document says which operations need which credentials. */
    areas: AreaTable;
  },
): Promise<void> {
  const needsToken = (url: string) => {
    const { access } = areas.of(url);
    return access === 'token' || (access === 'alert' && config.alertsRequireToken);
  };
  const needsAdmin = (url: string) => config.adminToken !== undefined && areas.of(url).access === 'admin';

  await app.register(swagger, {
    openapi: {
      // 3.1: schemas are plain JSON Schema, so TypeBox's const and null types stay as they are.
      openapi: '3.1.0',
      info: { title: 'cloud-emulator', version: version(), description: DESCRIPTION },
      ...(config.sandboxes === 'off'
        ? {}
        : {
            servers: [
              { url: '/', description: 'the default sandbox' },
              { url: `${SANDBOX_PREFIX}{sandbox}`, description: 'an isolated sandbox', variables: { sandbox: { default: 'w1' } } },
            ],
          }),
      tags: [...tags.map((t) => ({ ...t })), { name: 'Control', description: 'the emulator itself: health, reset, state, time' }],
      components: {
        securitySchemes: {
          XAuthToken: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: 'session token from PUT .../Tokens; demo: demo-token' },
          Authentication: { type: 'apiKey', in: 'header', name: 'Authentication', description: 'the Query API: the session token, as its clients send it' },
          AdminToken: { type: 'http', scheme: 'bearer', description: 'the ADMIN_TOKEN setting, when set' },
        },
        schemas: { ErrorBody: ErrorBodyComponent },
      },
    },
    transform: ({ schema, url }) => {
      // An area that also takes the token as Authentication (the Query API, as its clients send it) says so.
      const token = areas.of(url).tokenHeaders?.includes('authentication') ? [{ Authentication: [] }, { XAuthToken: [] }] : [{ XAuthToken: [] }];
      const security = needsToken(url) ? token : needsAdmin(url) ? [{ AdminToken: [] }] : undefined;
      return { schema: security ? ({ ...schema, security } as typeof schema) : schema, url };
    },
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: { paths?: Record<string, Record<string, Operation>> } }).openapiObject;
      // Errors share one body; rather than repeat it on every status of every route, the
      // document states it once per class, and lists specific ones where a route does.
      for (const pathItem of Object.values(document.paths ?? {})) {
        for (const operation of Object.values(pathItem)) {
          if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
          const error = { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
          operation.responses = { ...operation.responses, '4XX': error, '5XX': error };
        }
      }
      return document as never;
    },
  });

  // The page and its files carry the dashboard's headers: nothing loaded from elsewhere, no
  // inline script, not framed by another site, types not guessed. Credentials typed into
  // "Authorize" last as long as the tab (persistAuthorization off: not kept in localStorage,
  // where any script of the origin could read them), and no validator badge from elsewhere.
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, persistAuthorization: false, validatorUrl: null },
    staticCSP: DOCS_CSP,
    uiHooks: {
      onRequest: (_request, reply, done) => {
        reply.headers(DOCS_HEADERS);
        done();
      },
    },
  });

  /** GET /_emulator/openapi.json: this document, for code generators and contract tests. */
  app.get(
    OPENAPI_PATH,
    { schema: { hide: true, response: { 200: Type.Object({}, { additionalProperties: true }) } } },
    async () => app.swagger(),
  );
}
