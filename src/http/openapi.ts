import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema } from './errors.js';
import type { Config } from '../config.js';
import { version } from '../config.js';
import { PATHS, SANDBOX_PREFIX, type Area, type AreaTable } from './paths.js';
import { swaggerPlugin, swaggerUiPlugin } from './deferred-packages.cjs';
import { PluginRecorder } from './deferred.js';

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

/**
 * Every credential the emulator takes, as the document names them (docs/security.md, "Who can
 * call what"); each operation lists those its area takes, any one of them enough.
 */
const SECURITY_SCHEMES = {
  XAuthToken: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: 'session token from PUT .../Tokens; demo: demo-token' },
  Authentication: { type: 'apiKey', in: 'header', name: 'Authentication', description: 'the Query API: the session token, as its clients send it' },
  ApiToken: {
    type: 'http',
    scheme: 'bearer',
    description: "Authorization: Bearer <apiToken>: a user's API token, for this request only (no session is made); the repository's Objects and the provisioning interface. Demo: demo-api-token",
  },
  Basic: {
    type: 'http',
    scheme: 'basic',
    description: "Authorization: Basic <base64 of userName:password>: a user's name and password, for this request only; the repository's Objects. Demo: demo@example.com, demo",
  },
  AdminToken: { type: 'http', scheme: 'bearer', description: 'the control API: the ADMIN_TOKEN setting, when set' },
} as const;

/**
 * What a token area takes, any one enough: its token headers (the Query API reads
 * Authentication first, as its clients send it), then the schemes of Authorization it takes.
 */
function tokenSecurity(area: Area): Array<Record<string, string[]>> {
  const headers = area.tokenHeaders?.includes('authentication') ? ['Authentication', 'XAuthToken'] : ['XAuthToken'];
  const schemes = (area.authorization ?? []).map((scheme) => (scheme === 'bearer' ? 'ApiToken' : 'Basic'));
  return [...headers, ...schemes].map((name) => ({ [name]: [] }));
}

/** What the document says of an emulated interface: its name, base paths and what it holds. */
export interface DescribedInterface {
  readonly label: string;
  readonly prefix: string;
  readonly bases?: Readonly<Record<string, string>>;
  readonly tag: { readonly name: string; readonly description?: string };
}

/** The document's introduction, listing every emulated interface of the list given. */
function description(interfaces: readonly DescribedInterface[]): string {
  const listed = interfaces.map((i) => {
    const paths = [i.prefix, ...Object.values(i.bases ?? {})].map((p) => `\`${p}\``).join(', ');
    return `* **${i.label}** (${paths})${i.tag.description ? `: ${i.tag.description}` : ''}.`;
  });
  return `A stateful emulator of a cloud load-testing service. The emulated interfaces:

${listed.join('\n')}
* **Control** (\`${PATHS.control}\`): health, reset, state, clock and more, for tests.

The Repository's log-in (\`PUT .../Tokens\`) hands out a session token; the other interfaces take it as \`X-Auth-Token\` (the alerts only when ALERTS_REQUIRE_TOKEN is set; the Query API also as \`Authentication\`). The Repository's \`Objects\` and the provisioning interface also take a user's API token as \`Authorization: Bearer\`, and \`Objects\` a user's name and password as \`Authorization: Basic\`, each for that request alone. The demo session token is \`demo-token\`. Every error answers \`{"statusCode", "error", "message"}\`.

**Sandboxes:** every path here is also served under \`${SANDBOX_PREFIX}<name>\` (1 to 64 characters of A-Z, a-z, 0-9, _ and -) by an isolated world with its own state, clock, tokens, faults and journal, e.g. \`${SANDBOX_PREFIX}w3${PATHS.provisioning}/grid/101\`. Paths without the prefix are the default sandbox. Pick the second server below to try a sandbox here.

**[Open the dashboard](${PATHS.ui}/)** to watch grids come up, move the clock, fire alerts and read the request journal in a browser. Health: [\`${PATHS.health}\`](${PATHS.health}).`;
}

/**
 * The OpenAPI 3.1 document, generated from the routes' own TypeBox schemas, so it cannot
 * drift from what the server validates and sends. Must be registered before the routes:
 * @fastify/swagger collects them as they are added.
 */
export async function installOpenApi(
  app: FastifyInstance,
  config: Config,
  {
    interfaces,
    areas,
  }: {
    /** Each emulated interface, in order: the introduction lists them, and their tags come first; the control API's follows. */
    interfaces: readonly DescribedInterface[];
    /** Who may call what: the document says which operations need which credentials. */
    areas: AreaTable;
  },
): Promise<void> {
  const needsToken = (url: string) => {
    const { access } = areas.of(url);
    return access === 'token' || (access === 'alert' && config.alertsRequireToken);
  };
  const needsAdmin = (url: string) => config.adminToken !== undefined && areas.of(url).access === 'admin';

  await app.register(deferredSwagger, {
    openapi: {
      // 3.1: schemas are plain JSON Schema, so TypeBox's const and null types stay as they are.
      openapi: '3.1.0',
      info: { title: 'cloud-emulator', version: version(), description: description(interfaces) },
      ...(config.sandboxes === 'off'
        ? {}
        : {
            servers: [
              { url: '/', description: 'the default sandbox' },
              { url: `${SANDBOX_PREFIX}{sandbox}`, description: 'an isolated sandbox', variables: { sandbox: { default: 'w1' } } },
            ],
          }),
      tags: [...interfaces.map(({ tag }): { name: string; description?: string } => ({ ...tag })), { name: 'Control', description: 'the emulator itself: health, reset, state, time' }],
      components: {
        securitySchemes: SECURITY_SCHEMES,
        schemas: { ErrorBody: ErrorBodyComponent },
      },
    },
    transform: ({ schema, url }) => {
      const security = needsToken(url) ? tokenSecurity(areas.of(url)) : needsAdmin(url) ? [{ AdminToken: [] }] : undefined;
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

  // The API reference (SWAGGER_UI_OPTIONS), its code loaded on its first request.
  await app.register(deferredSwaggerUi, { prefix: DOCS_PATH });

  /** GET /_emulator/openapi.json: this document, for code generators and contract tests. */
  app.get(
    OPENAPI_PATH,
    { schema: { hide: true, response: { 200: Type.Object({}, { additionalProperties: true }) } } },
    async () => app.swagger(),
  );
}

/**
 * @fastify/swagger, run on the first call of app.swagger() (see http/deferred.ts): until then
 * only what it would have taken down is kept (every route added, every plugin registered, the
 * moment the app was ready), and it is handed all of it in the same order when it runs. The
 * document is the same; a start loads none of its code (nor that of the `yaml` it uses).
 */
const deferredSwagger = fp<SwaggerOptions>(
  async (app, options) => {
    const routes: RouteOptions[] = [];
    const instances: FastifyInstance[] = [];
    let ready = false;
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    app.addHook('onRegister', (instance) => {
      instances.push(instance);
    });
    app.addHook('onReady', async () => {
      ready = true;
    });
    let recorder: PluginRecorder | undefined;
    const given = { routes: 0, instances: 0, ready: false };
    const hook = (name: string) => recorder!.hooks.filter((h) => h.name === name).map((h) => h.fn as (...args: unknown[]) => unknown);
    const swagger = (opts?: { yaml?: boolean }): unknown => {
      if (!recorder) {
        recorder = new PluginRecorder(app, '', undefined, { getSchemas: () => app.getSchemas() });
        swaggerPlugin()(recorder as never, { ...options }, (err) => {
          if (err) throw err;
        });
      }
      // Only what came since the last call: nothing is added once the app is ready.
      for (; given.routes < routes.length; given.routes++) for (const fn of hook('onRoute')) fn(routes[given.routes]);
      for (; given.instances < instances.length; given.instances++) for (const fn of hook('onRegister')) fn(instances[given.instances]);
      if (ready && !given.ready) {
        given.ready = true;
        for (const fn of hook('onReady')) fn(() => undefined);
      }
      return (recorder.swagger as (opts?: { yaml?: boolean }) => unknown)(opts);
    };
    app.decorate('swagger', swagger as FastifyInstance['swagger']);
  },
  // The name @fastify/swagger-ui asks for, and that of the plugin it stands for.
  { fastify: '5.x', name: '@fastify/swagger' },
);

/** What @fastify/swagger-ui is given: the page of the API reference and its files. */
const SWAGGER_UI_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: DOCS_PATH,
  uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, persistAuthorization: false, validatorUrl: null },
  staticCSP: DOCS_CSP,
  uiHooks: { onRequest: docsHeaders },
};

/**
 * The page and its files carry the dashboard's headers (DOCS_CSP is the page's policy):
 * nothing loaded from elsewhere, no inline script, not framed by another site, types not
 * guessed. Credentials typed into "Authorize" last as long as the tab (persistAuthorization
 * off: not kept in localStorage, where any script of the origin could read them), and no
 * validator badge from elsewhere.
 */
function docsHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.headers(DOCS_HEADERS);
  done();
}

/**
 * The routes @fastify/swagger-ui adds under its prefix, as it adds them (5.2): its page, the
 * document as JSON and YAML, and its files through @fastify/static, which has no hooks of the
 * page (test/http/deferred.test.ts checks this table against what the plugin does).
 */
export const DOCS_ROUTES: ReadonlyArray<{ url: string; method: HTTPMethods | HTTPMethods[]; pageHooks: boolean; files?: true }> = [
  { url: '/', method: 'GET', pageHooks: true },
  { url: '/static/index.html', method: 'GET', pageHooks: true },
  { url: '/static/swagger-initializer.js', method: 'GET', pageHooks: true },
  { url: '/json', method: 'GET', pageHooks: true },
  { url: '/yaml', method: 'GET', pageHooks: true },
  { url: '/static/*', method: ['HEAD', 'GET'], pageHooks: false, files: true },
];

/** Runs @fastify/swagger-ui against a recorder (see http/deferred.ts): its routes, hooks and handlers. */
export function recordSwaggerUi(app: FastifyInstance): Promise<PluginRecorder> {
  return new PluginRecorder(app, '', undefined, { swagger: (opts?: { yaml: true }) => app.swagger(opts as never) }).run(swaggerUiPlugin() as never, { ...SWAGGER_UI_OPTIONS });
}

/**
 * @fastify/swagger-ui (the API reference at DOCS_PATH), run on the first request of one of its
 * routes: its routes are declared at start as it declares them, with its hooks, and each
 * hands the request to the route the plugin recorded. A start loads none of its code, nor
 * that of @fastify/static, which serves its files.
 */
const deferredSwaggerUi: FastifyPluginAsync = async (app) => {
  // The plugin's own hook: the page's policy on every answer of its routes.
  app.addHook('onSend', function (_request, reply, _payload, done) {
    reply.header('content-security-policy', DOCS_CSP.trim());
    done();
  });
  let recorded: Promise<PluginRecorder> | undefined;
  const load = (): Promise<PluginRecorder> =>
    (recorded ??= recordSwaggerUi(app).catch((err: unknown) => {
      recorded = undefined;
      throw err;
    }));
  for (const { url, method, pageHooks, files } of DOCS_ROUTES) {
    app.route({
      method,
      url,
      schema: { hide: true },
      ...(pageHooks ? { onRequest: docsHeaders } : {}),
      // @fastify/static's: a client gone while its file is sent ends the request.
      ...(files
        ? {
            errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
              if (error?.code === 'ERR_STREAM_PREMATURE_CLOSE') {
                reply.request.raw.destroy();
                return;
              }
              return app.errorHandler(error, request, reply);
            },
          }
        : {}),
      handler: async function (request, reply) {
        const route = (await load()).routeOf(DOCS_PATH + url, 'GET');
        if (!route) throw new Error(`@fastify/swagger-ui has no route ${DOCS_PATH}${url}`);
        route.handler.call(this, request, reply);
        return reply;
      },
    });
  }
};
