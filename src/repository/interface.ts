import type { SectionKeys } from '../core/interface.js';
import type { Interface } from '../http/interface.js';
import { AuthStore } from './store.js';
import { ObjectStore } from './objects.js';
import { userViews } from './user-objects.js';
import { RepositorySectionsSchema, type ObjectSeed } from './schemas.js';
import { REPOSITORY_PREFIX, repositoryRoutes } from './routes.js';

/** The repository's two stores: users and their sessions, and the objects. */
export interface RepositoryStores {
  readonly auth: AuthStore;
  readonly objects: ObjectStore;
}

/** Object types whose objects are another section's records: an `objects` entry adds to the record of its id. */
const OWNED_OBJECT_SECTIONS: Partial<Record<string, string>> = { grid: 'grids', rsdb: 'rsdbs', testenvironment: 'environments', domain: 'domains' };
/** Object types that are views of something other than a section keyed by a numeric id. */
const DERIVED_OBJECT_TYPES = new Set(['alert', 'user', 'tenant']);

/**
 * An entry for an owned object must have its record (in another interface's section: the
 * keys of every section are given); a stored object's name is unique within its type and tenant.
 */
function objectProblems(objects: readonly ObjectSeed[], keys: Readonly<Record<string, SectionKeys | undefined>>, problem: (text: () => string) => void): void {
  const names = new Set<string>();
  // Stored objects by type and id, for the references between them.
  let byId: Map<string, ObjectSeed> | undefined;
  objects.forEach((o, i) => {
    o.references?.forEach((r, j) => {
      const where = `$.objects[${i}].references[${j}]`;
      const section = OWNED_OBJECT_SECTIONS[r.type];
      if (section) {
        if (!keys[section]?.has(r.id)) problem(() => `${where}: no ${section.replace(/s$/, '')} ${r.id} to reference`);
        return;
      }
      if (DERIVED_OBJECT_TYPES.has(r.type)) return;
      byId ??= new Map(objects.map((s) => [`${s.type}:${s.id}`, s]));
      const target = byId.get(`${r.type}:${r.id}`);
      if (!target) problem(() => `${where}: no ${r.type} object ${r.id} to reference`);
      else if (target.name !== r.name) problem(() => `${where}: ${r.type} ${r.id} is named '${target.name}', not '${r.name}'`);
      else if (target.tenant !== o.tenant) problem(() => `${where}: ${r.type} ${r.id} belongs to tenant '${target.tenant}', not '${o.tenant}'`);
    });
    const attributeNames = new Set<string>();
    o.attributes.forEach((a, j) => {
      if (attributeNames.has(a.name)) problem(() => `$.objects[${i}].attributes[${j}]: attribute '${a.name}' is given twice`);
      attributeNames.add(a.name);
    });
    const section = OWNED_OBJECT_SECTIONS[o.type];
    if (section) {
      if (!keys[section]?.has(o.id)) problem(() => `$.objects[${i}]: no ${section.replace(/s$/, '')} ${o.id} for this ${o.type} object to add to`);
      return;
    }
    if (DERIVED_OBJECT_TYPES.has(o.type)) return;
    const key = JSON.stringify([o.type, o.tenant, o.name]);
    if (names.has(key)) problem(() => `$.objects[${i}].name: another ${o.type} of tenant '${o.tenant}' is named '${o.name}'`);
    names.add(key);
  });
}

/** The Repository service: users and their session tokens (log in, log out), and its objects. */
export const repository: Interface<'repository', typeof RepositorySectionsSchema, RepositoryStores> = {
  name: 'repository',
  label: 'Repository',
  tag: { name: 'Repository', description: 'tokens and objects' },
  prefix: REPOSITORY_PREFIX,
  // Logging in needs no token; objects do, and take an API token (Bearer) or a user name and
  // password (Basic) instead, as the reference's "Get an object" allows.
  areas: [
    { prefix: `${REPOSITORY_PREFIX}/Objects`, access: 'token', authorization: ['bearer', 'basic'] },
    { prefix: `${REPOSITORY_PREFIX}/Tokens`, access: 'open' },
  ],
  sections: RepositorySectionsSchema,
  keys: { users: (u) => u.userName, tokens: (t) => t.token, objects: (o) => `${o.type}:${o.id}` },
  references(state, keys, problem) {
    state.tokens.forEach((t, i) => {
      if (!keys.users.has(t.userName)) problem(() => `$.tokens[${i}].userName: no user '${t.userName}'`);
    });
    objectProblems(state.objects, keys as unknown as Readonly<Record<string, SectionKeys | undefined>>, problem);
  },
  build: (state, { clock, config, views, loadedAt }) => ({
    auth: new AuthStore(state.users, state.tokens, clock, config.tokenIdleTimeoutMs),
    // Objects of the types other interfaces own are theirs (`views`, filled once the world is built).
    objects: new ObjectStore(state.objects, views, clock, config.repositoryMaxBytes, loadedAt, config),
  }),
  objects: (store) => userViews(() => store.auth.exportUsers()),
  state: {
    export: (store) => ({ users: store.auth.exportUsers(), tokens: store.auth.exportTokens(), ...store.objects.export() }),
    counts: (store) => ({ ...store.auth.counts(), ...store.objects.counts() }),
    snapshot: (store) => ({ sections: { ...store.auth.snapshot(), ...store.objects.snapshot() } }),
  },
  routes: async (app, { store }) => {
    await app.register(repositoryRoutes, { auth: (request) => store(request).auth, objects: (request) => store(request).objects });
  },
};
