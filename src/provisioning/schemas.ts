import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { literals } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

// ---------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------

/** The kinds of provisioning resource whose lifecycle the control API reads and steers. */
export const RESOURCE_KINDS = ['grid', 'environment', 'rsdb', 'cloudServer'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
export const ResourceKindSchema = literals(RESOURCE_KINDS, { description: 'kind of provisioning resource' });

const StepSchema = Type.Object({ state: Type.String(), at: Type.Integer() }, { additionalProperties: false });

/** Where one resource is in its lifecycle, for the control API. */
export const ResourceLifecycleSchema = Type.Object(
  {
    kind: ResourceKindSchema,
    id: Type.Integer(),
    name: Type.String(),
    state: Type.String(),
    isFinal: Type.Boolean({ description: 'the state is final (settled, for cloud servers and RSDBs)' }),
    since: Type.Integer({ description: 'when the current state began' }),
    next: Type.Optional(StepSchema),
    settlesAt: Type.Optional(Type.Integer({ description: 'when the current schedule reaches its last step' })),
    nextStart: Type.Optional(
      Type.Object(
        {
          outcome: Type.String({ description: 'where the next start of this resource will end' }),
          once: Type.Boolean({
            description: 'true: chosen for the next start only (a scenario, the fixture’s nextStartOutcome or PUT .../next-start), used up by it; false: the resource’s startOutcome, which every start follows',
          }),
        },
        { additionalProperties: false, description: 'grids, environments and RSDBs: how their next start will end' },
      ),
    ),
    currentStart: Type.Optional(
      Type.Object(
        {
          outcome: Type.String({ description: 'how the start the resource is on ends: the start table (tables.<kind>.start) its schedule follows' }),
          startedAt: Type.Integer({ description: 'when that start began' }),
        },
        {
          additionalProperties: false,
          description:
            'grids, environments and RSDBs: the start whose schedule the resource follows, from that start on, its end state included, until a terminate, a cancel or an external termination changes the schedule; absent for a resource never started, and for a schedule no start planned',
        },
      ),
    ),
    skips: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "states of its kind's start tables this resource never takes (a grid without monitors: STARTING_MONITORS, the rows marked monitorsOnly); absent when it takes them all",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ResourceLifecycle = Static<typeof ResourceLifecycleSchema>;

export const CLOUD_TYPES = ['EC2', 'EC2_CHINA', 'AZURE', 'COMPUTE_ENGINE', 'RACKSPACE_OPENSTACK'] as const;
export const CloudTypeSchema = literals(CLOUD_TYPES);
export type CloudType = (typeof CLOUD_TYPES)[number];

export const GRID_STATES = [
  'LOADED', 'ALLOCATING', 'ALLOCATED', 'ALLOCATED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKING', 'CHECKED',
  'CHECKED_AND_TERMINATING', 'CHECKED_AND_DEPLOYING', 'CHECKED_WITH_FAILURES', 'STARTING_MONITORS', 'CANCELLING',
  'CANCELLED', 'TERMINATING', 'TERMINATED', 'TERMINATED_WITH_FAILURES',
] as const;
export type GridState = (typeof GRID_STATES)[number];
export const GridStateSchema = literals(GRID_STATES);
/** Section 3.1: the states marked final. */
export const FINAL_GRID_STATES: ReadonlySet<GridState> = new Set<GridState>([
  'LOADED', 'ALLOCATED_WITH_FAILURES', 'ALLOCATE_FAILED', 'CHECKED', 'CHECKED_WITH_FAILURES', 'CANCELLED',
  'TERMINATED', 'TERMINATED_WITH_FAILURES',
]);

/**
 * States in which terminating a grid or a test environment is a no-op answered 202, so that
 * a test's teardown never fails (the dashboard greys its Terminate button in them).
 */
export const NO_TEARDOWN_STATES = ['LOADED', 'TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'TERMINATING', 'CANCELLING'] as const satisfies ReadonlyArray<GridState & EnvironmentState>;

/**
 * The colour families of the states that are neither in progress nor ready: ended by a failure,
 * or terminated. The dashboard reads them from the server (GET /_emulator/ui/paths.json).
 */
export const STATE_FAMILIES = {
  failed: [
    'ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES', 'TERMINATED_WITH_FAILURES', 'ERROR_BUILD_MISMATCH',
    'PROCESS_FAILED', 'VOLUME_NOT_FORMATTED', 'VOLUME_NOT_AVAILABLE', 'EXTERNALLY_TERMINATED', 'FAILED',
  ],
  terminated: ['TERMINATED', 'CANCELLED'],
} as const;

export const GRID_START_OUTCOMES = [
  'CHECKED', 'ALLOCATE_FAILED', 'ALLOCATED_WITH_FAILURES', 'CHECKED_WITH_FAILURES', 'CHECKED_AND_DEPLOYING', 'CHECKED_AND_TERMINATING',
] as const;
export type GridStartOutcome = (typeof GRID_START_OUTCOMES)[number];
export const TERMINATE_OUTCOMES = ['TERMINATED', 'TERMINATED_WITH_FAILURES'] as const;
export type TerminateOutcome = (typeof TERMINATE_OUTCOMES)[number];

export const SERVER_STATES = ['PENDING', 'BUSY', 'RUNNING', 'SHUTTING_DOWN', 'TERMINATED', 'FAILED', 'BIDDING'] as const;
export type ServerState = (typeof SERVER_STATES)[number];
export const ServerStateSchema = literals(SERVER_STATES);

export const SERVER_ROLES = ['LOAD_GENERATOR', 'RESULTS', 'COLLECTOR'] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

export const RSDB_STATES = ['LOADED', 'ALLOCATING_DATABASE', 'ALLOCATED_DATABASE', 'TERMINATING', 'TERMINATED'] as const;
export type RsdbState = (typeof RSDB_STATES)[number];
export const RsdbStateSchema = literals(RSDB_STATES);

export const ENVIRONMENT_STATES = [
  'ERROR_BUILD_MISMATCH', 'TERMINATED_WITH_FAILURES', 'CANCELLING', 'CANCELLED', 'LOADED', 'ALLOCATING_DATABASE',
  'ALLOCATED_DATABASE', 'CHECKED_DATABASE', 'ALLOCATING_MAIN', 'ALLOCATED_MAIN', 'CHECKED_MAIN', 'RUNNING',
  'TERMINATED', 'TERMINATING', 'PROCESS_FAILED', 'VOLUME_NOT_FORMATTED', 'VOLUME_NOT_AVAILABLE', 'EXTERNALLY_TERMINATED',
] as const;
export type EnvironmentState = (typeof ENVIRONMENT_STATES)[number];
export const EnvironmentStateSchema = literals(ENVIRONMENT_STATES);
/** Section 3.4: the states marked final. */
export const FINAL_ENVIRONMENT_STATES: ReadonlySet<EnvironmentState> = new Set<EnvironmentState>([
  'ERROR_BUILD_MISMATCH', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'LOADED', 'RUNNING', 'TERMINATED',
  'PROCESS_FAILED', 'VOLUME_NOT_FORMATTED', 'EXTERNALLY_TERMINATED',
]);
export const ENVIRONMENT_START_OUTCOMES = [
  'RUNNING', 'ERROR_BUILD_MISMATCH', 'VOLUME_NOT_FORMATTED', 'VOLUME_NOT_AVAILABLE', 'PROCESS_FAILED', 'EXTERNALLY_TERMINATED',
] as const;
export type EnvironmentStartOutcome = (typeof ENVIRONMENT_START_OUTCOMES)[number];
/** An RSDB has a single start outcome. */
export const RSDB_START_OUTCOMES = ['ALLOCATED_DATABASE'] as const;

/** The kinds of resource a start can be steered for (next-start, the fixtures' scenarios). */
export const STARTABLE_KINDS = ['grid', 'environment', 'rsdb'] as const;
export type StartableKind = (typeof STARTABLE_KINDS)[number];

/** Every start outcome of each startable kind; the first is the success, and the default. */
export const START_OUTCOMES: { readonly [K in StartableKind]: readonly string[] } = {
  grid: GRID_START_OUTCOMES,
  environment: ENVIRONMENT_START_OUTCOMES,
  rsdb: RSDB_START_OUTCOMES,
};

/**
 * The outcome of a resource's next start: PUT /_emulator/lifecycles/<kind>/<id>/next-start's
 * body, and a fixture scenario's `nextStart`, so that one can be copied into the other.
 */
export const NextStartBodySchema = Type.Object(
  {
    outcome: Type.String({
      description: STARTABLE_KINDS.map((kind) => {
        const outcomes = START_OUTCOMES[kind];
        return `${kind}: ${outcomes.map((o, i) => (i === 0 && outcomes.length > 1 ? `${o} (success)` : o)).join(', ')}`;
      }).join('; '),
    }),
  },
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Runtime records shared by the fixtures (seed) and the exported state
// ---------------------------------------------------------------------------------------

/** A scheduled state: the resource is in `state` from `at` (epoch ms) until the next step. */
const stepSchema = <T extends TSchema>(state: T) =>
  Type.Object({ state, at: emulatedTime(Type.Integer()) }, { additionalProperties: false });

export const JournalEntrySchema = Type.Object(
  { text: Type.String(), type: Type.String({ description: 'INFO, or ERROR for failures' }) },
  { additionalProperties: false },
);
const TimedJournalEntrySchema = Type.Object(
  { at: emulatedTime(Type.Integer()), text: Type.String(), type: Type.String() },
  { additionalProperties: false },
);

const ID = Type.Integer({ minimum: 1 });
const DURATION = Type.Integer({ minimum: 0, description: 'milliseconds at TIME_SCALE=1' });

export const LocationSchema = Type.Object(
  { id: Type.Integer({ minimum: 0 }), name: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

/** A server a grid defines; each start creates `count` cloud servers from it. */
export const ServerTemplateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'e.g. "amazon - EC2 Test Server (Large)"' }),
    serverClassName: Type.String({ minLength: 1, description: 'e.g. "EC2 Test Server (Large)"' }),
    role: literals(SERVER_ROLES, { default: 'LOAD_GENERATOR' }),
    count: Type.Integer({ minimum: 1, maximum: 1000, default: 1 }),
    cloudType: CloudTypeSchema,
    launchCPA: Type.String({ minLength: 1, description: 'cloud provider account, e.g. "SOASTA EC2"' }),
    location: LocationSchema,
    region: Type.String({ minLength: 1 }),
    zone: Type.String({ minLength: 1 }),
    securityGroup: Type.String({ minLength: 1 }),
    instanceSize: Type.Optional(Type.String({ minLength: 1, description: 'default: serverClassName' })),
    usingReservedAddress: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
export type ServerTemplate = Static<typeof ServerTemplateSchema>;

export const GridDurationsSchema = Type.Object(
  {
    allocating: Type.Optional(DURATION),
    allocated: Type.Optional(DURATION),
    startingMonitors: Type.Optional(DURATION),
    checking: Type.Optional(DURATION),
    pendingServers: Type.Optional(DURATION),
    terminating: Type.Optional(DURATION),
    cancelling: Type.Optional(DURATION),
    serverShutdown: Type.Optional(DURATION),
  },
  { additionalProperties: false, default: {} },
);
export type GridDurations = Required<Static<typeof GridDurationsSchema>>;

export const GridDeploymentSchema = Type.Object(
  {
    instanceId: Type.String(),
    startedAt: emulatedTime(Type.Integer()),
    startedBy: Type.String(),
    steps: Type.Array(stepSchema(GridStateSchema), { minItems: 1 }),
    journal: Type.Array(TimedJournalEntrySchema),
    cloudServerIds: Type.Array(ID),
  },
  { additionalProperties: false },
);
export type GridDeployment = Static<typeof GridDeploymentSchema>;

export const GridSeedSchema = Type.Object(
  {
    id: ID,
    name: Type.String({ minLength: 1 }),
    monitors: Type.Boolean({ default: false, description: 'the grid has monitors: starts pass STARTING_MONITORS' }),
    servers: Type.Array(ServerTemplateSchema, { minItems: 1 }),
    startOutcome: literals(GRID_START_OUTCOMES, { default: 'CHECKED', description: 'where every start of this grid ends' }),
    terminateOutcome: literals(TERMINATE_OUTCOMES, { default: 'TERMINATED' }),
    failingServers: Type.Integer({ minimum: 1, default: 1, description: 'servers that fail (or stay pending) in the *_WITH_FAILURES and CHECKED_AND_* outcomes' }),
    durations: GridDurationsSchema,
    startedAgoMs: Type.Optional(Type.Integer({ minimum: 0, description: 'start this grid when the seed loads, as if it had been started this long before' })),
    nextStartOutcome: Type.Optional(literals(GRID_START_OUTCOMES, { description: 'outcome of the next start only (set by the control API)' })),
    deployment: Type.Optional(GridDeploymentSchema),
  },
  { additionalProperties: false },
);
export type GridSeed = Static<typeof GridSeedSchema>;

export const CloudServerRecordSchema = Type.Object(
  {
    id: ID,
    gridId: ID,
    name: Type.String(),
    serverClassName: Type.String(),
    role: literals(SERVER_ROLES),
    cloudType: CloudTypeSchema,
    launchCPA: Type.String(),
    locationID: Type.Integer(),
    locationName: Type.String(),
    region: Type.String(),
    zone: Type.String(),
    securityGroup: Type.String(),
    instanceSize: Type.String(),
    usingReservedAddress: Type.Boolean(),
    vendorID: Type.String(),
    privateHostName: Type.String(),
    publicHostName: Type.String(),
    createdAt: emulatedTime(Type.Integer()),
    checkedAt: Type.Optional(emulatedTime(Type.Integer({ description: 'when this server passed its grid health check' }))),
    steps: Type.Array(stepSchema(ServerStateSchema), { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type CloudServerRecord = Static<typeof CloudServerRecordSchema>;

const HostSchema = Type.Object(
  { vendorID: Type.String(), privateHostName: Type.String(), publicHostName: Type.String() },
  { additionalProperties: false },
);

export const RsdbSeedSchema = Type.Object(
  {
    id: ID,
    name: Type.String({ minLength: 1 }),
    cloudType: CloudTypeSchema,
    instanceSize: Type.String({ minLength: 1, description: 'e.g. "EC2 Results Database (Large)"' }),
    launchCPAName: Type.String({ minLength: 1 }),
    region: Type.String({ minLength: 1 }),
    zone: Type.String({ minLength: 1 }),
    durations: Type.Object(
      { allocating: Type.Optional(DURATION), terminating: Type.Optional(DURATION) },
      { additionalProperties: false, default: {} },
    ),
    startedAgoMs: Type.Optional(Type.Integer({ minimum: 0 })),
    launch: Type.Optional(
      Type.Object(
        { steps: Type.Array(stepSchema(RsdbStateSchema), { minItems: 1 }), host: HostSchema },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type RsdbSeed = Static<typeof RsdbSeedSchema>;

const InstanceTemplateSchema = Type.Object(
  { cloudType: CloudTypeSchema, instanceSize: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const EnvironmentDurationsSchema = Type.Object(
  {
    allocatingDatabase: Type.Optional(DURATION),
    allocatedDatabase: Type.Optional(DURATION),
    checkedDatabase: Type.Optional(DURATION),
    volumeNotAvailable: Type.Optional(DURATION),
    allocatingMain: Type.Optional(DURATION),
    allocatedMain: Type.Optional(DURATION),
    checkedMain: Type.Optional(DURATION),
    running: Type.Optional(Type.Integer({ minimum: 0, description: 'time RUNNING before EXTERNALLY_TERMINATED (that outcome only)' })),
    terminating: Type.Optional(DURATION),
    cancelling: Type.Optional(DURATION),
  },
  { additionalProperties: false, default: {} },
);
export type EnvironmentDurations = Required<Static<typeof EnvironmentDurationsSchema>>;

export const EnvironmentSeedSchema = Type.Object(
  {
    id: ID,
    name: Type.String({ minLength: 1 }),
    databaseInstance: InstanceTemplateSchema,
    mainInstance: InstanceTemplateSchema,
    startOutcome: literals(ENVIRONMENT_START_OUTCOMES, { default: 'RUNNING' }),
    terminateOutcome: literals(TERMINATE_OUTCOMES, { default: 'TERMINATED' }),
    durations: EnvironmentDurationsSchema,
    lastLaunchedAt: Type.Optional(emulatedTime(Type.Integer())),
    lastLaunchedBy: Type.Optional(Type.String()),
    lastStoppedAt: Type.Optional(emulatedTime(Type.Integer())),
    startedAgoMs: Type.Optional(Type.Integer({ minimum: 0 })),
    nextStartOutcome: Type.Optional(literals(ENVIRONMENT_START_OUTCOMES)),
    launch: Type.Optional(
      Type.Object(
        {
          steps: Type.Array(stepSchema(EnvironmentStateSchema), { minItems: 1 }),
          database: HostSchema,
          main: HostSchema,
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type EnvironmentSeed = Static<typeof EnvironmentSeedSchema>;

// ---------------------------------------------------------------------------------------
// Response bodies (section 2)
// ---------------------------------------------------------------------------------------

export const GridServerSchema = Type.Object(
  {
    cloudType: Type.String(),
    id: Type.Integer(),
    launchCPA: Type.String(),
    locationID: Type.Integer(),
    name: Type.String(),
    publicHostname: Type.Optional(Type.String({ description: 'absent while the server has no public host' })),
    securityGroup: Type.String(),
    serverClassName: Type.String(),
    usingReservedAddress: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const LocationStatisticsSchema = Type.Object(
  {
    locationID: Type.Integer(),
    locationName: Type.String(),
    totalServersAllocated: Type.Integer(),
    totalTimedOutServers: Type.Integer(),
    maxBusyTime: Type.Integer(),
    minBusyTime: Type.Integer(),
    maxPendingTime: Type.Integer(),
    minPendingTime: Type.Integer(),
    averageAllocationTime: Type.Optional(Type.Integer({ description: 'single grid read only' })),
    averagePendingTime: Type.Optional(Type.Integer({ description: 'single grid read only' })),
  },
  { additionalProperties: false },
);

export const StatisticsSchema = Type.Object(
  {
    locations: Type.Array(LocationStatisticsSchema),
    totalAllocationTime: Type.Integer(),
    totalCheckServerTime: Type.Integer(),
    totalDeploymentTime: Type.Integer(),
  },
  { additionalProperties: false },
);

export const GridSchema = Type.Object(
  {
    cloudServers: Type.Array(GridServerSchema),
    collectorInstances: Type.Integer(),
    instanceId: Type.Optional(Type.String({ description: 'absent until the grid is first started' })),
    isFinal: Type.Boolean(),
    journalEntries: Type.Array(JournalEntrySchema),
    maestroInstances: Type.Integer(),
    resultsServiceInstances: Type.Integer(),
    serverCompleteBeans: Type.Optional(Type.Array(Type.Unknown(), { description: 'start response only, empty' })),
    state: GridStateSchema,
    statistics: StatisticsSchema,
    totalCheckedCollectorServers: Type.Integer(),
    totalCheckedLoadGeneratorServers: Type.Integer(),
    totalCheckedResultsServers: Type.Integer(),
  },
  { additionalProperties: false, $id: 'Grid' },
);
export type Grid = Static<typeof GridSchema>;

export const CloudServerListItemSchema = Type.Object(
  {
    cloudType: Type.String(),
    id: Type.Integer(),
    instanceSize: Type.String(),
    launchCPAName: Type.String(),
    region: Type.String(),
    state: ServerStateSchema,
    vendorID: Type.String(),
    zone: Type.String(),
  },
  { additionalProperties: false },
);
export type CloudServerListItem = Static<typeof CloudServerListItemSchema>;

export const CloudServerSchema = Type.Object(
  {
    ...CloudServerListItemSchema.properties,
    privateHostName: Type.String(),
    publicHostName: Type.String(),
  },
  { additionalProperties: false, $id: 'CloudServer' },
);
export type CloudServer = Static<typeof CloudServerSchema>;

export const RsdbSchema = Type.Object(
  {
    cloudServer: Type.Object(
      {
        cloudType: Type.String(),
        instanceSize: Type.String(),
        launchCPAName: Type.String(),
        privateHostName: Type.String(),
        publicHostName: Type.String(),
        region: Type.String(),
        state: ServerStateSchema,
        vendorID: Type.String(),
        zone: Type.String(),
      },
      { additionalProperties: false },
    ),
    state: RsdbStateSchema,
  },
  { additionalProperties: false, $id: 'Rsdb' },
);
export type Rsdb = Static<typeof RsdbSchema>;

export const EnvironmentInstanceSchema = Type.Object(
  {
    cloudType: Type.String(),
    instanceSize: Type.String(),
    privateHostName: Type.String(),
    publicHostName: Type.String(),
    vendorID: Type.String(),
  },
  { additionalProperties: false },
);

export const EnvironmentSchema = Type.Object(
  {
    databaseInstance: EnvironmentInstanceSchema,
    mainInstance: Type.Optional(EnvironmentInstanceSchema),
    lastLaunched: Type.Optional(Type.String({ description: 'e.g. "Sun Nov 22 09:15:02 UTC 2026"; absent if never launched' })),
    lastLaunchedBy: Type.Optional(Type.String()),
    lastStopped: Type.Optional(Type.String({ description: 'absent if never stopped' })),
    state: EnvironmentStateSchema,
    url: Type.Optional(Type.String({ description: 'read only, once the main server exists' })),
  },
  { additionalProperties: false, $id: 'Environment' },
);
export type Environment = Static<typeof EnvironmentSchema>;

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

export const IdParamsSchema = Type.Object({ id: Type.String({ description: 'integer id' }) });

export const ActionBodySchema = Type.Object(
  { action: Type.String({ description: 'start, terminate or restart, as the resource allows' }) },
  { additionalProperties: false, description: 'a JSON object with one required string key action (and nothing else)' },
);

/** This interface's sections of the state (world/state.ts composes every interface's). */
export const ProvisioningSectionsSchema = {
  grids: Type.Array(GridSeedSchema, { default: [] }),
  cloudServers: Type.Array(CloudServerRecordSchema, { default: [], description: 'created by grid starts; rarely written by hand' }),
  rsdbs: Type.Array(RsdbSeedSchema, { default: [] }),
  environments: Type.Array(EnvironmentSeedSchema, { default: [] }),
};
