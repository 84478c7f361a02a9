import type { ViewObject, ViewProviders } from '../repository/objects.js';
import type { UserSeed } from '../repository/schemas.js';
import { tenantsOf } from '../repository/store.js';
import type { ProvisioningStore } from '../provisioning/store.js';
import type { AnnotationStore } from '../annotations/store.js';
import { domainApiKey } from '../annotations/schemas.js';
import type { AlertStore } from '../alerts/store.js';
import { hash32 } from '../core/random.js';

/**
 * The repository objects of the other interfaces' stores: the ports the object store reads
 * them through (repository/objects.ts), each read when asked. Kept here, in the world, which
 * may know every interface, so that no interface folder imports another.
 */

const attrs = (values: Record<string, string | number | boolean>) =>
  Object.entries(values).map(([name, value]) => ({ name, value: String(value) }));

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

export function provisioningViews(store: () => ProvisioningStore): ViewProviders {
  return {
    grid: function* () {
      const p = store();
      for (const g of p.catalog().grids) {
        const servers = g.servers;
        const count = (role?: string) => servers.filter((s) => role === undefined || s.role === role).reduce((n, s) => n + s.count, 0);
        yield {
          id: g.id,
          name: g.name,
          attributes: attrs({
            location: distinct(servers.map((s) => s.location.name)),
            region: distinct(servers.map((s) => s.region)),
            cloudType: distinct(servers.map((s) => s.cloudType)),
            serverCount: count(),
            loadServerCount: count('LOAD_GENERATOR'),
            resultsServerCount: count('RESULTS'),
            monitors: g.monitors,
          }),
          body: `<Grid><Name>${xml(g.name)}</Name></Grid>`,
          refuseDelete: refuseWhileUp('grid', g.id, () => stateOr(() => p.getGrid(g.id))),
        } satisfies ViewObject;
      }
    },
    testenvironment: function* () {
      const p = store();
      for (const e of p.catalog().environments) {
        yield {
          id: e.id,
          name: e.name,
          attributes: attrs({
            location: distinct([e.mainInstance.cloudType, e.databaseInstance.cloudType]),
            cloudType: e.mainInstance.cloudType,
            mainInstanceSize: e.mainInstance.instanceSize,
            databaseInstanceSize: e.databaseInstance.instanceSize,
            serverCount: 2,
          }),
          body: `<TestEnvironment><Name>${xml(e.name)}</Name></TestEnvironment>`,
          refuseDelete: refuseWhileUp('test environment', e.id, () => stateOr(() => p.getEnvironment(e.id))),
        } satisfies ViewObject;
      }
    },
    rsdb: function* () {
      const p = store();
      for (const r of p.catalog().rsdbs) {
        yield {
          id: r.id,
          name: r.name,
          attributes: attrs({ location: r.region, region: r.region, zone: r.zone, cloudType: r.cloudType, instanceSize: r.instanceSize, serverCount: 1 }),
          body: `<ResultsDatabase><Name>${xml(r.name)}</Name></ResultsDatabase>`,
          refuseDelete: refuseWhileUp('RSDB', r.id, () => stateOr(() => p.getRsdb(r.id))),
        } satisfies ViewObject;
      }
    },
  };
}

export function annotationViews(store: () => AnnotationStore): ViewProviders {
  return {
    domain: function* () {
      for (const d of store().domains()) {
        yield {
          id: d.id,
          name: d.name,
          // The app key under the name mPulse clients read, and the host name bulk scripts filter on.
          attributes: attrs({ apiKey: domainApiKey(d), domain: d.name }),
          body: `<Domain><SessionTimeout>30</SessionTimeout><CollectResources>true</CollectResources><CustomMetrics/><CustomTimers/></Domain>`,
          refuseDelete: () => 'the annotations interface owns domain objects (annotations refer to them); they are made and removed with the fixtures',
        } satisfies ViewObject;
      }
    },
  };
}

/** An alert has a uid, not a number: its object id is a number derived from the uid, the same in every run. */
export const alertObjectId = (uid: string) => (hash32('alert', uid) % 0x7fffffff) + 1;

export function alertViews(store: () => AlertStore): ViewProviders {
  return {
    alert: function* () {
      for (const a of store().list()) {
        yield {
          id: alertObjectId(a.uid),
          name: a.name,
          // The three times as mPulseAPI.jl parses them (with a numeric zone), null while there is none.
          attributes: [
            ...attrs({ uid: a.uid, enabled: a.enabled, state: a.state }),
            { name: 'lastCleared', value: zoned(a.lastCleared) },
            { name: 'lastTriggered', value: zoned(a.lastTriggered) },
            { name: 'lastUpdated', value: zoned(a.lastUpdated) },
          ],
          body: `<Alert><Subject>${xml(a.subject ?? a.name)}</Subject></Alert>`,
          refuseDelete: () => 'the alerts interface owns alert objects; they are made and removed with the fixtures',
        } satisfies ViewObject;
      }
    },
  };
}

/** Users and their tenants: ids by position (users are only ever seeded, in order). */
export function userViews(users: () => readonly UserSeed[]): ViewProviders {
  const tenants = () => [...new Set(users().flatMap(tenantsOf))];
  return {
    // A user in several tenants is seen in each of them.
    user: function* (tenant) {
      let id = 0;
      for (const u of users()) {
        id++;
        if (!tenantsOf(u).includes(tenant)) continue;
        yield {
          id,
          name: u.userName,
          tenant,
          readOnly: true,
          attributes: attrs({ emailAddress: u.userName, fullName: u.fullName ?? u.userName }),
          body: '<User/>',
        } satisfies ViewObject;
      }
    },
    tenant: function* () {
      let id = 0;
      for (const t of tenants()) {
        id++;
        yield { id, name: t, tenant: t, readOnly: true, attributes: [], body: '<Tenant><DSWBURLs></DSWBURLs></Tenant>' } satisfies ViewObject;
      }
    },
  };
}

/** `2026-11-22T09:00:00.000+0000`: ISO-8601 with the zone as digits. */
function zoned(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString().replace('Z', '+0000');
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
