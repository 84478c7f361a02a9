import { Type, type Static } from '@sinclair/typebox';
import { literals, repeatable } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

// ---------------------------------------------------------------------------------------
// States and commands (the reference's "Get a composition" and "Composition commands")
// ---------------------------------------------------------------------------------------

export const INSTANCE_STATES = [
  'Loading', 'Loaded', 'Starting', 'Playing', 'Pausing', 'Paused', 'Resuming', 'Stopping', 'Aborting',
  'Closing', 'Writing', 'Completed', 'Failed', 'Stopped', 'Aborted', 'Unloaded',
] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** Commands of POST (create an instance) and PUT (act on one). */
export const CREATE_COMMANDS = ['load', 'play'] as const;
export const INSTANCE_COMMANDS = ['play', 'stop', 'abort', 'pause', 'resume', 'unload'] as const;
export type InstanceCommand = (typeof INSTANCE_COMMANDS)[number];

/** How a play ends when nobody stops it (a fixture's default, or the control API's next play). */
export const PLAY_OUTCOMES = ['Completed', 'Failed', 'Stopped'] as const;
export type PlayOutcome = (typeof PLAY_OUTCOMES)[number];

/** A name that is one level of a flattened hierarchy: no slash. */
const LEVEL_NAME = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^/]+$' });
const DURATION = Type.Integer({ minimum: 0, maximum: 7 * 24 * 3_600_000, description: 'milliseconds' });

// ---------------------------------------------------------------------------------------
// Fixtures: what a composition is and what its runs show
// ---------------------------------------------------------------------------------------

export const ErrorMessageSeedSchema = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 500, description: 'e.g. "HTTP 503 Service Unavailable"' }),
    weight: Type.Number({ exclusiveMinimum: 0, default: 1, description: 'share of this collection\'s errors' }),
  },
  { additionalProperties: false },
);

/** A transaction or page of a clip, with the response times and errors its runs show. */
export const CollectionSeedSchema = Type.Object(
  {
    name: LEVEL_NAME,
    type: literals(['transaction', 'page'] as const, { default: 'transaction' }),
    medianMs: Type.Number({ minimum: 1, maximum: 600_000, description: 'median effective duration' }),
    sigma: Type.Number({ minimum: 0, maximum: 2, default: 0.35, description: 'spread: sigma of the log of the duration' }),
    errorRate: Type.Number({ minimum: 0, maximum: 1, default: 0, description: 'share of executions that fail' }),
    errors: Type.Array(ErrorMessageSeedSchema, { maxItems: 20, default: [], description: 'messages of the failures (default: "HTTP 500 Internal Server Error")' }),
    messages: Type.Integer({ minimum: 1, maximum: 100, default: 1, description: 'HTTP messages each execution sends' }),
  },
  { additionalProperties: false },
);
export type CollectionSeed = Static<typeof CollectionSeedSchema>;

export const TrackSeedSchema = Type.Object(
  {
    name: LEVEL_NAME,
    clip: LEVEL_NAME,
    virtualUsers: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    loadServers: Type.Integer({ minimum: 1, maximum: 1000, description: 'load servers this track needs' }),
    rampUpMs: Type.Integer({ minimum: 0, maximum: 7 * 24 * 3_600_000, default: 0, description: 'play time until every virtual user runs' }),
    thinkTimeMs: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 5000, description: 'pause of a virtual user between iterations of the clip' }),
    collections: Type.Array(CollectionSeedSchema, { minItems: 1, maxItems: 50, description: 'each iteration runs every one, in order' }),
  },
  { additionalProperties: false },
);
export type TrackSeed = Static<typeof TrackSeedSchema>;

export const InstanceDurationsSchema = Type.Object(
  {
    loading: Type.Optional(DURATION),
    starting: Type.Optional(DURATION),
    pausing: Type.Optional(DURATION),
    resuming: Type.Optional(DURATION),
    stopping: Type.Optional(DURATION),
    aborting: Type.Optional(DURATION),
    closing: Type.Optional(DURATION),
    writing: Type.Optional(DURATION),
    settle: Type.Optional(DURATION),
  },
  { additionalProperties: false, default: {}, description: 'ms at TIME_SCALE=1 of the states around a play' },
);
export type InstanceDurations = Static<typeof InstanceDurationsSchema>;

export const PlayOutcomeSeedSchema = Type.Object(
  {
    outcome: literals(PLAY_OUTCOMES),
    afterMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 3_600_000, description: 'play time at which a Failed or Stopped run ends (default: its duration)' })),
    errorFactor: Type.Optional(Type.Number({ minimum: 0, maximum: 1000, description: 'multiplies every error rate of the run' })),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'status text of a Failed run' })),
  },
  { additionalProperties: false },
);
export type PlayOutcomeSeed = Static<typeof PlayOutcomeSeedSchema>;

export const CompositionSeedSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'repository object id' }),
    path: Type.String({
      minLength: 2,
      maxLength: 500,
      pattern: '^(/[^/]+)+$',
      description: 'full path name, e.g. "/Tests/Checkout Load": folders, then the name',
    }),
    description: Type.String({ maxLength: 2000, default: '' }),
    durationMs: Type.Integer({ minimum: 1000, maximum: 7 * 24 * 3_600_000, description: 'play time of a run nobody stops' }),
    tracks: Type.Array(TrackSeedSchema, { minItems: 1, maxItems: 50 }),
    grid: Type.Optional(Type.String({ minLength: 1, description: 'name of the grid whose load servers it plays on (default: any checked grid with enough)' })),
    seed: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 100 })], { description: 'decides what runs show (default: the id)' })),
    durations: InstanceDurationsSchema,
    outcome: Type.Optional(PlayOutcomeSeedSchema),
  },
  { additionalProperties: false },
);
export type CompositionSeed = Static<typeof CompositionSeedSchema>;

// ---------------------------------------------------------------------------------------
// Runtime records (exported state)
// ---------------------------------------------------------------------------------------

/** A property of a load or play body (`customProperties`, `systemProperties`, `seedDataKeys`): kept as sent. */
const PropertySchema = Type.Object({}, { additionalProperties: true });

/** The fields of a load or play body besides the composition's name (the reference's; Jackson ignores none of them). */
const playFields = {
  alphaServer: Type.Optional(Type.String({ maxLength: 500, description: 'name of the server to use as the alpha (kept with the instance; the alpha is its first load server)' })),
  resultName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'name of the result a play writes' })),
  description: Type.Optional(Type.String({ maxLength: 2000, description: 'description of the result' })),
  rsdbName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'results database (shown by the result)' })),
  customProperties: Type.Optional(Type.Array(PropertySchema, { maxItems: 100 })),
  systemProperties: Type.Optional(Type.Array(PropertySchema, { maxItems: 100 })),
  seedDataKeys: Type.Optional(Type.Array(PropertySchema, { maxItems: 100 })),
};

/**
 * What an instance keeps of the bodies of its load and play: the result's name, description
 * and database (its result shows them), and the fields the emulator does not act on, kept
 * as sent so that an export shows them.
 */
export const PlayFieldsSchema = Type.Object(playFields, { additionalProperties: false, description: 'the fields of its load and play bodies' });
export type PlayFields = Static<typeof PlayFieldsSchema>;

const stepSchema = Type.Object({ state: literals(INSTANCE_STATES), at: emulatedTime(Type.Integer()) }, { additionalProperties: false });

export const InstanceRecordSchema = Type.Object(
  {
    instanceID: Type.String({ minLength: 1 }),
    compositionId: Type.Integer({ minimum: 1 }),
    gridId: Type.Integer({ minimum: 1 }),
    gridStartedAt: emulatedTime(Type.Integer({ description: 'the grid deployment it loaded on' })),
    serverIds: Type.Array(Type.Integer(), { description: 'the load servers it holds' }),
    steps: Type.Array(stepSchema, { minItems: 1 }),
    outcome: PlayOutcomeSeedSchema,
    failure: Type.Optional(Type.String({ description: 'status text of a Failed state' })),
    resultId: Type.Optional(Type.Integer()),
    play: Type.Optional(PlayFieldsSchema),
  },
  { additionalProperties: false },
);
export type InstanceRecord = Static<typeof InstanceRecordSchema>;

export const ResultRecordSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    description: Type.String(),
    instanceID: Type.String(),
    compositionId: Type.Integer(),
    run: Type.Integer({ minimum: 1, description: 'the how-manieth run of its composition: a key of its numbers' }),
    rsdbName: Type.Optional(Type.String()),
    startedAt: Type.Optional(
      emulatedTime(
        Type.Integer({
          description:
            "when the run began, epoch ms, for a result whose composition instance is not in the state (one written by hand): it played its composition's durationMs from then and Completed. Left out, it ended when the state loaded",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type ResultRecord = Static<typeof ResultRecordSchema>;

/** The sections of the state (world/state.ts) this interface owns. */
export const CompositionSectionsSchema = {
  compositions: Type.Array(CompositionSeedSchema, { default: [] }),
  compositionInstances: Type.Array(InstanceRecordSchema, { default: [] }),
  results: Type.Array(ResultRecordSchema, { default: [] }),
};
export interface CompositionSections {
  compositions: CompositionSeed[];
  compositionInstances: InstanceRecord[];
  results: ResultRecord[];
}

// ---------------------------------------------------------------------------------------
// Requests and responses: composition instances
// ---------------------------------------------------------------------------------------

/** The body of POST ?command=load|play and PUT ?command=...: the composition's name, and what a load or play keeps. */
export const InstanceBodySchema = Type.Object(
  {
    compositionName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'full path name of the composition (required on POST)' })),
    ...playFields,
  },
  { additionalProperties: false },
);
export type InstanceBody = Static<typeof InstanceBodySchema>;

export const CreateQuerySchema = Type.Object({ command: Type.Optional(repeatable({ description: 'load or play' })) });
export const CommandQuerySchema = Type.Object({
  command: Type.Optional(repeatable({ description: 'play, stop, abort, pause, resume or unload' })),
});
export const InstanceParamsSchema = Type.Object({ instanceID: Type.String({ minLength: 1, maxLength: 100 }) });

export const InstanceIdSchema = Type.Object({ instanceID: Type.String() }, { additionalProperties: false, $id: 'CompositionInstanceId' });

export const InstanceSchema = Type.Object(
  {
    instanceID: Type.String(),
    compositionName: Type.String({ description: 'the name of the composition' }),
    partiallyLoaded: Type.Boolean(),
    path: Type.String({ description: 'the folder path of the composition' }),
    resultName: Type.Optional(Type.String()),
    resultid: Type.Optional(Type.Integer()),
    maestroCount: Type.Integer({ minimum: 1 }),
    alphaServerId: Type.Integer({ minimum: 1 }),
    startTime: Type.Optional(Type.String({ description: 'when the play started, ISO 8601' })),
    state: literals(INSTANCE_STATES),
    status: Type.String(),
    totalTime: Type.Integer({ description: 'play time so far, ms' }),
    url: Type.String(),
  },
  { additionalProperties: false, $id: 'CompositionInstance' },
);
export type Instance = Static<typeof InstanceSchema>;

export const InstanceListSchema = Type.Object({ instances: Type.Array(InstanceSchema) }, { additionalProperties: false });

// ---------------------------------------------------------------------------------------
// Requests and responses: results
// ---------------------------------------------------------------------------------------

export const ResultIdParamsSchema = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const ResultListQuerySchema = Type.Object({
  composition: Type.Optional(repeatable({ description: 'full path name of a composition' })),
  name: Type.Optional(repeatable({ description: 'result name' })),
});

export const ResultSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    compositionName: Type.String({ description: 'full path name of the composition' }),
    instanceID: Type.String(),
    status: Type.String({ description: 'Running, Completed, Stopped, Aborted or Failed' }),
    startTime: Type.String(),
    endTime: Type.Optional(Type.String()),
    duration: Type.Integer({ description: 'play time, ms' }),
    virtualUsers: Type.Integer(),
    rsdbName: Type.Optional(Type.String()),
  },
  { additionalProperties: false, $id: 'Result' },
);
export type Result = Static<typeof ResultSchema>;
export const ResultListSchema = Type.Object({ results: Type.Array(ResultSchema) }, { additionalProperties: false });

export const ClipElementQuerySchema = Type.Object({
  elementType: Type.Optional(repeatable({ description: 'message (the only element type with data here)' })),
  groupBy: Type.Optional(repeatable({ description: 'elementType (default), error or elementName' })),
});

export const MessageMetricsSchema = Type.Object(
  {
    count: Type.Integer(),
    errors: Type.Integer(),
    duration: Type.Number({ description: 'sum of durations, ms' }),
    averageDuration: Type.Number(),
    minDuration: Type.Number(),
    maxDuration: Type.Number(),
    bytesSent: Type.Integer(),
    bytesReceived: Type.Integer(),
  },
  { additionalProperties: false },
);
export type MessageMetrics = Static<typeof MessageMetricsSchema>;

const ElementTypeGroupSchema = Type.Object(
  { elementType: Type.String(), metrics: MessageMetricsSchema },
  { additionalProperties: false },
);
const ElementNameGroupSchema = Type.Object(
  { elementName: Type.String(), elementType: Type.String(), metrics: MessageMetricsSchema },
  { additionalProperties: false },
);
const ErrorCountsSchema = Type.Object({ count: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false });
const ErrorGroupSchema = Type.Object(
  {
    error: Type.String({ description: '"No Error" for the messages that succeeded' }),
    elementTypes: Type.Array(Type.Object({ elementType: Type.String(), metrics: ErrorCountsSchema }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export const ClipElementSchema = Type.Union([
  Type.Object({ elementTypes: Type.Array(ElementTypeGroupSchema) }, { additionalProperties: false }),
  Type.Object({ elementNames: Type.Array(ElementNameGroupSchema) }, { additionalProperties: false }),
  Type.Object({ errors: Type.Array(ErrorGroupSchema) }, { additionalProperties: false }),
]);
export type ClipElement = Static<typeof ClipElementSchema>;

export const CollectionQuerySchema = Type.Object({
  percentile: Type.Optional(repeatable({ description: 'a percentile in (0, 100]; repeat for more (at most 10)' })),
  groupBy: Type.Optional(repeatable({ description: 'flattenedHierarchy (default) or containerType' })),
});

const CollectionMetricsSchema = Type.Object(
  {
    started: Type.Integer(),
    completed: Type.Integer(),
    failed: Type.Integer(),
    effectiveDuration: Type.Number({ description: 'sum of effective durations, ms' }),
    minEffectiveDuration: Type.Number(),
    maxEffectiveDuration: Type.Number(),
    averageEffectiveDuration: Type.Number(),
    effectiveDurationStandardOfDeviation: Type.Number(),
    percentiles: Type.Array(Type.Object({ percentile: Type.Number(), value: Type.Number() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type CollectionMetrics = Static<typeof CollectionMetricsSchema>;
const CollectionEntrySchema = Type.Object(
  {
    containerType: Type.String({ description: 'transaction or page' }),
    flattenedHierarchy: Type.Optional(Type.String({ description: 'composition/track/clip/collection (groupBy=flattenedHierarchy)' })),
    metrics: CollectionMetricsSchema,
  },
  { additionalProperties: false },
);
export const CollectionSchema = Type.Object({ collections: Type.Array(CollectionEntrySchema) }, { additionalProperties: false });
export type CollectionBody = Static<typeof CollectionSchema>;
