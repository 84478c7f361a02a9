import type { Interface } from '../http/interface.js';
import { AnnotationStore, checkSeed, prepareSeedIndex } from './store.js';
import { AnnotationSectionsSchema } from './schemas.js';
import { ANNOTATIONS_PREFIX, annotationRoutes } from './routes.js';
import { annotationObjects } from './objects.js';

/** The mPulse annotation API, and the domains annotations belong to. */
export const annotations: Interface<'annotations', typeof AnnotationSectionsSchema, AnnotationStore> = {
  name: 'annotations',
  label: 'Annotations',
  tag: { name: 'Annotations' },
  prefix: ANNOTATIONS_PREFIX,
  areas: [{ prefix: '/concerto/mpulse/api/annotations', access: 'token' }],
  sections: AnnotationSectionsSchema,
  keys: { domains: (d) => d.id, annotations: (a) => a.id },
  references(state, keys, problem) {
    // Plain loops: a seed can hold hundreds of thousands of annotations.
    const { annotations: list } = state;
    for (let i = 0; i < list.length; i++) {
      const { domainIds } = list[i];
      for (let j = 0; j < domainIds.length; j++) {
        const d = domainIds[j];
        if (!keys.domains.has(d)) problem(() => `$.annotations[${i}].domainIds[${j}]: no domain ${d}`);
      }
    }
  },
  checks: (state, { now }, problem) => checkSeed(state.annotations, now, problem),
  build: (state, { clock }) => new AnnotationStore(state, clock),
  prepare: (state, { now }) => prepareSeedIndex(state.annotations, now),
  objects: annotationObjects,
  state: {
    export: (store, at) => store.export(at),
    counts: (store) => store.counts(),
    snapshot: (store, at) => ({ sections: store.snapshot(at) }),
  },
  routes: async (app, { store, config }) => {
    await app.register(annotationRoutes, { store, config });
  },
};
