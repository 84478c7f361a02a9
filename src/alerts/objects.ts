import { attributesOf, xmlText, zonedTime, type ObjectView, type ObjectViews } from '../core/objects.js';
import { hash32 } from '../core/random.js';
import type { AlertStore } from './store.js';

/** An alert has a uid, not a number: its object id is a number derived from the uid, the same in every run. */
export const alertObjectId = (uid: string) => (hash32('alert', uid) % 0x7fffffff) + 1;

export function alertObjects(store: AlertStore): ObjectViews {
  return {
    alert: function* () {
      for (const a of store.list()) {
        yield {
          id: alertObjectId(a.uid),
          name: a.name,
          // The three times as mPulseAPI.jl parses them (with a numeric zone), null while there is none.
          attributes: [
            ...attributesOf({ uid: a.uid, enabled: a.enabled, state: a.state }),
            { name: 'lastCleared', value: zonedTime(a.lastCleared) },
            { name: 'lastTriggered', value: zonedTime(a.lastTriggered) },
            { name: 'lastUpdated', value: zonedTime(a.lastUpdated) },
          ],
          body: `<Alert><Subject>${xmlText(a.subject ?? a.name)}</Subject></Alert>`,
          refuseDelete: () => 'the alerts interface owns alert objects; they are made and removed with the fixtures',
        } satisfies ObjectView;
      }
    },
  };
}

