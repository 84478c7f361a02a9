import type { Interface } from '../http/interface.js';
import { AnnotationStore, checkReferences, checkSeed, prepareSeedIndex } from './store.js';
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
  // Plain loops: a seed can hold hundreds of thousands of annotations. The first makes one
  // pass for both when neither has anything to report (see checkReferences).
  references: (state, keys, problem) => checkReferences(state.annotations, (id) => keys.domains.has(id), problem),
  checks: (state, { now }, problem) => checkSeed(state.annotations, now, problem),
  build: (state, { clock, config }) => new AnnotationStore(state, clock, config),
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
