import type { Interface } from '../http/interface.js';
import { AlertStore } from './store.js';
import { AlertSectionsSchema } from './schemas.js';
import { ALERTS_PREFIX, alertRoutes } from './routes.js';
import { alertObjects } from './objects.js';
import { ruleProblems, type RumSource } from './rules.js';

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
  // A rule names an app by its name: the domains of the annotations interface, in the same state.
  references(state, _keys, problem) {
    const domains = (state as unknown as { domains?: ReadonlyArray<{ name: string }> }).domains;
    ruleProblems(state.alerts, domains?.map((d) => d.name), problem);
  },
  // The Query API's store comes before this one in the list: its data is what the rules watch.
  build: (state, { clock, config, stores, loadedAt, world, record, dueChanged }) =>
    new AlertStore(
      state,
      clock,
      config,
      { rum: stores.query as RumSource | undefined, loadedAt },
      {
        ...(world !== undefined ? { world } : {}),
        ...(dueChanged ? { dueChanged } : {}),
        settled: (d) => record?.({ type: d.status === 'sent' ? 'delivery.sent' : 'delivery.failed', kind: 'delivery', resourceId: d.id, state: d.status, view: d }),
      },
    ),
  // A delivery's attempts, started as the clock reaches them (the world's wake-up timer is set to the next).
  due: (store, now) => store.outbox.due(now),
  nextDueAt: (store) => store.outbox.nextAttemptAt,
  dispose: (store) => store.outbox.dispose(),
  objects: alertObjects,
  // The threshold rules' fires and clears, which happen on their own as time passes: the event
  // stream sends them (as alert.fired and alert.cleared) and wakes for the next. They are no
  // lifecycle: no kind for `until`, and the clock's nextTransitionAt (`to: next`) leaves them out.
  timed: {
    kinds: [],
    nextTransitionAt: () => undefined,
    settlesAt: () => undefined,
    wakeAt: (store, after) => store.ruleWakeAt(after),
    stepsBetween: (store, from, to, visit) => store.ruleChanges(from, to, (uid, event) => visit('alert', uid, event.action === 'fire' ? 'firing' : 'cleared', event.at)),
    viewAt: (store, _kind, id, at) => store.ruleChangeAt(String(id), at),
  },
  state: {
    export: (store) => store.export(),
    counts: (store) => store.counts(),
    snapshot: (store) => ({ sections: store.snapshot() }),
  },
  routes: async (app, { store, config }) => {
    await app.register(alertRoutes, { store, config });
  },
};
