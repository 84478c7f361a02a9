import { attributesOf, xmlText, type ObjectView, type ObjectViews } from '../core/objects.js';
import type { ProvisioningStore } from './store.js';

/**
 * The repository objects of this interface: its grids, test environments and RSDBs, read
 * from the store whenever the repository is asked, so an object never disagrees with its record.
 */

/** Distinct values in first-seen order, joined by commas. */
const distinct = (values: readonly string[]) => [...new Set(values)].join(',');

/** States in which a grid, RSDB or environment holds servers: deleting its object would strand them. */
const DOWN = new Set([
  'LOADED',
  'ALLOCATE_FAILED',
  'CANCELLED',
  'TERMINATED',
  'TERMINATED_WITH_FAILURES',
  'EXTERNALLY_TERMINATED',
  'ERROR_BUILD_MISMATCH',
  'PROCESS_FAILED',
  'VOLUME_NOT_FORMATTED',
  'VOLUME_NOT_AVAILABLE',
]);

function refuseWhileUp(kind: string, id: number, state: () => string | undefined): () => string {
  return () => {
    const s = state();
    return s !== undefined && !DOWN.has(s)
      ? `the ${kind} is ${s}: terminate it first (and its object stays: the provisioning interface owns it)`
      : `the provisioning interface owns ${kind} objects; they are made and removed with the fixtures`;
  };
}

/** A store's read that 404s for a never-started resource is "no state". */
function stateOr(read: () => { state: string }): string | undefined {
  try {
    return read().state;
  } catch {
    return undefined;
  }
}

export function provisioningObjects(p: ProvisioningStore): ObjectViews {
  return {
    grid: function* () {
      for (const g of p.catalog().grids) {
        const servers = g.servers;
        const count = (role?: string) => servers.filter((s) => role === undefined || s.role === role).reduce((n, s) => n + s.count, 0);
        yield {
          id: g.id,
          name: g.name,
          attributes: attributesOf({
            location: distinct(servers.map((s) => s.location.name)),
            region: distinct(servers.map((s) => s.region)),
            cloudType: distinct(servers.map((s) => s.cloudType)),
            serverCount: count(),
            loadServerCount: count('LOAD_GENERATOR'),
            resultsServerCount: count('RESULTS'),
            monitors: g.monitors,
          }),
          body: `<Grid><Name>${xmlText(g.name)}</Name></Grid>`,
          refuseDelete: refuseWhileUp('grid', g.id, () => stateOr(() => p.getGrid(g.id))),
        } satisfies ObjectView;
      }
    },
    testenvironment: function* () {
      for (const e of p.catalog().environments) {
        yield {
          id: e.id,
          name: e.name,
          attributes: attributesOf({
            location: distinct([e.mainInstance.cloudType, e.databaseInstance.cloudType]),
            cloudType: e.mainInstance.cloudType,
            mainInstanceSize: e.mainInstance.instanceSize,
            databaseInstanceSize: e.databaseInstance.instanceSize,
            serverCount: 2,
          }),
          body: `<TestEnvironment><Name>${xmlText(e.name)}</Name></TestEnvironment>`,
          refuseDelete: refuseWhileUp('test environment', e.id, () => stateOr(() => p.getEnvironment(e.id))),
        } satisfies ObjectView;
      }
    },
    rsdb: function* () {
      for (const r of p.catalog().rsdbs) {
        yield {
          id: r.id,
          name: r.name,
          attributes: attributesOf({
            location: r.region,
            region: r.region,
            zone: r.zone,
            cloudType: r.cloudType,
            instanceSize: r.instanceSize,
            serverCount: 1,
          }),
          body: `<ResultsDatabase><Name>${xmlText(r.name)}</Name></ResultsDatabase>`,
          refuseDelete: refuseWhileUp('RSDB', r.id, () => stateOr(() => p.getRsdb(r.id))),
        } satisfies ObjectView;
      }
    },
  };
}

