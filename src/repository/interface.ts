import type { Interface } from '../http/interface.js';
import { AuthStore } from './store.js';
import { RepositorySectionsSchema } from './schemas.js';
import { REPOSITORY_PREFIX, repositoryRoutes, type RepositoryCatalog } from './routes.js';

/**
 * What the Objects call lists, read from the interfaces that own the objects. A view of their
 * stores, stated here as the little it reads: an interface folder never imports another.
 */
interface CatalogSources {
  provisioning: { catalog(): Record<'grids' | 'environments' | 'rsdbs', ReadonlyArray<{ id: number; name: string }>> };
  annotations: { domains(): ReadonlyArray<{ id: number; name: string }> };
}

function catalogOf(stores: Readonly<Record<string, unknown>>): RepositoryCatalog {
  const { provisioning, annotations } = stores as unknown as CatalogSources;
  return {
    grid: () => provisioning.catalog().grids,
    testenvironment: () => provisioning.catalog().environments,
    rsdb: () => provisioning.catalog().rsdbs,
    domain: () => annotations.domains(),
  };
}

/** The Repository service: users and their session tokens (log in, log out), and object look-up. */
export const repository: Interface<'repository', typeof RepositorySectionsSchema, AuthStore> = {
  name: 'repository',
  label: 'Repository',
  tag: { name: 'Repository', description: 'tokens and object look-up' },
  prefix: REPOSITORY_PREFIX,
  // Logging in needs no token; finding objects does.
  areas: [
    { prefix: `${REPOSITORY_PREFIX}/Objects`, access: 'token' },
    { prefix: `${REPOSITORY_PREFIX}/Tokens`, access: 'open' },
  ],
  sections: RepositorySectionsSchema,
  keys: { users: (u) => u.userName, tokens: (t) => t.token },
  references(state, keys, problem) {
    state.tokens.forEach((t, i) => {
      if (!keys.users.has(t.userName)) problem(() => `$.tokens[${i}].userName: no user '${t.userName}'`);
    });
  },
  build: (state, { clock, config }) => new AuthStore(state.users, state.tokens, clock, config.tokenIdleTimeoutMs),
  state: {
    export: (store) => ({ users: store.exportUsers(), tokens: store.exportTokens() }),
    counts: (store) => store.counts(),
    snapshot: (store) => ({ sections: store.snapshot() }),
  },
  routes: async (app, { store, stores }) => {
    await app.register(repositoryRoutes, { auth: store, catalog: (request) => catalogOf(stores(request)) });
  },
};
