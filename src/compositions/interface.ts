import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { attributesOf, type ObjectViews } from '../core/objects.js';
import type { Interface, InterfaceRouteOptions } from '../http/interface.js';
import { PATHS } from '../http/paths.js';
import { CompositionSectionsSchema } from './schemas.js';
import { CompositionStore, type GridCapacity, type GridPort } from './store.js';
import { compositionRoutes, resultRoutes } from './routes.js';

/** Where both halves of the interface live: composition instances and the results of their plays. */
const REST = '/concerto/services/rest';

/**
 * What compositions read of the provisioning interface: its grids as load servers see them. A
 * view of its store, stated here as the little it reads: an interface folder never imports another.
 */
interface GridSource {
  gridCapacities(): GridCapacity[];
  gridCapacity(id: number): GridCapacity | undefined;
}

function gridPort(stores: Readonly<Record<string, unknown>>): GridPort {
  const provisioning = stores.provisioning as GridSource | undefined;
  return {
    grids: () => provisioning?.gridCapacities() ?? [],
    grid: (id) => provisioning?.gridCapacity(id),
  };
}

/** A composition's and a result's repository objects, read from the store when asked. */
function compositionObjects(store: CompositionStore): ObjectViews {
  const of = (type: 'composition' | 'result') =>
    function* () {
      for (const o of store.objects()) {
        if (o.type !== type) continue;
        yield {
          id: o.id,
          name: o.name,
          attributes: attributesOf({ path: o.path }),
          body: '',
          refuseDelete: () => `the compositions interface owns ${type} objects; they are made by loading and playing compositions`,
        };
      }
    };
  return { composition: of('composition'), result: of('result') };
}

const routes: FastifyPluginAsyncTypebox<InterfaceRouteOptions<CompositionStore>> = async (app, { store, config }) => {
  await app.register(compositionRoutes, { prefix: PATHS.compositions.slice(REST.length), store, config });
  await app.register(resultRoutes, { prefix: PATHS.results.slice(REST.length), store, config });
};

/** Compositions that play on a grid, and the results their plays write. */
export const compositions: Interface<'compositions', typeof CompositionSectionsSchema, CompositionStore> = {
  name: 'compositions',
  label: 'Compositions',
  tag: { name: 'Compositions', description: 'load, play and command compositions, and read the results their plays write' },
  prefix: PATHS.compositions,
  routePrefix: REST,
  bases: { results: PATHS.results },
  areas: [
    { prefix: `${REST}/composition`, access: 'token' },
    { prefix: `${REST}/Results`, access: 'token' },
  ],
  sections: CompositionSectionsSchema,
  keys: { compositions: (c) => c.path, compositionInstances: (i) => i.instanceID, results: (r) => r.id },
  references(state, _keys, problem) {
    // Instances and results name their composition by id (compositions are keyed by path).
    const ids = new Set<number>();
    state.compositions.forEach((c, i) => {
      if (ids.has(c.id)) problem(() => `$.compositions[${i}]: duplicate composition id ${c.id}`);
      ids.add(c.id);
    });
    state.compositionInstances.forEach((c, i) => {
      if (!ids.has(c.compositionId)) problem(() => `$.compositionInstances[${i}].compositionId: no composition ${c.compositionId}`);
    });
    const instances = new Set(state.compositionInstances.map((c) => c.instanceID));
    state.results.forEach((r, i) => {
      if (!ids.has(r.compositionId)) problem(() => `$.results[${i}].compositionId: no composition ${r.compositionId}`);
      // A result's times are its instance's steps when the state holds it: a startedAt would be ignored.
      if (r.startedAt !== undefined && instances.has(r.instanceID)) {
        problem(() => `$.results[${i}].startedAt: composition instance '${r.instanceID}' is in the state, and its steps give the result's times: leave startedAt out`);
      }
    });
  },
  // Grids are read through the provisioning store, which comes before this one in the list.
  build: (state, { clock, config, stores, loadedAt }) => new CompositionStore(state, clock, { grids: gridPort(stores) }, config.timeScale, loadedAt),
  objects: compositionObjects,
  state: {
    export: (store) => store.export(),
    counts: (store) => store.counts(),
    snapshot: (store) => ({ sections: store.snapshot() }),
  },
  timed: {
    kinds: ['compositionInstance'],
    nextTransitionAt: (store, after) => store.nextTransitionAt(after),
    settlesAt: (store, _kind, id) => store.settlesAt(String(id)),
    stepsBetween: (store, from, to, visit) => store.stepsBetween(from, to, (id, state, at) => visit('compositionInstance', id, state, at)),
    viewAt: (store, _kind, id, at) => {
      const view = store.viewAt(String(id), at);
      // The URL by its path: an event is not sent in answer to one request, so it has no host.
      return view && { ...view, url: `${PATHS.compositions}/${String(id)}` };
    },
  },
  routes,
};
