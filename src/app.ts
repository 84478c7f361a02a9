import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { resolveConfig, type Config } from './config.js';
import { EmulatorClock, wallClock, type ControllableClock } from './core/clock.js';
import { serializationSchema } from './core/schema.js';
import { installErrorHandling, sendError } from './http/errors.js';
import { strictValidatorCompiler } from './http/validation.js';
import { serializerOnFirstUse, validatorFactory } from './http/compile-on-first-use.js';
import { World } from './world/world.js';
import { Sandboxes } from './world/sandboxes.js';
import { openStateFile, restoreSandbox, resumeClock } from './world/persistence.js';
import { emptyState, inspectFixturesOffThread, parseState, type State } from './state.js';
import { SeedWatch, sameClock } from './world/seed-watch.js';
import { installAuthGuard } from './repository/guard.js';
import { AuthStore } from './repository/store.js';
import { AREAS, INTERFACES, type Interfaces, type World as ListedWorld } from './interfaces.js';
import { installAreas } from './http/areas.js';
import type { AnyInterface } from './http/interface.js';
import { CONTROL_PREFIX, controlRoutes } from './control/routes.js';
import { installControlHooks, installWorlds } from './control/hooks.js';
import { installPersistence } from './control/persistence.js';
import { installCors } from './http/cors.js';
import { connectionLimits } from './http/connection-limits.js';
import { installOpenApi } from './http/openapi.js';
import { OneLinePerRequest, echoRequestId } from './http/request-log.js';
import { installPipeline } from './http/pipeline.js';
import { UI_PREFIX, uiRoutes } from './ui/plugin.js';
import { rewriteSandboxUrl } from './http/paths.js';
import { homeRoutes } from './ui/home.js';
import { servicePageRoutes } from './ui/service-page.js';
import { trustTargets } from './alerts/deliveries.js';
import { TimelinePlayer } from './control/timeline-player.js';

/**
 * serializerOnFirstUse, given each response schema as serializationSchema rewrites it: a union
 * of scalars is written by its value's type, so the first answers load no validator (Ajv) to
 * choose among the members.
 */
const serializeScalarUnionsByType: typeof serializerOnFirstUse = (externalSchemas, options) => {
  const compile = serializerOnFirstUse(externalSchemas, options);
  // Rewritten when the serializer is compiled (on the route's first response), not at start-up.
  return (routeSchema) =>
    compile({
      ...routeSchema,
      get schema() {
        return serializationSchema(routeSchema.schema);
      },
    });
};

export interface BuildAppOptions {
  /** Settings; anything left out takes its default (settings from loadConfig are taken as they are). */
  config?: Partial<Config> | Config;
  /** The clock every lifecycle runs on (default: real time). */
  clock?: ControllableClock;
  /** The seed, already loaded (default: empty). */
  fixtures?: State;
  /**
   * The folder the seed was loaded from: the health check reports on it, and with WATCH its
   * changes are reloaded. Absent: the seed came from no folder, and nothing is watched.
   */
  fixturesFrom?: string;
  /** Fastify's logger option (default: off). */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
}

/**
 * The composition root. Reads nothing from the environment and does not listen: the caller
 * (server.ts, a test, an embedding program) decides both.
 */
export async function buildApp(options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const config = resolveConfig(options.config);
  const clock = options.clock ?? new EmulatorClock();
  // Read before the world is built, so that its stores are built once, from the file.
  const opened =
    config.stateFile === undefined
      ? undefined
      : await openStateFile(config.stateFile, config.fixturesDir, parseState, { mode: config.sandboxes, onUnloadable: config.stateFileSandboxes });
  const fixtures = options.fixtures ?? emptyState();
  // The targets of the seed and of the state file are the operator's: the only ones, with an admin's imports, deliveries are sent to.
  trustTargets(config, fixtures);
  trustTargets(config, opened?.persisted?.state);
  for (const s of opened?.persisted?.sandboxes ?? []) trustTargets(config, s.state);
  const world: ListedWorld = new World<Interfaces>(INTERFACES, fixtures, clock, config, opened?.persisted?.state as State | undefined);
  // Built on the clock it had at the write; it runs on by the time the process was down.
  if (opened?.persisted) resumeClock(clock, opened.persisted.state.clock);
  let seedAuth: { from: State; auth: AuthStore } | undefined;
  // What a new sandbox copies: the state file's state when there was one, until the fixtures are reloaded (WATCH).
  let sandboxStart = opened?.persisted?.state as State | undefined;
  const sandboxes = new Sandboxes({
    mode: config.sandboxes,
    max: config.maxSandboxes,
    idleTimeoutMs: config.sandboxIdleTimeoutMs,
    // A new sandbox copies what the process started with: the state file's state when there
    // was one, else the fixtures (the reloaded ones, with WATCH). Its reset goes back to the
    // fixtures, as the default world's does.
    // The state file's state is built on its clock, then brought to the default world's time,
    // as the default world was: what it would be now had nothing changed it.
    create: (name, state, clock) => {
      if (state !== undefined || sandboxStart?.clock === undefined) return world.fork(name, state ?? sandboxStart, clock);
      const forked = world.fork(name, sandboxStart);
      const behind = world.clock.now() - forked.clock.now();
      if (behind > 0) forked.clock.advance(behind);
      return forked;
    },
    now: wallClock,
    onChange: (name, change) => world.events.record({ type: `sandbox.${change}`, kind: 'sandbox', resourceId: name }),
  });
  /**
   * The users and tokens a new sandbox starts with, for judging a request under an unknown
   * name before a world is built for it: its tokens never expire here (the world built next
   * judges them again, on its clock). The seed changes when the fixtures are reloaded (WATCH):
   * they are read again then.
   */
  const seedCredentials = (): AuthStore => {
    const from = (sandboxStart ?? world.seedState) as State;
    if (seedAuth?.from !== from) seedAuth = { from, auth: new AuthStore(from.users, from.tokens, clock, Number.POSITIVE_INFINITY) };
    return seedAuth.auth;
  };
  for (const s of opened?.persisted?.sandboxes ?? []) sandboxes.restore(s.name, restoreSandbox(world, s), s.createdAt, s.lastUsedAt);

  const logging = options.loggerInstance !== undefined || Boolean(options.logger);
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    bodyLimit: config.bodyLimitBytes,
    // Deadlines, so that slow or silent clients cannot hold connections (and descriptors) open.
    ...connectionLimits(config),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    logController: new OneLinePerRequest({ disableRequestLogging: !logging }),
    requestIdHeader: 'x-request-id',
    // Every route's schemas are compiled on the route's first use, not at start-up; and the
    // compilers Fastify would load by default (Ajv, fast-json-stringify) are not loaded until then.
    schemaController: { compilersFactory: { buildValidator: validatorFactory(strictValidatorCompiler), buildSerializer: serializeScalarUnionsByType } },
    // /sandbox/<name>/<path> is routed as /<path> in the sandbox's world: every route, hook
    // and rule applies unchanged, and the name is kept for the first hook (installWorlds).
    ...(config.sandboxes === 'off'
      ? {}
      : {
          rewriteUrl: rewriteSandboxUrl,
        }),
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

  // A client may half-close its side once it has sent a request (a raw socket's end()). Node
  // then aborts every request still being answered, which is every answer that is not sent at
  // once: a streamed export, an import parsed off the main thread. Half-open, the answer is
  // sent and the connection closed after it, as it is for an answer sent at once.
  (app.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  app.decorate('world', world);
  app.decorate('emulator', world);
  app.decorate('sandboxes', sandboxes);
  // Bodies are taken exactly as sent (no coercion, no silently dropped fields) on every route.
  app.setValidatorCompiler(strictValidatorCompiler);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, `no resource at ${request.method} ${request.url.split('?')[0]}`),
  );
  // Every request passes one onRequest hook (http/pipeline.ts), whose steps run in this order:
  // the request id and CORS headers on every answer; the area and then the world of the
  // request (the default one or a sandbox's), which everything after reads; preflights,
  // answered once their world is known (so they are journaled) and before any credential check
  // (a preflight has no token); the control API's admin token and the faults (a fault strikes
  // before the token check); the token guard.
  const cors = installCors(app, { origins: config.corsOrigins, allowHeaders: config.corsAllowHeaders, credentials: config.corsCredentials });
  const setArea = installAreas(app, AREAS);
  const arrive = installWorlds(app, world, sandboxes, seedCredentials);
  const control = installControlHooks(app);
  const guard = installAuthGuard(app, { auth: (r) => r.world.stores.repository.auth, alertsRequireToken: config.alertsRequireToken });
  installPipeline(app, {
    mark: [echoRequestId, cors.mark, setArea],
    before: [arrive, cors.preflights],
    wait: control,
    after: [guard],
  });
  // The timelines' steps due are played before a request is handled, and a recording world
  // records what changed it: root hooks, installed before every route.
  const player = new TimelinePlayer(app as unknown as FastifyInstance, config.adminToken);
  player.install();
  // And while an event stream listens, when its timer reaches them (sandboxes fork this world's).
  world.player = player;
  // OpenAPI before the routes it lists.
  await installOpenApi(app, config, { interfaces: INTERFACES, areas: AREAS });
  await installPersistence(app, {
    opened,
    main: world,
    sandboxes,
    flushIntervalMs: config.stateFlushIntervalMs,
    maxBytes: config.stateFileMaxBytes,
    worldMaxBytes: config.stateFileWorldMaxBytes,
  });

  // Each interface gets its own store, through the request's world, and the settings.
  for (const i of INTERFACES as readonly AnyInterface[]) {
    await app.register(i.routes, {
      prefix: i.routePrefix ?? i.prefix,
      store: (r) => (r.world.stores as Record<string, unknown>)[i.name],
      stores: (r) => r.world.stores,
      config,
    });
  }
  const { fixturesFrom } = options;
  if (fixturesFrom === undefined) app.decorate('seedWatch', null);
  else {
    const seedWatch = new SeedWatch<State>({
      dir: fixturesFrom,
      // Checked at the time the seed would load, as at start.
      // A large folder is read in the state worker, as a large import is.
      inspect: (signal) => inspectFixturesOffThread(fixturesFrom, { now: clock.now(), signal }),
      // The default world is reset to the new seed, which its event stream reports as `world.reloaded`.
      // The clock keeps its time, unless asked to move: SEED_CLOCK keep, and the fixtures' clock
      // is not the one of the seed in use (a new export saved into the folder).
      apply: async (seed) => {
        // The long part of building the stores, in slices, as an import does; then the reset at once.
        await world.prepare(seed);
        trustTargets(config, seed);
        const moves = config.seedClock === 'keep' && seed.clock !== undefined && !sameClock(seed.clock, world.seedState.clock);
        world.reseed(seed, moves ? 'keep' : 'real');
        if (moves) app.log.info({ clock: seed.clock }, "the fixtures' clock changed: the clock is set to it (--seed-clock keep)");
        sandboxStart = undefined;
      },
      // A broken edit: the default world's stream says so (the problems are in the health check).
      refused: () => world.events.record({ type: 'seed.refused' }),
      log: app.log,
      pollMs: config.watchPollMs,
      timeoutMs: config.watchReloadTimeoutMs,
    });
    app.decorate('seedWatch', seedWatch);
    // Watchers and timers end with the app, so that a process (or a test run) can exit.
    app.addHook('onClose', async () => seedWatch.close());
    if (config.watch) seedWatch.start();
  }
  // No wake-up timer outlives the app, and no delivery is started after it closed.
  app.addHook('onClose', async () => {
    world.dispose();
    sandboxes.dispose();
  });
  await app.register(controlRoutes, { prefix: CONTROL_PREFIX, world: (r) => r.world, sandboxes, player });
  await app.register(uiRoutes, { prefix: UI_PREFIX });
  await app.register(homeRoutes);
  await app.register(servicePageRoutes);

  return app;
}
