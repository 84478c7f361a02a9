import type { Interface } from '../http/interface.js';
import { AlertStore } from './store.js';
import { AlertSectionsSchema } from './schemas.js';
import { ALERTS_PREFIX, alertRoutes } from './routes.js';
import { alertObjects } from './objects.js';

/** The mPulse alert calls an external application makes, and the alerts' recorded history. */
export const alerts: Interface<'alerts', typeof AlertSectionsSchema, AlertStore> = {
  name: 'alerts',
  label: 'Alerts',
  tag: { name: 'Alerts' },
  prefix: ALERTS_PREFIX,
  // A token only when ALERTS_REQUIRE_TOKEN is set.
  areas: [{ prefix: ALERTS_PREFIX, access: 'alert' }],
  sections: AlertSectionsSchema,
  keys: { alerts: (a) => a.uid, deliveries: (d) => d.id },
  build: (state, { clock, config, world, record }) =>
    new AlertStore(state, clock, config, {
      ...(world !== undefined ? { world } : {}),
      settled: (d) => record?.({ type: d.status === 'sent' ? 'delivery.sent' : 'delivery.failed', kind: 'delivery', resourceId: d.id, state: d.status, view: d }),
    }),
  // A delivery's attempts, started as the clock reaches them.
  due: (store, now) => store.outbox.due(now),
  objects: alertObjects,
  state: {
    export: (store) => store.export(),
    counts: (store) => store.counts(),
    snapshot: (store) => ({ sections: store.snapshot() }),
  },
  routes: async (app, { store, config }) => {
    await app.register(alertRoutes, { store, config });
  },
};
