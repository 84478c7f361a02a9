import { Type, type Static } from '@sinclair/typebox';
import { CLOCK_MODES, ClockStatusSchema as CoreClockStatusSchema } from '../core/clock.js';
import { literals, noBody } from '../core/schema.js';
import { ResourceKindSchema, ResourceLifecycleSchema } from '../provisioning/schemas.js';
import { InstanceSchema, PLAY_OUTCOMES, PlayOutcomeSeedSchema } from '../compositions/schemas.js';

// ---------------------------------------------------------------------------------------
// Clock
// ---------------------------------------------------------------------------------------

export const ClockStatusSchema = Type.Object(
  {
    ...CoreClockStatusSchema.properties,
    nextTransitionAt: Type.Optional(Type.Integer({ description: 'when the next lifecycle transition is scheduled, if any' })),
  },
  { additionalProperties: false },
);
export type ClockStatusBody = Static<typeof ClockStatusSchema>;

// The resource kinds and a resource's lifecycle: their schemas belong to provisioning/.
export { RESOURCE_KINDS, ResourceKindSchema, ResourceLifecycleSchema, type ResourceKind, type ResourceLifecycle } from '../provisioning/schemas.js';

export const AdvanceBodySchema = Type.Object(
  {
    ms: Type.Optional(Type.Integer({ minimum: 0, description: 'move forward by this many milliseconds' })),
    to: Type.Optional(
      Type.Union([Type.Literal('next'), Type.Integer({ minimum: 0 }), Type.String({ minLength: 1 })], {
        description: '"next" (the next lifecycle transition), or an instant: epoch ms or an ISO 8601 date-time',
      }),
    ),
    until: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([ResourceKindSchema, Type.Literal('compositionInstance')]),
          id: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 100, description: 'a compositionInstance instanceID' })]),
        },
        { additionalProperties: false, description: "move forward until this resource's schedule has settled" },
      ),
    ),
  },
  { additionalProperties: false, description: 'exactly one of ms, to, until' },
);
export type AdvanceBody = Static<typeof AdvanceBodySchema>;

export const AdvanceResultSchema = Type.Object(
  { ...ClockStatusSchema.properties, advancedMs: Type.Integer({ description: 'how far this call moved the clock' }) },
  { additionalProperties: false },
);

export const ClockSettingsBodySchema = Type.Object(
  {
    scale: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'emulated ms per real ms: 1 real time, 60 a minute per second, 0 stopped' })),
    frozen: Type.Optional(Type.Boolean({ description: 'stop (true) or resume (false) the passing of time' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ClockSettingsBody = Static<typeof ClockSettingsBodySchema>;

// Fault rules: their schemas belong to the world that keeps the rules (world/fault-schemas.ts).
export * from '../world/fault-schemas.js';

// The journal: its schemas belong to the world that keeps it (world/journal-schemas.ts).
export * from '../world/journal-schemas.js';

// ---------------------------------------------------------------------------------------
// Health, reset, state
// ---------------------------------------------------------------------------------------

export const PersistenceStatusSchema = Type.Object(
  {
    ok: Type.Boolean({ description: 'false while writes of the state file fail' }),
    error: Type.Optional(Type.String({ description: 'why the last write failed (while not ok)' })),
    failingSince: Type.Optional(Type.String({ format: 'date-time', description: 'when the writes started failing, real time (while not ok)' })),
    lastWrittenAt: Type.Optional(Type.String({ format: 'date-time', description: 'when the state file was last written, real time' })),
  },
  { additionalProperties: false, description: 'the state file, when STATE_FILE is set' },
);

export const SeedProblemSchema = Type.Object(
  {
    file: Type.Optional(Type.String({ description: 'the fixture file' })),
    line: Type.Optional(Type.Integer({ minimum: 1 })),
    column: Type.Optional(Type.Integer({ minimum: 1 })),
    path: Type.String({ description: 'JSON path in the file, e.g. $.grids[0].name' }),
    message: Type.String(),
    text: Type.String({ description: 'the problem as one line, as `check` prints it: FILE:LINE:COLUMN: PATH: MESSAGE' }),
  },
  { additionalProperties: false },
);

export const SeedStatusSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('error')], {
      description: "'error' while the fixtures folder, as it is now, cannot be loaded (WATCH): the last good seed is kept",
    }),
    problems: Type.Array(SeedProblemSchema, { description: 'what is wrong with the folder (while error), at most 10' }),
    unlisted: Type.Union([Type.Integer({ minimum: 0 }), Type.Boolean()], { description: 'how many more problems there are, not listed (true: more, not counted)' }),
    serving: Type.Union([Type.Literal('fixtures'), Type.Literal('empty')], {
      description: "the default world's seed: the folder's (last good) fixtures, or 'empty' when the folder had problems at start (WATCH) and has not loaded since",
    }),
    loadedAt: Type.String({ format: 'date-time', description: 'when the seed in use was loaded, real time' }),
    checkedAt: Type.String({ format: 'date-time', description: 'when the folder was last read, real time' }),
    watching: Type.Boolean({ description: 'whether changes to the folder are watched (WATCH)' }),
    stopped: Type.Optional(
      Type.String({ description: 'why changes to the folder are not read now (a read given up at its deadline has not ended); health is then degraded (503)' }),
    ),
  },
  { additionalProperties: false, description: 'the seed read from the fixtures folder, when the emulator was started from one' },
);

export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], { description: "'degraded' (with status 503) while the state file cannot be written, or while the fixtures watch is stopped (seed.stopped)" }),
    now: Type.Integer({ description: 'emulated time, epoch ms' }),
    uptimeSeconds: Type.Number(),
    clock: ClockStatusSchema,
    counts: Type.Record(Type.String(), Type.Integer(), { description: 'number of each kind of resource' }),
    faultRules: Type.Integer({ description: 'active fault rules' }),
    stateFile: Type.Optional(Type.String({ description: 'where the state is persisted, when STATE_FILE is set' })),
    persistence: Type.Optional(PersistenceStatusSchema),
    seed: Type.Optional(SeedStatusSchema),
  },
  { additionalProperties: false },
);

/** `?clock=` of a reset, and of a state import (PUT /_emulator/state, a sandbox PUT with a state). */
export const ClockModeQuerySchema = Type.Object(
  {
    clock: Type.Optional(
      literals(CLOCK_MODES, {
        description: "keep: a state that carries a clock (an export) is loaded on it; real: on real time (a reset moves the clock back to real time first), the state's emulated times moved to keep their ages",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ResetResultSchema = Type.Object(
  { status: Type.Literal('reset'), clock: ClockStatusSchema, counts: Type.Record(Type.String(), Type.Integer()) },
  { additionalProperties: false },
);

export const ReplaceResultSchema = Type.Object(
  { status: Type.Literal('replaced'), counts: Type.Record(Type.String(), Type.Integer()) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Lifecycles and scenarios
// ---------------------------------------------------------------------------------------

const TableRowSchema = Type.Object(
  {
    state: Type.String(),
    holds: Type.Optional(Type.String({ description: 'name of the duration this state lasts; absent on the last row' })),
    monitorsOnly: Type.Optional(Type.Boolean({ description: 'skipped for a grid without monitors' })),
  },
  { additionalProperties: false },
);
const TableSchema = Type.Array(TableRowSchema);
const TablesByOutcomeSchema = Type.Record(Type.String(), TableSchema);
const StartStopTablesSchema = Type.Object(
  { start: TablesByOutcomeSchema, terminate: TablesByOutcomeSchema, cancel: TableSchema },
  { additionalProperties: false },
);
const DurationsSchema = Type.Record(Type.String(), Type.Integer(), { description: 'ms at TIME_SCALE=1, per duration name' });

export const LifecyclesSchema = Type.Object(
  {
    now: Type.Integer(),
    timeScale: Type.Number({ description: 'TIME_SCALE: multiplies every duration' }),
    nextTransitionAt: Type.Optional(Type.Integer()),
    tables: Type.Object(
      {
        grid: StartStopTablesSchema,
        cloudServer: TablesByOutcomeSchema,
        rsdb: TablesByOutcomeSchema,
        environment: StartStopTablesSchema,
      },
      { additionalProperties: false, description: 'the states each lifecycle passes, by outcome, with the duration each holds' },
    ),
    defaultDurations: Type.Object(
      { grid: DurationsSchema, rsdb: DurationsSchema, environment: DurationsSchema },
      { additionalProperties: false, description: "durations a resource's fixture does not set" },
    ),
    resources: Type.Array(ResourceLifecycleSchema),
  },
  { additionalProperties: false },
);
export type Lifecycles = Static<typeof LifecyclesSchema>;

export const ResourceParamsSchema = Type.Object({
  kind: Type.String({ description: 'grid, environment, rsdb or cloudServer' }),
  id: Type.String({ description: 'integer id' }),
});

// The body of next-start: a fixture's scenario (the `scenarios` section) holds the same object.
export { NextStartBodySchema } from '../provisioning/schemas.js';

export const NextStartSchema = Type.Object(
  { kind: ResourceKindSchema, id: Type.Integer(), outcome: Type.Union([Type.String(), Type.Null()], { description: 'null: the default outcome' }) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Alerts
// ---------------------------------------------------------------------------------------

export const AlertPatchBodySchema = Type.Object(
  { enabled: Type.Boolean({ description: 'false: fire and clear answer 409, as for an alert disabled in the user interface' }) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Compositions
// ---------------------------------------------------------------------------------------

export const NextPlayBodySchema = Type.Object(
  {
    compositionName: Type.String({ minLength: 1, maxLength: 500, description: 'full path name of the composition' }),
    outcome: Type.Union([literals(PLAY_OUTCOMES), Type.Null()], { description: 'null: as the fixture says again' }),
    afterMs: PlayOutcomeSeedSchema.properties.afterMs,
    errorFactor: PlayOutcomeSeedSchema.properties.errorFactor,
    message: PlayOutcomeSeedSchema.properties.message,
  },
  { additionalProperties: false },
);

export const CompositionListSchema = Type.Array(
  Type.Object(
    {
      id: Type.Integer(),
      path: Type.String(),
      description: Type.String(),
      durationMs: Type.Integer(),
      virtualUsers: Type.Integer(),
      loadServers: Type.Integer(),
    },
    { additionalProperties: false },
  ),
);

const { url: _url, ...instanceFields } = InstanceSchema.properties;
export const InstanceOverviewSchema = Type.Array(
  Type.Object(
    {
      ...instanceFields,
      messages: Type.Optional(Type.Object({ count: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false, description: "its result's messages so far" })),
    },
    { additionalProperties: false },
  ),
);

// ---------------------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------------------

/** At most this many users, and this many tokens, in one answer (`unlisted` counts the rest). */
export const MAX_LISTED_USERS = 50;

export const SignInListSchema = Type.Object(
  {
    users: Type.Array(
      Type.Object(
        {
          userName: Type.String(),
          password: Type.String({ description: 'what the Tokens log-in call takes with userName' }),
          tenant: Type.String(),
          fullName: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
      { description: `the users the Tokens log-in call knows, in the state's order (at most ${MAX_LISTED_USERS})` },
    ),
    tokens: Type.Array(
      Type.Object({ token: Type.String(), userName: Type.String() }, { additionalProperties: false }),
      { description: `the session tokens of the world's seed that never expire (at most ${MAX_LISTED_USERS})` },
    ),
    unlisted: Type.Object(
      { users: Type.Integer({ minimum: 0 }), tokens: Type.Integer({ minimum: 0 }) },
      { additionalProperties: false, description: 'how many more there are, not listed' },
    ),
  },
  { additionalProperties: false },
);
export type SignInList = Static<typeof SignInListSchema>;

/** The body of a control call whose options, if any, are query parameters (reset, fail, externally-terminate). */
export const NoBodySchema = noBody('none: the options, if any, are query parameters');
