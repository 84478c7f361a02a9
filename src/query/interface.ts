import type { SectionKeys } from '../core/interface.js';
import { domainApiKey, domainTenant } from '../core/app-keys.js';
import type { Interface } from '../http/interface.js';
import { QuerySectionsSchema, type QueryDomain } from './schemas.js';
import { QueryStore, incidentProblems, queryCacheOf, rumModelProblems } from './store.js';
import { QUERY_PREFIX, queryRoutes } from './routes.js';

/**
 * What the Query API reads of the annotations interface: its domains. A view of its store,
 * stated here as the little it reads: an interface folder never imports another.
 */
interface DomainSource {
  domains(): ReadonlyArray<{ id: number; name: string; apiKey?: string; tenant?: string }>;
}

/** The domains as the Query API sees them: with their app keys, worked out once per catalogue. */
const domainViews = new WeakMap<object, QueryDomain[]>();
function queryDomains(domains: ReadonlyArray<{ id: number; name: string; apiKey?: string; tenant?: string }>): QueryDomain[] {
  let views = domainViews.get(domains);
  if (!views) domainViews.set(domains, (views = domains.map((d) => ({ id: d.id, name: d.name, apiKey: domainApiKey(d), tenant: domainTenant(d) }))));
  return views;
}

/** The mPulse Query API: real-user data of each domain, by its app key, that tells the same story as the annotations. */
export const query: Interface<'query', typeof QuerySectionsSchema, QueryStore> = {
  name: 'query',
  label: 'Query API',
  tag: { name: 'Query API', description: 'real-user data of a domain by its app key; needs Authentication (or X-Auth-Token)' },
  prefix: QUERY_PREFIX,
  // Clients send the session token as Authentication, some as X-Auth-Token.
  areas: [{ prefix: QUERY_PREFIX, access: 'token', tokenHeaders: ['authentication', 'x-auth-token'] }],
  sections: QuerySectionsSchema,
  keys: { rumModels: (m) => m.domainId, incidents: (i) => i.id },
  references(state, keys, problem) {
    // Models and incidents name a domain of the annotations interface (its keys are given too).
    const domains = (keys as unknown as Readonly<Record<string, SectionKeys | undefined>>).domains;
    state.rumModels.forEach((m, i) => {
      if (!domains?.has(m.domainId)) problem(() => `$.rumModels[${i}].domainId: no domain ${m.domainId}`);
    });
    state.incidents.forEach((m, i) => {
      if (!domains?.has(m.domainId)) problem(() => `$.incidents[${i}].domainId: no domain ${m.domainId}`);
    });
  },
  checks(state, { now }, problem) {
    state.incidents.forEach((seed, i) => incidentProblems(seed, i, now, problem));
    state.rumModels.forEach((seed, i) => rumModelProblems(seed, i, problem));
  },
  // The domains come from the annotations store, which comes before this one in the list.
  build: (state, { clock, stores, config }) => {
    const annotations = stores.annotations as DomainSource | undefined;
    return new QueryStore(state, clock, { domains: () => queryDomains(annotations?.domains() ?? []) }, queryCacheOf(config));
  },
  state: {
    export: (store, at) => store.export(at),
    counts: (store) => store.counts(),
    snapshot: (store, at) => ({ sections: store.snapshot(at) }),
  },
  routes: async (app, { store, config }) => {
    await app.register(queryRoutes, { store, config });
  },
};
