import { Readable } from 'node:stream';
import { errorCodes, type FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { trustImported } from '../alerts/deliveries.js';
import type { World } from '../interfaces.js';
import { readStateBody, type BodyBytes } from '../world/state-parser.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema, STATUS_OF, badRequest, errorBody } from '../http/errors.js';
import { FixtureError, formatProblem, jsonPath } from '../core/fixtures.js';
import { refuseOtherMethods } from '../http/routing.js';
import { INTERFACE_SECTION_NAMES, SECTION_NAMES, StateSchema, parseState, type SectionName, type State } from '../state.js';
import { exportText, type ListSerializer } from '../world/export-stream.js';
import { ClockModeQuerySchema, HealthSchema, NoBodySchema, ReplaceResultSchema, ResetResultSchema } from './schemas.js';
import { CLOCK_MODES, type ClockMode } from '../core/clock.js';

/** A whole exported state can be far larger than any request of the emulated interfaces. */
export const STATE_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * A scope whose routes take a whole state as their body: the JSON body is handed to the route
 * as it came, in the chunks it arrived in (a Buffer[]), for readStateBody to parse and
 * validate, in a worker thread when it is large, instead of on the event loop; not joined
 * here, as Fastify's own parser would in one copy that held the loop for tens of
 * milliseconds. The route's bodyLimit and the Content-Length are checked as Fastify's parser
 * checks them, with its errors; an empty body is refused as the root's parser does.
 */
export function takeStateBodies(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', (request, payload, done) => {
    const limit = request.routeOptions.bodyLimit ?? STATE_BODY_LIMIT;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
    };
    function onData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit) {
        stop();
        done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
        return;
      }
      chunks.push(bytes);
    }
    function onEnd(err?: Error & { statusCode?: number }) {
      stop();
      if (err) {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        return done(err, undefined);
      }
      if (!Number.isNaN(declared) && received !== declared) return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined);
      if (received === 0) return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      done(null, chunks);
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  });
}

/**
 * A schema as the export serialises with it: the same, except that a choice among fixed
 * strings (an enum, `anyOf` of string constants) is a string. Its serializer then needs no
 * validator to pick a branch (compiling those took up to 200 ms on a section's first
 * export), and writes the very same bytes for a valid state, which an export always is.
 */
function withPlainEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withPlainEnums);
  if (node === null || typeof node !== 'object') return node;
  const { anyOf } = node as { anyOf?: unknown };
  const isConstant = (branch: unknown) => typeof (branch as { const?: unknown } | null)?.const === 'string';
  if (Array.isArray(anyOf) && anyOf.length > 0 && anyOf.every(isConstant)) {
    const { anyOf: _branches, ...rest } = node as Record<string, unknown>;
    return { ...(withPlainEnums(rest) as object), type: 'string' };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withPlainEnums(value)]));
}

/** Each section's schema for the export's serializers, made once (Fastify keeps a serializer per schema object). */
const EXPORT_SCHEMAS = Object.fromEntries(SECTION_NAMES.map((name) => [name, withPlainEnums(StateSchema.properties[name])])) as Record<
  SectionName,
  Record<string, unknown>
>;

/** A refused state: the error body, and each problem on its own (as health lists those of a seed). */
const StateProblemsSchema = Type.Object({
  ...ErrorBodySchema.properties,
  problems: Type.Optional(
    Type.Array(
      Type.Object(
        {
          path: Type.String({ description: 'JSON path in the body, e.g. $.grids[0].name' }),
          message: Type.String(),
          text: Type.String({ description: 'the problem as one line of the message: body: PATH: MESSAGE' }),
        },
        { additionalProperties: false },
      ),
      { description: 'what is wrong with the state, one entry a problem, those the message lists' },
    ),
  ),
  unlisted: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Boolean()], { description: 'how many more problems there are, not listed (true: more, not counted)' })),
});

const NOT_A_STATE = 'body: expected a JSON object with the state sections (users, tokens, grids, ...)';

/**
 * `?clock=` of a route whose body is a state: read here, as those routes hand their body
 * to readStateBody instead of a validator (and so their query string too).
 */
export function clockModeOf(query: unknown): ClockMode | undefined {
  const given = query !== null && typeof query === 'object' ? (query as Record<string, unknown>) : {};
  const unknown = Object.keys(given).filter((key) => key !== 'clock');
  // The messages the validator of the other routes gives.
  if (unknown.length) throw badRequest(`querystring: unknown field '${unknown[0].slice(0, 60)}'`);
  const { clock } = given;
  if (clock === undefined) return undefined;
  if (typeof clock === 'string' && (CLOCK_MODES as readonly string[]).includes(clock)) return clock as ClockMode;
  throw badRequest(`querystring field 'clock' must be one of ${CLOCK_MODES.map((m) => `"${m}"`).join(', ')}`);
}

/**
 * A state sent to a world (an import, a sandbox's state) with a `demo` other than the seed's:
 * the demo's title and subtitle belong to the fixtures (the dashboard's presenter view reads
 * them from the seed), so a world's state has no place to keep another; refused rather than
 * dropped. The seed's own (a state made from the fixture folder) is taken as what it is.
 */
export function refuseDemo(state: State, seed: { readonly demo?: unknown }): void {
  if (state.demo !== undefined && JSON.stringify(state.demo) !== JSON.stringify(seed.demo)) {
    throw badRequest(
      "body: $.demo: the demo's title is the fixtures' (FIXTURES_DIR), read by the dashboard's presenter view; a state sent to a world cannot change it: leave demo out, or send the fixtures' own",
    );
  }
}

/** How many entries each section of the interfaces holds in a state (as a reset counts them). */
function sectionCounts(state: State): Record<string, number> {
  return Object.fromEntries(INTERFACE_SECTION_NAMES.map((name) => [name, state[name].length]));
}

type Health = Static<typeof HealthSchema>;

/**
 * The health answer with exactly the keys of its schema (HealthSchema), in the order the schema
 * serializer writes them, an absent optional one left undefined: JSON.stringify then writes
 * the bytes fast-json-stringify would (test/control/health-serialization.test.ts compares them).
 */
export function healthView(h: Health): Health {
  const { clock, persistence: p, seed } = h;
  return {
    status: h.status,
    now: h.now,
    uptimeSeconds: h.uptimeSeconds,
    clock: { now: clock.now, iso: clock.iso, scale: clock.scale, frozen: clock.frozen },
    counts: h.counts,
    faultRules: h.faultRules,
    stateFile: h.stateFile,
    persistence: p === undefined ? undefined : { ok: p.ok, error: p.error, failingSince: p.failingSince, lastWrittenAt: p.lastWrittenAt },
    seed:
      seed === undefined
        ? undefined
        : {
            status: seed.status,
            problems: seed.problems.map((q) => ({ path: q.path, message: q.message, text: q.text, file: q.file, line: q.line, column: q.column })),
            unlisted: seed.unlisted,
            serving: seed.serving,
            loadedAt: seed.loadedAt,
            checkedAt: seed.checkedAt,
            watching: seed.watching,
            stopped: seed.stopped,
          },
  } as Health;
}

/** Health, reset, and export/import of the whole state. */
export const stateRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /**
   * GET /_emulator/health: fixtures are loaded and the server answers (the container's health
   * check). 503 while the state file cannot be written, so that a health check notices that
   * acknowledged changes are not being kept.
   */
  app.get(
    '/health',
    {
      schema: {
        tags: ['Control'],
        operationId: 'getHealth', summary: 'Liveness and readiness; open even when ADMIN_TOKEN is set',
        // 503 is also the answer, in the error body, when a new sandbox cannot be made (MAX_SANDBOXES).
        response: { 200: HealthSchema, 503: Type.Union([HealthSchema, ErrorBodySchema]) },
      },
    },
    async (request, reply) => {
      // Cheap on purpose: polled every few seconds, so it reads counts instead of exporting.
      // The stores' own counts, as the reset answer's; not world.counts(), whose token count
      // walks every session.
      const { provisioning, annotations } = world(request).stores;
      const { grids, environments, rsdbs } = provisioning.counts();
      const { domains } = annotations.counts();
      const clock = world(request).clock.status();
      const persistence = app.statePersistence?.status();
      const seed = app.seedWatch?.status();
      // A watch that no longer reads the folder is degraded as a state file that cannot be written is.
      const degraded = (persistence !== undefined && !persistence.ok) || seed?.stopped !== undefined;
      if (degraded) reply.code(503);
      // A 200 is written by JSON.stringify (see healthView): the start's first answer loads
      // and compiles no schema serializer.
      else reply.type('application/json; charset=utf-8').serializer(JSON.stringify);
      return healthView({
        status: degraded ? 'degraded' : 'ok',
        now: clock.now,
        uptimeSeconds: Math.round(process.uptime() * 10) / 10,
        clock,
        counts: { grids, environments, rsdbs, domains },
        faultRules: world(request).faults.activeCount(),
        stateFile: world(request).config.stateFile,
        persistence,
        seed,
      });
    },
  );

  /** POST /_emulator/reset: back to the seed the process started with; `?clock=real` also back to real time. */
  app.post(
    '/reset',
    {
      schema: {
        tags: ['Control'],
        operationId: 'reset', summary: 'Back to the start seed: stores, tokens, clock settings, faults, journal; ?clock=real also returns the clock to real time',
        querystring: ClockModeQuerySchema,
        body: NoBodySchema,
        response: { 200: ResetResultSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      world(request).reset({ clock: request.query.clock });
      // Counted from the stores: exporting the whole state only to count it was half a reset's time.
      return { status: 'reset' as const, clock: world(request).clock.status(), counts: world(request).counts() };
    },
  );

  /**
   * GET /_emulator/state: the whole state in the fixture format (an export is a valid fixture
   * set). Streamed: a snapshot taken at once is written out in slices (export-stream.ts), each
   * section by the serializer of its part of the response schema, so the bytes are those of
   * the whole schema's serializer, and a large state does not hold up other requests.
   */
  app.get(
    '/state',
    {
      schema: {
        tags: ['Control'],
        operationId: 'exportState', summary: 'Export the whole state as a fixture set',
        response: { 200: StateSchema },
      },
    },
    async (request, reply) => {
      // What the stores left for their first use, done in slices first: snapshot() is then quick.
      await world(request).prepareSnapshot();
      const snapshot = world(request).snapshot();
      // Compiled on the first export, once per section: Fastify keeps them for the route.
      const serializerOf = (name: string) => reply.compileSerializationSchema(EXPORT_SCHEMAS[name as SectionName], '200') as unknown as ListSerializer;
      const body = Readable.from(exportText(snapshot, SECTION_NAMES, serializerOf), { objectMode: false, highWaterMark: 64 * 1024 });
      // A stream is sent as it is; the response schema still documents the route.
      return reply.type('application/json; charset=utf-8').send(body as unknown as State);
    },
  );

  /** PUT /_emulator/state: replace the whole state with a posted one, validated first. */
  await app.register(async (scope) => {
    takeStateBodies(scope);
    scope.withTypeProvider<TypeBoxTypeProvider>().put(
      '/state',
      {
        bodyLimit: STATE_BODY_LIMIT,
        // parseState validates instead: it names the JSON path, and checks what a schema cannot
        // (duplicate ids, references to things that do not exist).
        validatorCompiler: () => (data: unknown) => ({ value: data }),
        schema: {
          tags: ['Control'],
          operationId: 'importState', summary: "Import a whole state (a fixture set); a bad one is refused and the old state kept. An export is loaded on its clock (?clock=real: on real time)",
          querystring: ClockModeQuerySchema,
          body: StateSchema,
          response: { 200: ReplaceResultSchema, 400: StateProblemsSchema, 503: ErrorBodySchema },
        },
      },
      async (request, reply) => {
        // No body at all (none sent, or sent without a Content-Type, which no parser reads) is no state.
        const body = request.body as unknown as BodyBytes | null | undefined;
        if (body === null || body === undefined) throw badRequest(NOT_A_STATE);
        const clock = clockModeOf(request.query);
        // A bad state throws a domain error (400), which the error handler answers.
        const { importQueueMax, importQueueMaxBytes } = world(request).config;
        const bounds = { maxBodies: importQueueMax, maxBytes: importQueueMaxBytes };
        let read;
        try {
          read = await readStateBody(body, 'body', parseState, request.sandbox ?? '', bounds, world(request).clock.now());
        } catch (err) {
          // Not a valid state: each problem on its own as well as in the message, as health lists a seed's.
          if (!(err instanceof FixtureError) || err.problems.length === 0) throw err;
          const status = STATUS_OF[err.kind];
          return reply.code(status as 400).send({
            ...errorBody(status, err.message),
            problems: err.problems.map((p) => ({ path: jsonPath(p.pointer), message: p.message, text: formatProblem(p, 'body') })),
            unlisted: err.unlisted,
          }) as never;
        }
        if (read.kind === 'invalid-json') throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
        if (read.kind !== 'state') throw badRequest(NOT_A_STATE);
        refuseDemo(read.state, world(request).seedState);
        const counts = sectionCounts(read.state);
        // The long part of building the stores, in slices; then the whole state at once.
        await world(request).prepare(read.state);
        trustImported(world(request).config, read.state);
        world(request).replace(read.state, clock);
        return { status: 'replaced' as const, counts };
      },
    );
  });
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
