/**
 * Response bodies worked out from the stored records at a given time. Reading never changes
 * a record: the state at `now` follows from the schedules alone.
 */
import { javaDateString } from '../core/clock.js';
import { stateAt, visibleAt, type Step } from '../core/lifecycle.js';
import {
  FINAL_GRID_STATES,
  type CloudServer,
  type CloudServerListItem,
  type CloudServerRecord,
  type Environment,
  type EnvironmentSeed,
  type EnvironmentState,
  type Grid,
  type GridSeed,
  type GridState,
  type Rsdb,
  type RsdbSeed,
  type RsdbState,
  type ServerRole,
  type ServerState,
} from './schemas.js';

/** read: GET /grid/<id>; list: an element of GET /grid/; start/action: an action's answer. */
export type GridForm = 'read' | 'list' | 'start' | 'action';
/** read: GET /environment/<id>; start/action: an action's answer. */
export type EnvironmentForm = 'read' | 'start' | 'action';

/** Whether the schedule entered `state` at or before `now`. */
export function reached<S extends string>(steps: readonly Step<S>[], state: S, now: number): boolean {
  return steps.some((s) => s.state === state && s.at <= now);
}

/** Total time the schedule spent in any of `states` up to `now`. */
export function timeIn<S extends string>(steps: readonly Step<S>[], states: ReadonlySet<S>, now: number): number {
  let total = 0;
  for (let i = 0; i < steps.length && steps[i].at <= now; i++) {
    if (!states.has(steps[i].state)) continue;
    const next = steps[i + 1];
    total += (next && next.at <= now ? next.at : now) - steps[i].at;
  }
  return total;
}

export const gridState = (grid: GridSeed, now: number): GridState =>
  grid.deployment ? stateAt(grid.deployment.steps, now) : 'LOADED';
export const serverState = (server: CloudServerRecord, now: number): ServerState => stateAt(server.steps, now);
export const rsdbState = (rsdb: RsdbSeed, now: number): RsdbState => (rsdb.launch ? stateAt(rsdb.launch.steps, now) : 'LOADED');
export const environmentState = (env: EnvironmentSeed, now: number): EnvironmentState =>
  env.launch ? stateAt(env.launch.steps, now) : 'LOADED';

const PENDING = new Set<ServerState>(['PENDING']);
const BUSY = new Set<ServerState>(['RUNNING', 'BUSY']);
const ROLE_COUNTERS: Record<ServerRole, { instances: keyof Grid; checked: keyof Grid }> = {
  LOAD_GENERATOR: { instances: 'maestroInstances', checked: 'totalCheckedLoadGeneratorServers' },
  RESULTS: { instances: 'resultsServiceInstances', checked: 'totalCheckedResultsServers' },
  COLLECTOR: { instances: 'collectorInstances', checked: 'totalCheckedCollectorServers' },
};

/** A server got its public host once it first reached RUNNING; before that it has none. */
const hasPublicHost = (server: CloudServerRecord, now: number) => reached(server.steps, 'RUNNING', now);

function locationStatistics(servers: readonly CloudServerRecord[], now: number, withAverages: boolean): Grid['statistics']['locations'] {
  const byLocation = new Map<number, CloudServerRecord[]>();
  for (const server of servers) byLocation.set(server.locationID, [...(byLocation.get(server.locationID) ?? []), server]);
  return [...byLocation.entries()]
    .sort(([a], [b]) => a - b)
    .map(([locationID, group]) => {
      const pending = group.map((s) => timeIn(s.steps, PENDING, now));
      const busy = group.map((s) => timeIn(s.steps, BUSY, now));
      const allocationTimes = group.flatMap((s) => {
        const running = s.steps.find((step) => step.state === 'RUNNING' && step.at <= now);
        return running ? [running.at - s.createdAt] : [];
      });
      const timedOut = group.filter((s) => s.steps.find((step) => step.state !== 'PENDING' && step.at <= now)?.state === 'FAILED');
      const average = (values: number[]) => (values.length ? Math.round(values.reduce((a, b) => a + b, 0) / values.length) : 0);
      return {
        locationID,
        locationName: group[0].locationName,
        totalServersAllocated: allocationTimes.length,
        totalTimedOutServers: timedOut.length,
        maxBusyTime: Math.max(...busy),
        minBusyTime: Math.min(...busy),
        maxPendingTime: Math.max(...pending),
        minPendingTime: Math.min(...pending),
        ...(withAverages ? { averageAllocationTime: average(allocationTimes), averagePendingTime: average(pending) } : {}),
      };
    });
}

/**
 * A grid as the interface shows it. `servers` are the cloud servers of its current
 * deployment, in the order the deployment created them.
 */
export function gridView(grid: GridSeed, servers: readonly CloudServerRecord[], now: number, form: GridForm): Grid {
  const deployment = grid.deployment;
  const state = gridState(grid, now);
  const counters = {
    collectorInstances: 0,
    maestroInstances: 0,
    resultsServiceInstances: 0,
    totalCheckedCollectorServers: 0,
    totalCheckedLoadGeneratorServers: 0,
    totalCheckedResultsServers: 0,
  } satisfies Partial<Record<keyof Grid, number>>;
  for (const server of servers) {
    const keys = ROLE_COUNTERS[server.role];
    if (serverState(server, now) === 'RUNNING') counters[keys.instances as keyof typeof counters]++;
    if (server.checkedAt !== undefined && server.checkedAt <= now) counters[keys.checked as keyof typeof counters]++;
  }
  const steps = deployment?.steps ?? [];
  const finished = steps.find((s) => s.at <= now && FINAL_GRID_STATES.has(s.state));
  return {
    cloudServers: servers.map((s) => ({
      cloudType: s.cloudType,
      id: s.id,
      launchCPA: s.launchCPA,
      locationID: s.locationID,
      name: s.name,
      ...(hasPublicHost(s, now) ? { publicHostname: s.publicHostName } : {}),
      securityGroup: s.securityGroup,
      serverClassName: s.serverClassName,
      usingReservedAddress: s.usingReservedAddress,
    })),
    ...counters,
    ...(deployment ? { instanceId: deployment.instanceId } : {}),
    isFinal: FINAL_GRID_STATES.has(state),
    journalEntries: visibleAt(deployment?.journal ?? [], now).map(({ text, type }) => ({ text, type })),
    ...(form === 'start' ? { serverCompleteBeans: [] } : {}),
    state,
    statistics: {
      locations: locationStatistics(servers, now, form === 'read'),
      totalAllocationTime: timeIn(steps, new Set<GridState>(['ALLOCATING']), now),
      totalCheckServerTime: timeIn(steps, new Set<GridState>(['CHECKING']), now),
      totalDeploymentTime: deployment ? (finished?.at ?? now) - deployment.startedAt : 0,
    },
  };
}

export function cloudServerListItem(server: CloudServerRecord, now: number): CloudServerListItem {
  return {
    cloudType: server.cloudType,
    id: server.id,
    instanceSize: server.instanceSize,
    launchCPAName: server.launchCPA,
    region: server.region,
    state: serverState(server, now),
    vendorID: server.vendorID,
    zone: server.zone,
  };
}

/** The single read; the private host exists from creation, the public one from RUNNING. */
export function cloudServerView(server: CloudServerRecord, now: number): CloudServer {
  return {
    ...cloudServerListItem(server, now),
    privateHostName: server.privateHostName,
    publicHostName: hasPublicHost(server, now) ? server.publicHostName : '',
  };
}

/** The RSDB's own server follows the RSDB: PENDING while allocating, RUNNING until terminated. */
const RSDB_SERVER_STATE: Record<RsdbState, ServerState> = {
  LOADED: 'TERMINATED',
  ALLOCATING_DATABASE: 'PENDING',
  ALLOCATED_DATABASE: 'RUNNING',
  TERMINATING: 'RUNNING',
  TERMINATED: 'TERMINATED',
};

export function rsdbView(rsdb: RsdbSeed, now: number): Rsdb {
  const state = rsdbState(rsdb, now);
  const host = rsdb.launch?.host;
  const serverState = RSDB_SERVER_STATE[state];
  return {
    cloudServer: {
      cloudType: rsdb.cloudType,
      instanceSize: rsdb.instanceSize,
      launchCPAName: rsdb.launchCPAName,
      privateHostName: host?.privateHostName ?? '',
      publicHostName: host && serverState === 'RUNNING' ? host.publicHostName : '',
      region: rsdb.region,
      state: serverState,
      vendorID: host?.vendorID ?? '',
      zone: rsdb.zone,
    },
    state,
  };
}

/** States in which the environment's servers no longer exist. */
const ENVIRONMENT_GONE = new Set<EnvironmentState>(['LOADED', 'TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'EXTERNALLY_TERMINATED']);

export function environmentView(env: EnvironmentSeed, now: number, form: EnvironmentForm): Environment {
  const state = environmentState(env, now);
  const launch = env.launch;
  const live = launch !== undefined && !ENVIRONMENT_GONE.has(state);
  // An instance has an id once its allocation began, and host names once it is allocated.
  const instance = (
    template: EnvironmentSeed['databaseInstance'],
    host: { vendorID: string; privateHostName: string; publicHostName: string } | undefined,
    allocating: EnvironmentState,
    allocated: EnvironmentState,
  ) => {
    const begun = live && host !== undefined && reached(launch.steps, allocating, now);
    const done = begun && reached(launch.steps, allocated, now);
    return {
      cloudType: template.cloudType,
      instanceSize: template.instanceSize,
      privateHostName: done ? host.privateHostName : '',
      publicHostName: done ? host.publicHostName : '',
      vendorID: begun ? host.vendorID : '',
    };
  };
  const mainInstance = instance(env.mainInstance, launch?.main, 'ALLOCATING_MAIN', 'ALLOCATED_MAIN');
  return {
    databaseInstance: instance(env.databaseInstance, launch?.database, 'ALLOCATING_DATABASE', 'ALLOCATED_DATABASE'),
    ...(form === 'start' ? {} : { mainInstance }),
    ...(env.lastLaunchedAt !== undefined ? { lastLaunched: javaDateString(env.lastLaunchedAt) } : {}),
    ...(env.lastLaunchedBy !== undefined ? { lastLaunchedBy: env.lastLaunchedBy } : {}),
    ...(env.lastStoppedAt !== undefined ? { lastStopped: javaDateString(env.lastStoppedAt) } : {}),
    state,
    ...(form === 'read' && mainInstance.publicHostName ? { url: `http://${mainInstance.publicHostName}/concerto` } : {}),
  };
}
