import { attributesOf, type ObjectView, type ObjectViews } from '../core/objects.js';
import { domainApiKey } from './schemas.js';
import { domainTenant } from '../core/app-keys.js';
import type { AnnotationStore } from './store.js';

/** The repository objects of this interface: its domains, with their app keys. */
export function annotationObjects(store: AnnotationStore): ObjectViews {
  return {
    domain: function* () {
      for (const d of store.domains()) {
        yield {
          id: d.id,
          name: d.name,
          // Its tenant's: another tenant's sessions neither list it nor read it (nor its app's data).
          tenant: domainTenant(d),
          // The app key under the name mPulse clients read, and the host name bulk scripts filter on.
          attributes: attributesOf({ apiKey: domainApiKey(d), domain: d.name }),
          body: `<Domain><SessionTimeout>30</SessionTimeout><CollectResources>true</CollectResources><CustomMetrics/><CustomTimers/></Domain>`,
          refuseDelete: () => 'the annotations interface owns domain objects (annotations refer to them); they are made and removed with the fixtures',
        } satisfies ObjectView;
      }
    },
  };
}

