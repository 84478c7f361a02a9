import type { Interface } from '../http/interface.js';
import { ProvisioningStore } from './store.js';
import { ProvisioningSectionsSchema } from './schemas.js';
import { PROVISIONING_PREFIX, provisioningRoutes } from './routes.js';
import type { ResourceKind } from './resources.js';
import { provisioningObjects } from './objects.js';

const KINDS: readonly ResourceKind[] = ['grid', 'cloudServer', 'rsdb', 'environment'];

/** The CloudService: grids and their cloud servers, results databases, test environments. */
export const provisioning: Interface<'provisioning', typeof ProvisioningSectionsSchema, ProvisioningStore> = {
  name: 'provisioning',
  label: 'Provisioning',
  tag: { name: 'Provisioning', description: 'grids, cloud servers, RSDBs, test environments' },
  prefix: PROVISIONING_PREFIX,
  // Wider than the versioned prefix: an unknown version is refused like the interface itself.
  // An API token as a Bearer too: an automation script of the service's own authors sends one.
  areas: [{ prefix: '/concerto/services/rest/CloudService', access: 'token', authorization: ['bearer'] }],
  sections: ProvisioningSectionsSchema,
  keys: { grids: (g) => g.id, cloudServers: (c) => c.id, rsdbs: (r) => r.id, environments: (e) => e.id },
  references(state, keys, problem) {
    state.cloudServers.forEach((c, i) => {
      if (!keys.grids.has(c.gridId)) problem(() => `$.cloudServers[${i}].gridId: no grid ${c.gridId}`);
    });
    state.grids.forEach((g, i) => {
      g.deployment?.cloudServerIds.forEach((id, j) => {
        if (!keys.cloudServers.has(id)) problem(() => `$.grids[${i}].deployment.cloudServerIds[${j}]: no cloud server ${id}`);
      });
    });
  },
  build: (state, { clock, config, loadedAt }) => new ProvisioningStore(state, clock, config.timeScale, loadedAt),
  objects: provisioningObjects,
  state: {
    export: (store) => store.export(),
    counts: (store) => store.counts(),
    snapshot: (store) => store.snapshot(),
  },
  timed: {
    kinds: KINDS,
    nextTransitionAt: (store, after) => store.nextTransitionAt(after),
    settlesAt: (store, kind, id) => ((KINDS as readonly string[]).includes(kind) ? store.settlesAt(kind as ResourceKind, Number(id)) : undefined),
    stepsBetween: (store, from, to, visit) => store.stepsBetween(from, to, visit),
    viewAt: (store, kind, id, at) => ((KINDS as readonly string[]).includes(kind) ? store.viewAt(kind as ResourceKind, Number(id), at) : undefined),
  },
  routes: async (app, { store }) => {
    await app.register(provisioningRoutes, { store });
  },
};
