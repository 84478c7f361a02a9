import type { Clock } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import { invalid } from '../core/errors.js';
import { EnvironmentStore, ownEnvironment } from './environments.js';
import { GridStore, ownGrid, ownServer, type GridCapacity } from './grids.js';
import { LIFECYCLE_TABLES } from './lifecycles.js';
import type { ResourceKind, ResourceLifecycle, ScheduleReader } from './resources.js';
import { RsdbStore, ownRsdb } from './rsdbs.js';
import type {
  CloudServer,
  CloudServerListItem,
  CloudServerRecord,
  Environment,
  EnvironmentSeed,
  Grid,
  GridSeed,
  Rsdb,
  RsdbSeed,
} from './schemas.js';

/** The four sections of the state (world/state.ts) this store works on, in the fixture format. */
export interface ProvisioningSections {
  grids: GridSeed[];
  cloudServers: CloudServerRecord[];
  rsdbs: RsdbSeed[];
  environments: EnvironmentSeed[];
}
export type { ResourceKind, ResourceLifecycle } from './resources.js';

/**
 * Grids, cloud servers, RSDBs and test environments: one entry point over the store of each
 * resource (grids.ts, rsdbs.ts, environments.ts). Works on records in the fixture format, so
 * export() hands back exactly what a fixture file would hold. Every action writes a schedule;
 * every read works the state out from the clock.
 */
/** What a ProvisioningStore works on, built on its first use (see ProvisioningStore). */
interface Parts {
  /** The store's own records: copies of the seed's, which every reset and sandbox shares. */
  state: ProvisioningSections;
  grids: GridStore;
  rsdbs: RsdbStore;
  environments: EnvironmentStore;
  /** By kind, in the order the lifecycle listing gives them. */
  schedules: Readonly<Record<ResourceKind, ScheduleReader>>;
}

/** The cloud servers a seed's grids get when the seed starts them on load (startedAgoMs). */
function seededServerCount(grids: readonly GridSeed[]): number {
  let count = 0;
  for (const grid of grids) {
    if (grid.startedAgoMs === undefined || grid.deployment) continue;
    for (const template of grid.servers) count += template.count;
  }
  return count;
}

/**
 * Grids, cloud servers, RSDBs and test environments: one entry point over the store of each
 * resource (grids.ts, rsdbs.ts, environments.ts). Works on records in the fixture format, so
 * export() hands back exactly what a fixture file would hold. Every action writes a schedule;
 * every read works the state out from the clock.
 *
 * The records are copied, and the resources the seed starts on load are started, on the
 * store's first use other than counts(), not when it is built: a reset or a sandbox nobody
 * reads costs nothing here. A grid's start (its cloud servers created, its schedule and
 * journal written) is made later still, on the first read of that grid or one of its servers
 * (of all of them for a list, an export or a schedule): a reset followed by a read of one grid
 * makes one deployment, not a thousand. Every start is still dated from the moment the store
 * was built and takes the ids it would take in seed order, so what a read sees is the same
 * whenever and in whatever order the parts are made.
 */
export class ProvisioningStore {
  private made?: Parts;
  /** When the store was built: the load time of the seed's starts. */
  private readonly loadedAt: number;
  /**
   * The record lists of the snapshots still being written out (see snapshot()): they hold
   * the records themselves until, before any record changes, they get copies of them.
   */
  private readonly readers = new Set<unknown[][]>();

  /** `seed` is only read; its records are copied (a shallow copy each, see ownGrid and the others). */
  constructor(
    private readonly seed: ProvisioningSections,
    private readonly clock: Clock,
    private readonly timeScale: number,
    /** When the state was loaded (BuildContext.loadedAt): the since of a resource never started. */
    loadedAt = clock.now(),
  ) {
    this.loadedAt = loadedAt;
  }

  /** The parts, made on first use. */
  private get parts(): Parts {
    return (this.made ??= this.make());
  }

  /** Whether the records have been copied (for tests). */
  get built(): boolean {
    return this.made !== undefined;
  }

  /** How many grid starts of the seed are still to be made, each on the first read of its grid (for tests). */
  get unstartedGrids(): number {
    return this.made?.grids.unstartedGrids ?? 0;
  }

  private make(): Parts {
    const { seed, clock, timeScale, loadedAt } = this;
    const state: ProvisioningSections = {
      grids: seed.grids.map(ownGrid),
      cloudServers: seed.cloudServers.map(ownServer),
      rsdbs: seed.rsdbs.map(ownRsdb),
      environments: seed.environments.map(ownEnvironment),
    };
    const grids = new GridStore(state, clock, timeScale, loadedAt);
    const rsdbs = new RsdbStore(state.rsdbs, clock, timeScale, loadedAt);
    const environments = new EnvironmentStore(state.environments, clock, timeScale, loadedAt);
    const schedules = { grid: grids.schedules, cloudServer: grids.serverSchedules, rsdb: rsdbs.schedules, environment: environments.schedules };
    return { state, grids, rsdbs, environments, schedules };
  }

  /** The records with every seed start made: what a list, an export or a schedule reads. */
  private get wholeState(): ProvisioningSections {
    const { state, grids } = this.parts;
    grids.readyAll();
    return state;
  }

  private get grids(): GridStore {
    return this.parts.grids;
  }

  private get rsdbs(): RsdbStore {
    return this.parts.rsdbs;
  }

  private get environments(): EnvironmentStore {
    return this.parts.environments;
  }

  private get schedules(): Readonly<Record<ResourceKind, ScheduleReader>> {
    this.parts.grids.readyAll();
    return this.parts.schedules;
  }

  /** The records of the repository objects this store owns (the Objects calls), read only. */
  catalog(): Readonly<Pick<ProvisioningSections, 'grids' | 'environments' | 'rsdbs'>> {
    return this.wholeState;
  }

  /** The four sections in the fixture format; importing them restores this very state. */
  export(): ProvisioningSections {
    const { grids, cloudServers, rsdbs, environments } = this.wholeState;
    return structuredClone({ grids, cloudServers, rsdbs, environments });
  }

  /**
   * The four sections for an export in slices (core/snapshot.ts). Their records change in
   * place, but copying a thousand started grids takes tens of milliseconds, so the snapshot
   * holds the records themselves, and each action that changes one first gives every
   * snapshot still being written copies of them as they are (beforeChange). `release` says
   * that the snapshot has been written out: from then on it needs no copy.
   */
  snapshot(): { sections: Record<keyof ProvisioningSections, SectionSnapshot>; release: () => void } {
    const { grids, cloudServers, rsdbs, environments } = this.wholeState;
    const lists = [[...grids], [...cloudServers], [...rsdbs], [...environments]];
    this.readers.add(lists);
    const [g, c, r, e] = lists;
    const sections = { grids: { items: g }, cloudServers: { items: c }, rsdbs: { items: r }, environments: { items: e } };
    return { sections, release: () => this.readers.delete(lists) };
  }

  /** Before an action changes records: the snapshots still being written get copies of them as they are. */
  private beforeChange(): void {
    if (this.readers.size === 0) return;
    for (const lists of this.readers) for (const list of lists) for (let i = 0; i < list.length; i++) list[i] = structuredClone(list[i]);
    this.readers.clear();
  }

  /** How many entries each of the four sections holds, without exporting them. */
  counts(): Record<keyof ProvisioningSections, number> {
    // Read from the seed while the parts are not made: the same numbers, nothing built.
    const { grids, cloudServers, rsdbs, environments } = this.made?.state ?? this.seed;
    const seeded = this.made ? this.made.grids.unstartedServers() : seededServerCount(grids);
    return { grids: grids.length, cloudServers: cloudServers.length + seeded, rsdbs: rsdbs.length, environments: environments.length };
  }

  // --- Grids and cloud servers ---------------------------------------------------------

  /** Grids that have been started at least once, terminated ones included. */
  listGrids(): Grid[] {
    return this.grids.listGrids();
  }

  getGrid(id: number): Grid {
    return this.grids.getGrid(id);
  }

  startGrid(id: number, user: string): Grid {
    this.beforeChange();
    return this.grids.startGrid(id, user);
  }

  /** Terminate when deployed, cancel while deploying, nothing when already down. */
  terminateGrid(id: number): Grid {
    this.beforeChange();
    return this.grids.terminateGrid(id);
  }

  listCloudServers(): CloudServerListItem[] {
    return this.grids.listCloudServers();
  }

  getCloudServer(id: number): CloudServer {
    return this.grids.getCloudServer(id);
  }

  restartCloudServer(id: number): CloudServer {
    this.beforeChange();
    return this.grids.restartCloudServer(id);
  }

  terminateCloudServer(id: number): CloudServer {
    this.beforeChange();
    return this.grids.terminateCloudServer(id);
  }

  /** Control API: the server fails now, whatever it was doing (a terminated one cannot). */
  failServer(id: number): CloudServer {
    this.beforeChange();
    return this.grids.failServer(id);
  }

  /** Deployed grids as compositions see them: state, running load generators, when up and down. */
  gridCapacities(): GridCapacity[] {
    return this.grids.capacities(this.clock.now());
  }

  gridCapacity(id: number): GridCapacity | undefined {
    return this.grids.capacity(id, this.clock.now());
  }

  // --- RSDBs ---------------------------------------------------------------------------

  getRsdb(id: number): Rsdb {
    return this.rsdbs.get(id);
  }

  startRsdb(id: number): Rsdb {
    this.beforeChange();
    return this.rsdbs.start(id);
  }

  terminateRsdb(id: number): Rsdb {
    this.beforeChange();
    return this.rsdbs.terminate(id);
  }

  // --- Test environments ---------------------------------------------------------------

  getEnvironment(id: number): Environment {
    return this.environments.get(id);
  }

  startEnvironment(id: number, user: string): Environment {
    this.beforeChange();
    return this.environments.start(id, user);
  }

  terminateEnvironment(id: number): Environment {
    this.beforeChange();
    return this.environments.terminate(id);
  }

  /** Control API: a RUNNING environment's instance is terminated by someone else, now. */
  externallyTerminate(id: number): Environment {
    this.beforeChange();
    return this.environments.externallyTerminate(id);
  }

  // --- Control API ---------------------------------------------------------------------

  /**
   * Chooses how the next start of a resource ends (consumed by that start); null clears it.
   * An RSDB has a single outcome, so only ALLOCATED_DATABASE is accepted for one.
   */
  setNextStartOutcome(kind: string, id: number, outcome: string | null): void {
    this.beforeChange();
    switch (kind) {
      case 'grid':
        return this.grids.setNextStartOutcome(id, outcome);
      case 'environment':
        return this.environments.setNextStartOutcome(id, outcome);
      case 'rsdb':
        return this.rsdbs.setNextStartOutcome(id, outcome);
      default:
        throw invalid(`unknown resource kind '${kind}': use grid, environment or rsdb`);
    }
  }

  /** Every lifecycle table, and where every resource is in its own. */
  lifecycles(): { tables: typeof LIFECYCLE_TABLES; resources: ResourceLifecycle[] } {
    const now = this.clock.now();
    return { tables: LIFECYCLE_TABLES, resources: Object.values(this.schedules).flatMap((schedules) => schedules.list(now)) };
  }

  /** Where one resource is in its lifecycle (its entry in lifecycles()); undefined when there is none. */
  position(kind: ResourceKind, id: number): ResourceLifecycle | undefined {
    return this.schedules[kind].position(id, this.clock.now());
  }

  /**
   * When one resource's current schedule reaches its last step (its settlesAt in lifecycles()):
   * null when it was never started, undefined when there is no such resource.
   */
  settlesAt(kind: ResourceKind, id: number): number | null | undefined {
    return this.schedules[kind].settlesAt(id);
  }

  /** Every step of any resource that begins in [from, to], by kind (the event stream's transitions). */
  stepsBetween(from: number, to: number, visit: (kind: ResourceKind, id: number, state: string, at: number) => void): void {
    for (const [kind, schedules] of Object.entries(this.schedules) as Array<[ResourceKind, ScheduleReader]>) {
      schedules.stepsBetween(from, to, (id, state, at) => visit(kind, id, state, at));
    }
  }

  /** A resource's view at `at`, as its GET answers it; undefined when there is none. */
  viewAt(kind: ResourceKind, id: number, at: number): unknown {
    switch (kind) {
      case 'grid':
        return this.grids.gridAt(id, at);
      case 'cloudServer':
        return this.grids.cloudServerAt(id, at);
      case 'rsdb':
        return this.rsdbs.viewAt(id, at);
      case 'environment':
        return this.environments.viewAt(id, at);
    }
  }

  /** The earliest scheduled change of any resource after `now` (default the clock's), if any is scheduled. */
  nextTransitionAt(now = this.clock.now()): number | undefined {
    let earliest: number | undefined;
    for (const schedules of Object.values(this.schedules)) {
      const next = schedules.nextTransitionAfter(now);
      if (next !== undefined && (earliest === undefined || next < earliest)) earliest = next;
    }
    return earliest;
  }
}
