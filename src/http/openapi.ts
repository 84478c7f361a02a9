import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema } from './errors.js';
import type { Config } from '../config.js';
import { version } from '../config.js';
import { PATHS, SANDBOX_PREFIX, areaOf } from './paths.js';

export const OPENAPI_PATH = PATHS.openapi;
export const DOCS_PATH = PATHS.docs;

/**
 * The error body every status this document does not list answers with. Its `$id` is left
 * out: in the document it is a component, referenced by path.
 */
const { $id: _unused, ...ErrorBodyComponent } = ErrorBodySchema;

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
export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  const needsToken = (url: string) => {
    const { access } = areaOf(url);
    return access === 'token' || (access === 'alert' && config.alertsRequireToken);
  };
  const needsAdmin = (url: string) => config.adminToken !== undefined && areaOf(url).access === 'admin';

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
      tags: [
        { name: 'Provisioning', description: 'grids, cloud servers, RSDBs, test environments' },
        { name: 'Repository', description: 'tokens and object look-up' },
        { name: 'Annotations' },
        { name: 'Alerts' },
        { name: 'Query API', description: 'real-user data of a domain by its app key; needs Authentication (or X-Auth-Token)' },
        { name: 'Control', description: 'the emulator itself: health, reset, state, time' },
      ],
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
      // The Query API takes the session token as Authentication (its clients' way) or X-Auth-Token.
      const token = url.startsWith(PATHS.query) ? [{ Authentication: [] }, { XAuthToken: [] }] : [{ XAuthToken: [] }];
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

  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, persistAuthorization: true },
    staticCSP: false,
  });

  /** GET /_emulator/openapi.json: this document, for code generators and contract tests. */
  app.get(
    OPENAPI_PATH,
    { schema: { hide: true, response: { 200: Type.Object({}, { additionalProperties: true }) } } },
    async () => app.swagger(),
  );
}
