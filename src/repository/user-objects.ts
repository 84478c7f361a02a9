import { attributesOf, type ObjectView, type ObjectViews } from '../core/objects.js';
import type { UserSeed } from './schemas.js';
import { tenantsOf } from './store.js';

/** Users and their tenants: ids by position (users are only ever seeded, in order). */
export function userViews(users: () => readonly UserSeed[]): ObjectViews {
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
          attributes: attributesOf({ emailAddress: u.userName, fullName: u.fullName ?? u.userName }),
          body: '<User/>',
        } satisfies ObjectView;
      }
    },
    tenant: function* () {
      let id = 0;
      for (const t of tenants()) {
        id++;
        yield { id, name: t, tenant: t, readOnly: true, attributes: [], body: '<Tenant><DSWBURLs></DSWBURLs></Tenant>' } satisfies ObjectView;
      }
    },
  };
}

