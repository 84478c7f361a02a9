import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { loadConfig, type Config } from './config.js';
import { EmulatorClock, type ControllableClock } from './core/clock.js';
import { installErrorHandling, sendError } from './http/errors.js';
import { strictValidatorCompiler } from './http/validation.js';
import { Emulator } from './world/world.js';
import { emptyState, type State } from './world/state.js';
import { installAuthGuard } from './repository/guard.js';
import { REPOSITORY_PREFIX, repositoryRoutes } from './repository/routes.js';
import { PROVISIONING_PREFIX, provisioningRoutes } from './provisioning/routes.js';
import { ANNOTATIONS_PREFIX, annotationRoutes } from './annotations/routes.js';
import { ALERTS_PREFIX, alertRoutes } from './alerts/routes.js';
import { CONTROL_PREFIX, controlRoutes } from './control/routes.js';
import { installControlHooks } from './control/hooks.js';
import { installPersistence } from './world/persistence.js';
import { installCors } from './http/cors.js';
import { installOpenApi } from './http/openapi.js';
import { OneLinePerRequest, installRequestId } from './http/request-log.js';
import { UI_PREFIX, uiRoutes } from './ui/plugin.js';
import { homeRoutes } from './ui/home.js';

export interface BuildAppOptions {
  /** Settings; anything left out takes its default. */
  config?: Partial<Config>;
  /** The clock every lifecycle runs on (default: real time). */
  clock?: ControllableClock;
  /** The seed, already loaded (default: empty). */
  fixtures?: State;
  /** Fastify's logger option (default: off). */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
}

declare module 'fastify' {
  interface FastifyInstance {
    emulator: Emulator;
  }
}

/**
 * The composition root. Reads nothing from the environment and does not listen: the caller
 * (server.ts, a test, an embedding program) decides both.
 */
export async function buildApp(options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig({}, options.config ?? {});
  const clock = options.clock ?? new EmulatorClock();
  const emulator = new Emulator(options.fixtures ?? emptyState(), clock, config);

  const logging = options.loggerInstance !== undefined || Boolean(options.logger);
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    bodyLimit: config.bodyLimitBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    logController: new OneLinePerRequest({ disableRequestLogging: !logging }),
    requestIdHeader: 'x-request-id',
    // A malformed percent-escape or an overlong path segment never reaches a route; without
    // this, Fastify answers its own body (with an extra `code`, and a 414 for the length).
    frameworkErrors: (error, request, reply) => {
      const path = request.url.split('?')[0];
      sendError(
        reply,
        400,
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? `a path segment of '${path}' is longer than 100 characters`
          : `the URL '${path}' is not valid: malformed percent-encoding`,
      );
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('emulator', emulator);
  // Bodies are taken exactly as sent (no coercion, no silently dropped fields) on every route.
  app.setValidatorCompiler(strictValidatorCompiler);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, `no resource at ${request.method} ${request.url.split('?')[0]}`),
  );
  installRequestId(app);
  // CORS before the guard (a preflight has no token); OpenAPI before the routes it lists.
  installCors(app, config.corsOrigins);
  await installOpenApi(app, config);
  // Faults and the journal see every request; a fault strikes before the token check.
  installControlHooks(app, emulator);
  installAuthGuard(app, emulator);
  await installPersistence(app, emulator);

  await app.register(repositoryRoutes, { prefix: REPOSITORY_PREFIX, emulator });
  await app.register(provisioningRoutes, { prefix: PROVISIONING_PREFIX, emulator });
  await app.register(annotationRoutes, { prefix: ANNOTATIONS_PREFIX, emulator });
  await app.register(alertRoutes, { prefix: ALERTS_PREFIX, emulator });
  await app.register(controlRoutes, { prefix: CONTROL_PREFIX, emulator });
  await app.register(uiRoutes, { prefix: UI_PREFIX, emulator });
  await app.register(homeRoutes);

  return app;
}
