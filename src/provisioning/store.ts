import type { Clock } from '../core/clock.js';
import { badRequest, notFound } from '../http/errors.js';
import { planFrom, positionAt, reschedule, visibleAt, type Step } from '../core/lifecycle.js';
import type { State } from '../world/state.js';
import { hostFor } from './hosts.js';
import {
  DEFAULT_ENVIRONMENT_DURATIONS,
  DEFAULT_GRID_DURATIONS,
  DEFAULT_RSDB_DURATIONS,
  ENVIRONMENT_CANCEL_TABLE,
  ENVIRONMENT_START_TABLES,
  ENVIRONMENT_TERMINATE_TABLES,
  LIFECYCLE_TABLES,
  RSDB_TABLES,
  SERVER_TABLES,
  planGridStart,
  planGridStop,
  type JournalLine,
} from './lifecycles.js';
import {
  ENVIRONMENT_START_OUTCOMES,
  FINAL_ENVIRONMENT_STATES,
  FINAL_GRID_STATES,
  GRID_START_OUTCOMES,
  type CloudServer,
  type CloudServerListItem,
  type CloudServerRecord,
  type Environment,
  type EnvironmentDurations,
  type EnvironmentSeed,
  type EnvironmentStartOutcome,
  type EnvironmentState,
  type Grid,
  type GridDurations,
  type GridSeed,
  type GridStartOutcome,
  type GridState,
  type Rsdb,
  type RsdbSeed,
  type RsdbState,
  type ServerState,
} from './schemas.js';
import {
  cloudServerListItem,
  cloudServerView,
  environmentState,
  environmentView,
  gridState,
  gridView,
  rsdbState,
  rsdbView,
  serverState,
  type GridForm,
} from './views.js';

export type ProvisioningSections = Pick<State, 'grids' | 'cloudServers' | 'rsdbs' | 'environments'>;

/** Cloud server ids continue from the highest one known; this is the first when none is. */
export const FIRST_CLOUD_SERVER_ID = 58201;
/** The fixed host part of a grid instanceId, as in the real service's identifiers. */
const INSTANCE_HOST = '15f3f428f1a7adc5';
/** Who "started" a resource that a fixture starts at load time (`startedAgoMs`). */
export const SEED_USER = 'system';
/** Test environment instances have no region of their own; their host names use this one. */
export const ENVIRONMENT_REGION = 'us-east-1';

export type ResourceKind = 'grid' | 'cloudServer' | 'rsdb' | 'environment';

/** Where one resource is in its lifecycle, for the control API. */
export interface ResourceLifecycle {
  kind: ResourceKind;
  id: number;
  name: string;
  state: string;
  isFinal: boolean;
  /** When the current state began (the load time for a never-started resource). */
  since: number;
  next?: Step;
  /** When the current schedule reaches its last step. */
  settlesAt?: number;
}

// Terminating these is a no-op answered 202, so that test teardown never fails.
const GRID_NO_TEARDOWN = new Set<GridState>(['LOADED', 'TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'TERMINATING', 'CANCELLING']);
const ENVIRONMENT_NO_TEARDOWN = new Set<EnvironmentState>([
  'LOADED', 'TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'TERMINATING', 'CANCELLING',
]);
const SERVER_DOWN = new Set<ServerState>(['SHUTTING_DOWN', 'TERMINATED']);
const SERVER_RESTARTABLE = new Set<ServerState>(['RUNNING', 'BUSY', 'FAILED']);
/** Cloud servers and RSDBs have no "final" column in the spec: these are their resting states. */
const SERVER_SETTLED = new Set<ServerState>(['RUNNING', 'BUSY', 'FAILED', 'TERMINATED']);
const RSDB_SETTLED = new Set<RsdbState>(['LOADED', 'ALLOCATED_DATABASE', 'TERMINATED']);

/** The record with this id, or a 404 naming what was asked for. */
function existing<T>(records: ReadonlyMap<number, T>, id: number, what: string): T {
  const record = records.get(id);
  if (record === undefined) throw notFound(`${what} ${id} does not exist`);
  return record;
}

const signedHex = (n: number) => (n < 0 ? `-${(-n).toString(16)}` : n.toString(16));

/**
 * Grids, cloud servers, RSDBs and test environments. Works on the fixture records
 * themselves, so export() hands back exactly what a fixture file would hold. Every action
 * writes a schedule; every read works the state out from the clock.
 */
export class ProvisioningStore {
  private readonly grids = new Map<number, GridSeed>();
  private readonly servers = new Map<number, CloudServerRecord>();
  private readonly rsdbs = new Map<number, RsdbSeed>();
  private readonly environments = new Map<number, EnvironmentSeed>();
  private nextServerId: number;
  private instanceCounter: number;
  private readonly loadedAt: number;

  constructor(
    private readonly state: ProvisioningSections,
    private readonly clock: Clock,
    private readonly timeScale: number,
  ) {
    for (const grid of state.grids) this.grids.set(grid.id, grid);
    // Kept in id order, so the list needs no sort: a new server's id is always above every
    // existing one (nextServerId), so it lands at the end of the map.
    for (const server of [...state.cloudServers].sort((a, b) => a.id - b.id)) this.servers.set(server.id, server);
    for (const rsdb of state.rsdbs) this.rsdbs.set(rsdb.id, rsdb);
    for (const env of state.environments) this.environments.set(env.id, env);
    this.nextServerId = state.cloudServers.reduce((max, s) => Math.max(max, s.id + 1), FIRST_CLOUD_SERVER_ID);
    // Java's UID counter starts near Short.MIN_VALUE; carry on after any id already issued.
    this.instanceCounter = state.grids.reduce((max, g) => {
      const counter = Number.parseInt(g.deployment?.instanceId.split(':')[3] ?? '', 16);
      return Number.isNaN(counter) ? max : Math.max(max, counter + 1);
    }, -0x7fdd);
    this.loadedAt = clock.now();

    // A seed may ask for a resource already started, so the demo does not open on an empty
    // list. An export carries the deployment itself, so a re-import does not start it again.
    for (const grid of state.grids) {
      if (grid.startedAgoMs !== undefined && !grid.deployment) this.deploy(grid, this.loadedAt - grid.startedAgoMs, SEED_USER);
    }
    for (const rsdb of state.rsdbs) {
      if (rsdb.startedAgoMs !== undefined && !rsdb.launch) this.launchRsdb(rsdb, this.loadedAt - rsdb.startedAgoMs);
    }
    for (const env of state.environments) {
      if (env.startedAgoMs !== undefined && !env.launch) {
        this.launchEnvironment(env, this.loadedAt - env.startedAgoMs, env.lastLaunchedBy ?? SEED_USER);
      }
    }
  }

  /** Names and ids of the repository objects this store owns (the Objects call). */
  catalog(): Record<'grids' | 'environments' | 'rsdbs', ReadonlyArray<{ id: number; name: string }>> {
    return this.state;
  }

  /** The four sections in the fixture format; importing them restores this very state. */
  export(): ProvisioningSections {
    const { grids, cloudServers, rsdbs, environments } = this.state;
    return structuredClone({ grids, cloudServers, rsdbs, environments });
  }

  /** How many entries each of the four sections holds, without exporting them. */
  counts(): Record<keyof ProvisioningSections, number> {
    const { grids, cloudServers, rsdbs, environments } = this.state;
    return { grids: grids.length, cloudServers: cloudServers.length, rsdbs: rsdbs.length, environments: environments.length };
  }

  // -------------------------------------------------------------------------------------
  // Grids
  // -------------------------------------------------------------------------------------

  /** Grids that have been started at least once, terminated ones included. */
  listGrids(): Grid[] {
    const now = this.clock.now();
    return this.state.grids
      .filter((g) => g.deployment)
      .sort((a, b) => a.id - b.id)
      .map((g) => this.gridView(g, now, 'list'));
  }

  getGrid(id: number): Grid {
    return this.gridView(this.grid(id), this.clock.now(), 'read');
  }

  startGrid(id: number, user: string): Grid {
    const grid = this.grid(id);
    const now = this.clock.now();
    const state = gridState(grid, now);
    if (!FINAL_GRID_STATES.has(state)) throw badRequest(`grid ${id} is ${state}: it cannot be started until it reaches a final state`);
    this.deploy(grid, now, user);
    return this.gridView(grid, now, 'start');
  }

  /** Terminate when deployed, cancel while deploying, nothing when already down. */
  terminateGrid(id: number): Grid {
    const grid = this.grid(id);
    const now = this.clock.now();
    const state = gridState(grid, now);
    const deployment = grid.deployment;
    if (deployment && !GRID_NO_TEARDOWN.has(state)) {
      const servers = this.deploymentServers(grid);
      const live = servers.filter((s) => !SERVER_DOWN.has(serverState(s, now)));
      const plan = planGridStop({
        cancel: !FINAL_GRID_STATES.has(state),
        outcome: grid.terminateOutcome,
        durations: this.gridDurations(grid),
        from: now,
        scale: this.timeScale,
        servers: live,
      });
      deployment.steps = reschedule(deployment.steps, now, plan.steps);
      deployment.journal = [...visibleAt(deployment.journal, now), ...plan.journal];
      live.forEach((server, i) => (server.steps = reschedule(server.steps, now, plan.servers[i])));
      servers.forEach((server) => this.dropFutureCheck(server, now));
    }
    return this.gridView(grid, now, 'action');
  }

  // -------------------------------------------------------------------------------------
  // Cloud servers
  // -------------------------------------------------------------------------------------

  listCloudServers(): CloudServerListItem[] {
    const now = this.clock.now();
    const list: CloudServerListItem[] = [];
    for (const server of this.servers.values()) list.push(cloudServerListItem(server, now));
    return list;
  }

  getCloudServer(id: number): CloudServer {
    return cloudServerView(this.server(id), this.clock.now());
  }

  /** Per section 3.2 a restart answers RUNNING: the emulated restart is immediate. */
  restartCloudServer(id: number): CloudServer {
    const server = this.server(id);
    const now = this.clock.now();
    const state = serverState(server, now);
    if (!SERVER_RESTARTABLE.has(state)) {
      throw badRequest(`cloud server ${id} is ${state}: only a RUNNING, BUSY or FAILED server can be restarted`);
    }
    server.steps = reschedule(server.steps, now, planFrom(SERVER_TABLES.restart, {}, now, this.timeScale));
    this.logForServer(server, now, `Server ${server.name} restarted.`, 'INFO');
    return cloudServerView(server, now);
  }

  terminateCloudServer(id: number): CloudServer {
    const server = this.server(id);
    const now = this.clock.now();
    if (!SERVER_DOWN.has(serverState(server, now))) {
      const durations = this.gridDurations(this.grids.get(server.gridId));
      server.steps = reschedule(server.steps, now, planFrom(SERVER_TABLES.terminate, durations, now, this.timeScale));
      this.dropFutureCheck(server, now);
      this.logForServer(server, now, `Server ${server.name} terminated on request.`, 'INFO');
    }
    return cloudServerView(server, now);
  }

  /** Control API: the server fails now, whatever it was doing (a terminated one cannot). */
  failServer(id: number): CloudServer {
    const server = this.server(id);
    const now = this.clock.now();
    const state = serverState(server, now);
    if (state === 'TERMINATED') throw badRequest(`cloud server ${id} is TERMINATED: a terminated server cannot fail`);
    if (state !== 'FAILED') {
      server.steps = reschedule(server.steps, now, [{ state: 'FAILED', at: now }]);
      this.dropFutureCheck(server, now);
      this.logForServer(server, now, `Server ${server.name} failed.`, 'ERROR');
    }
    return cloudServerView(server, now);
  }

  // -------------------------------------------------------------------------------------
  // RSDBs
  // -------------------------------------------------------------------------------------

  getRsdb(id: number): Rsdb {
    return rsdbView(this.rsdb(id), this.clock.now());
  }

  startRsdb(id: number): Rsdb {
    const rsdb = this.rsdb(id);
    const now = this.clock.now();
    const state = rsdbState(rsdb, now);
    if (state !== 'LOADED' && state !== 'TERMINATED') {
      throw badRequest(`RSDB ${id} is ${state}: only a LOADED or TERMINATED results database can be started`);
    }
    this.launchRsdb(rsdb, now);
    return rsdbView(rsdb, now);
  }

  terminateRsdb(id: number): Rsdb {
    const rsdb = this.rsdb(id);
    const now = this.clock.now();
    const state = rsdbState(rsdb, now);
    if (rsdb.launch && (state === 'ALLOCATING_DATABASE' || state === 'ALLOCATED_DATABASE')) {
      const plan = planFrom(RSDB_TABLES.terminate, this.rsdbDurations(rsdb), now, this.timeScale);
      rsdb.launch.steps = reschedule(rsdb.launch.steps, now, plan);
    }
    return rsdbView(rsdb, now);
  }

  // -------------------------------------------------------------------------------------
  // Test environments
  // -------------------------------------------------------------------------------------

  getEnvironment(id: number): Environment {
    return environmentView(this.environment(id), this.clock.now(), 'read');
  }

  startEnvironment(id: number, user: string): Environment {
    const env = this.environment(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (!FINAL_ENVIRONMENT_STATES.has(state)) {
      throw badRequest(`test environment ${id} is ${state}: it cannot be started until it reaches a final state`);
    }
    if (state === 'RUNNING') throw badRequest(`test environment ${id} is already RUNNING: terminate it before starting it again`);
    this.launchEnvironment(env, now, user);
    return environmentView(env, now, 'start');
  }

  /** Terminate when launched (or failed), cancel while launching, nothing when already down. */
  terminateEnvironment(id: number): Environment {
    const env = this.environment(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (env.launch && !ENVIRONMENT_NO_TEARDOWN.has(state)) {
      const table = FINAL_ENVIRONMENT_STATES.has(state) ? ENVIRONMENT_TERMINATE_TABLES[env.terminateOutcome] : ENVIRONMENT_CANCEL_TABLE;
      env.launch.steps = reschedule(env.launch.steps, now, planFrom(table, this.environmentDurations(env), now, this.timeScale));
      env.lastStoppedAt = now;
    }
    return environmentView(env, now, 'action');
  }

  /** Control API: a RUNNING environment's instance is terminated by someone else, now. */
  externallyTerminate(id: number): Environment {
    const env = this.environment(id);
    const now = this.clock.now();
    const state = environmentState(env, now);
    if (!env.launch || state !== 'RUNNING') {
      throw badRequest(`test environment ${id} is ${state}: only a RUNNING environment can be terminated externally`);
    }
    env.launch.steps = reschedule(env.launch.steps, now, [{ state: 'EXTERNALLY_TERMINATED', at: now }]);
    return environmentView(env, now, 'read');
  }

  // -------------------------------------------------------------------------------------
  // Control API
  // -------------------------------------------------------------------------------------

  /**
   * Chooses how the next start of a resource ends (consumed by that start); null clears it.
   * An RSDB has a single outcome, so only ALLOCATED_DATABASE is accepted for one.
   */
  setNextStartOutcome(kind: string, id: number, outcome: string | null): void {
    switch (kind) {
      case 'grid': {
        const grid = this.grid(id);
        if (outcome === null) delete grid.nextStartOutcome;
        else if (isOneOf(GRID_START_OUTCOMES, outcome)) grid.nextStartOutcome = outcome;
        else throw badRequest(`unknown start outcome '${outcome}' for a grid: use ${GRID_START_OUTCOMES.join(', ')}`);
        return;
      }
      case 'environment': {
        const env = this.environment(id);
        if (outcome === null) delete env.nextStartOutcome;
        else if (isOneOf(ENVIRONMENT_START_OUTCOMES, outcome)) env.nextStartOutcome = outcome;
        else throw badRequest(`unknown start outcome '${outcome}' for a test environment: use ${ENVIRONMENT_START_OUTCOMES.join(', ')}`);
        return;
      }
      case 'rsdb':
        this.rsdb(id);
        if (outcome !== null && outcome !== 'ALLOCATED_DATABASE') {
          throw badRequest(`unknown start outcome '${outcome}' for an RSDB: the only one is ALLOCATED_DATABASE`);
        }
        return;
      default:
        throw badRequest(`unknown resource kind '${kind}': use grid, environment or rsdb`);
    }
  }

  /** Every lifecycle table, and where every resource is in its own. */
  lifecycles(): { tables: typeof LIFECYCLE_TABLES; resources: ResourceLifecycle[] } {
    const now = this.clock.now();
    const describe = <S extends string>(
      kind: ResourceKind,
      id: number,
      name: string,
      steps: readonly Step<S>[] | undefined,
      isFinal: (state: S) => boolean,
    ): ResourceLifecycle => {
      if (!steps) return { kind, id, name, state: 'LOADED', isFinal: true, since: this.loadedAt };
      const { state, since, next } = positionAt(steps, now);
      return { kind, id, name, state, isFinal: isFinal(state), since, ...(next ? { next } : {}), settlesAt: steps[steps.length - 1].at };
    };
    return {
      tables: LIFECYCLE_TABLES,
      resources: [
        ...this.state.grids.map((g) => describe('grid', g.id, g.name, g.deployment?.steps, (s) => FINAL_GRID_STATES.has(s))),
        ...this.state.cloudServers.map((s) => describe('cloudServer', s.id, s.name, s.steps, (st) => SERVER_SETTLED.has(st))),
        ...this.state.rsdbs.map((r) => describe('rsdb', r.id, r.name, r.launch?.steps, (s) => RSDB_SETTLED.has(s))),
        ...this.state.environments.map((e) => describe('environment', e.id, e.name, e.launch?.steps, (s) => FINAL_ENVIRONMENT_STATES.has(s))),
      ],
    };
  }

  /** The earliest scheduled change of any resource after now, if any is scheduled. */
  nextTransitionAt(): number | undefined {
    const now = this.clock.now();
    let earliest: number | undefined;
    const consider = (steps: readonly Step[] | undefined) => {
      const next = steps?.find((s) => s.at > now);
      if (next && (earliest === undefined || next.at < earliest)) earliest = next.at;
    };
    for (const g of this.state.grids) consider(g.deployment?.steps);
    for (const s of this.state.cloudServers) consider(s.steps);
    for (const r of this.state.rsdbs) consider(r.launch?.steps);
    for (const e of this.state.environments) consider(e.launch?.steps);
    return earliest;
  }

  // -------------------------------------------------------------------------------------
  // Internals
  // -------------------------------------------------------------------------------------

  private grid(id: number): GridSeed {
    return existing(this.grids, id, 'grid');
  }

  private server(id: number): CloudServerRecord {
    return existing(this.servers, id, 'cloud server');
  }

  private rsdb(id: number): RsdbSeed {
    return existing(this.rsdbs, id, 'RSDB');
  }

  private environment(id: number): EnvironmentSeed {
    return existing(this.environments, id, 'test environment');
  }

  private gridDurations(grid: GridSeed | undefined): GridDurations {
    return { ...DEFAULT_GRID_DURATIONS, ...grid?.durations };
  }

  private rsdbDurations(rsdb: RsdbSeed) {
    return { ...DEFAULT_RSDB_DURATIONS, ...rsdb.durations };
  }

  private environmentDurations(env: EnvironmentSeed): EnvironmentDurations {
    return { ...DEFAULT_ENVIRONMENT_DURATIONS, ...env.durations };
  }

  private deploymentServers(grid: GridSeed): CloudServerRecord[] {
    const servers: CloudServerRecord[] = [];
    for (const id of grid.deployment?.cloudServerIds ?? []) {
      const server = this.servers.get(id);
      if (server) servers.push(server);
    }
    return servers;
  }

  private gridView(grid: GridSeed, now: number, form: GridForm): Grid {
    return gridView(grid, this.deploymentServers(grid), now, form);
  }

  /** A health check planned for later will not happen once the server's plan changed. */
  private dropFutureCheck(server: CloudServerRecord, now: number): void {
    if (server.checkedAt !== undefined && server.checkedAt > now) delete server.checkedAt;
  }

  /** A journal line on the grid whose current deployment owns `server`. */
  private logForServer(server: CloudServerRecord, now: number, text: string, type: JournalLine['type']): void {
    const deployment = this.grids.get(server.gridId)?.deployment;
    if (!deployment?.cloudServerIds.includes(server.id)) return;
    const later = deployment.journal.findIndex((line) => line.at > now);
    deployment.journal.splice(later < 0 ? deployment.journal.length : later, 0, { at: now, text, type });
  }

  private newInstanceId(gridId: number, at: number): string {
    const counter = this.instanceCounter;
    this.instanceCounter = counter >= 0x7fff ? -0x8000 : counter + 1;
    return `${INSTANCE_HOST}:${gridId.toString(16)}:${at.toString(16)}:${signedHex(counter)}`;
  }

  /**
   * A new deployment at `at`: the previous deployment's servers still up shut down, new
   * cloud servers are created from the grid's templates, and the whole schedule is written.
   */
  private deploy(grid: GridSeed, at: number, user: string): void {
    const durations = this.gridDurations(grid);
    for (const old of this.deploymentServers(grid)) {
      if (SERVER_DOWN.has(serverState(old, at))) continue;
      old.steps = reschedule(old.steps, at, planFrom(SERVER_TABLES.terminate, durations, at, this.timeScale));
      this.dropFutureCheck(old, at);
    }
    const outcome: GridStartOutcome = grid.nextStartOutcome ?? grid.startOutcome;
    delete grid.nextStartOutcome;

    const created: CloudServerRecord[] = grid.servers.flatMap((template) =>
      Array.from({ length: template.count }, () => {
        const id = this.nextServerId++;
        const host = hostFor(template.cloudType, template.region, [id]);
        return {
          id,
          gridId: grid.id,
          name: template.name,
          serverClassName: template.serverClassName,
          role: template.role,
          cloudType: template.cloudType,
          launchCPA: template.launchCPA,
          locationID: template.location.id,
          locationName: template.location.name,
          region: template.region,
          zone: template.zone,
          securityGroup: template.securityGroup,
          instanceSize: template.instanceSize ?? template.serverClassName,
          usingReservedAddress: template.usingReservedAddress,
          vendorID: host.vendorID,
          privateHostName: host.privateHostName,
          publicHostName: host.publicHostName,
          createdAt: at,
          steps: [] as Step<ServerState>[],
        };
      }),
    );
    const plan = planGridStart({
      outcome,
      monitors: grid.monitors,
      durations,
      from: at,
      scale: this.timeScale,
      failingServers: grid.failingServers,
      servers: created,
    });
    // The records are completed in place, not copied with a spread: every record then shares
    // one hidden class (two, with and without checkedAt), which keeps reading a thousand of
    // them (the cloud-server list) on V8's fast property paths.
    created.forEach((server, i) => {
      const { steps, checkedAt } = plan.servers[i];
      server.steps = steps;
      if (checkedAt !== undefined) server.checkedAt = checkedAt;
      this.servers.set(server.id, server);
      this.state.cloudServers.push(server);
    });
    grid.deployment = {
      instanceId: this.newInstanceId(grid.id, at),
      startedAt: at,
      startedBy: user,
      steps: plan.steps,
      journal: plan.journal,
      cloudServerIds: created.map((s) => s.id),
    };
  }

  private launchRsdb(rsdb: RsdbSeed, at: number): void {
    rsdb.launch = {
      steps: planFrom(RSDB_TABLES.start, this.rsdbDurations(rsdb), at, this.timeScale),
      // Every launch is a new instance: new id and host names.
      host: hostFor(rsdb.cloudType, rsdb.region, [rsdb.id, at]),
    };
  }

  private launchEnvironment(env: EnvironmentSeed, at: number, user: string): void {
    const outcome: EnvironmentStartOutcome = env.nextStartOutcome ?? env.startOutcome;
    delete env.nextStartOutcome;
    env.launch = {
      steps: planFrom(ENVIRONMENT_START_TABLES[outcome], this.environmentDurations(env), at, this.timeScale),
      database: hostFor(env.databaseInstance.cloudType, ENVIRONMENT_REGION, [env.id, at, 1]),
      main: hostFor(env.mainInstance.cloudType, ENVIRONMENT_REGION, [env.id, at, 2]),
    };
    env.lastLaunchedAt = at;
    env.lastLaunchedBy = user;
  }
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
