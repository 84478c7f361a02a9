/**
 * Response bodies worked out from the stored records at a given time. Reading never changes
 * a record: the state at `now` follows from the schedules alone.
 */
import { javaDateString } from '../core/clock.js';
import { stateAt, type Step } from '../core/lifecycle.js';
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

/**
 * Total time the schedule spent in `state` (or in `orIn`) up to `now`. Two states at most:
 * plain comparisons, where a set lookup per step was a measurable part of a grid read.
 */
export function timeIn<S extends string>(steps: readonly Step<S>[], now: number, state: S, orIn?: S): number {
  let total = 0;
  for (let i = 0; i < steps.length && steps[i].at <= now; i++) {
    const at = steps[i].state;
    if (at !== state && (orIn === undefined || at !== orIn)) continue;
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

/** A server got its public host once it first reached RUNNING; before that it has none. */
const hasPublicHost = (server: CloudServerRecord, now: number) => reached(server.steps, 'RUNNING', now);

type LocationStatistics = Grid['statistics']['locations'][number];

/** One line per location of the servers, by location id. */
function locationStatistics(servers: readonly CloudServerRecord[], now: number, withAverages: boolean): LocationStatistics[] {
  // A grid has a handful of servers in one or a few locations: a scan beats a Map.
  const ids: number[] = [];
  for (const server of servers) if (!ids.includes(server.locationID)) ids.push(server.locationID);
  if (ids.length > 1) ids.sort((a, b) => a - b);
  const lines: LocationStatistics[] = [];
  for (const id of ids) lines.push(locationSummary(id, servers, now, withAverages));
  return lines;
}

/** The line of one location, from the servers there (of `servers`, at least one). */
function locationSummary(locationID: number, servers: readonly CloudServerRecord[], now: number, withAverages: boolean): LocationStatistics {
  let count = 0;
  let locationName = '';
  let allocated = 0;
  let allocationTotal = 0;
  let timedOut = 0;
  let pendingTotal = 0;
  let maxBusy = -Infinity;
  let minBusy = Infinity;
  let maxPending = -Infinity;
  let minPending = Infinity;
  for (const server of servers) {
    if (server.locationID !== locationID) continue;
    if (count++ === 0) locationName = server.locationName;
    const pending = timeIn<ServerState>(server.steps, now, 'PENDING');
    const busy = timeIn<ServerState>(server.steps, now, 'RUNNING', 'BUSY');
    pendingTotal += pending;
    maxPending = Math.max(maxPending, pending);
    minPending = Math.min(minPending, pending);
    maxBusy = Math.max(maxBusy, busy);
    minBusy = Math.min(minBusy, busy);
    const runningAt = firstAt(server.steps, 'RUNNING', now);
    if (runningAt !== undefined) {
      allocated++;
      allocationTotal += runningAt - server.createdAt;
    }
    if (outcomeAt(server.steps, now) === 'FAILED') timedOut++;
  }
  const summary: LocationStatistics = {
    locationID,
    locationName,
    totalServersAllocated: allocated,
    totalTimedOutServers: timedOut,
    maxBusyTime: maxBusy,
    minBusyTime: minBusy,
    maxPendingTime: maxPending,
    minPendingTime: minPending,
  };
  if (withAverages) {
    summary.averageAllocationTime = allocated ? Math.round(allocationTotal / allocated) : 0;
    summary.averagePendingTime = Math.round(pendingTotal / count);
  }
  return summary;
}

/** When the schedule first entered `state`, if it has by `now`. */
function firstAt(steps: readonly Step<ServerState>[], state: ServerState, now: number): number | undefined {
  for (const step of steps) if (step.state === state && step.at <= now) return step.at;
  return undefined;
}

/** The first state after PENDING the schedule has reached by `now`, if any. */
function outcomeAt(steps: readonly Step<ServerState>[], now: number): ServerState | undefined {
  for (const step of steps) if (step.state !== 'PENDING' && step.at <= now) return step.state;
  return undefined;
}

/**
 * A grid as the interface shows it. `servers` are the cloud servers of its current
 * deployment, in the order the deployment created them.
 *
 * Every object here is built with its keys in the order the schema serializer writes them
 * (the schema's required keys in schema order, then its optional ones): the reads answer
 * them with JSON.stringify (see provisioning/routes.ts), and the bytes must be the same.
 */
export function gridView(grid: GridSeed, servers: readonly CloudServerRecord[], now: number, form: GridForm): Grid {
  const deployment = grid.deployment;
  const state = gridState(grid, now);
  let runningCollectors = 0;
  let runningLoadGenerators = 0;
  let runningResults = 0;
  let checkedCollectors = 0;
  let checkedLoadGenerators = 0;
  let checkedResults = 0;
  const cloudServers: Grid['cloudServers'] = [];
  for (const server of servers) {
    const running = serverState(server, now) === 'RUNNING';
    const checked = server.checkedAt !== undefined && server.checkedAt <= now;
    if (server.role === 'LOAD_GENERATOR') {
      if (running) runningLoadGenerators++;
      if (checked) checkedLoadGenerators++;
    } else if (server.role === 'RESULTS') {
      if (running) runningResults++;
      if (checked) checkedResults++;
    } else {
      if (running) runningCollectors++;
      if (checked) checkedCollectors++;
    }
    const entry: Grid['cloudServers'][number] = {
      cloudType: server.cloudType,
      id: server.id,
      launchCPA: server.launchCPA,
      locationID: server.locationID,
      name: server.name,
      securityGroup: server.securityGroup,
      serverClassName: server.serverClassName,
      usingReservedAddress: server.usingReservedAddress,
    };
    if (hasPublicHost(server, now)) entry.publicHostname = server.publicHostName;
    cloudServers.push(entry);
  }
  const journalEntries: Grid['journalEntries'] = [];
  for (const line of deployment?.journal ?? []) if (line.at <= now) journalEntries.push({ text: line.text, type: line.type });
  const steps = deployment?.steps ?? [];
  const finished = steps.find((s) => s.at <= now && FINAL_GRID_STATES.has(s.state));
  const view: Grid = {
    cloudServers,
    collectorInstances: runningCollectors,
    isFinal: FINAL_GRID_STATES.has(state),
    journalEntries,
    maestroInstances: runningLoadGenerators,
    resultsServiceInstances: runningResults,
    state,
    statistics: {
      locations: locationStatistics(servers, now, form === 'read'),
      totalAllocationTime: timeIn<GridState>(steps, now, 'ALLOCATING'),
      totalCheckServerTime: timeIn<GridState>(steps, now, 'CHECKING'),
      totalDeploymentTime: deployment ? (finished?.at ?? now) - deployment.startedAt : 0,
    },
    totalCheckedCollectorServers: checkedCollectors,
    totalCheckedLoadGeneratorServers: checkedLoadGenerators,
    totalCheckedResultsServers: checkedResults,
  };
  if (deployment) view.instanceId = deployment.instanceId;
  if (form === 'start') view.serverCompleteBeans = [];
  return view;
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
