import type { Clock } from '../core/clock.js';
import { conflicting, full, invalid, missing } from '../core/errors.js';
import { storageLedgerOf, type StorageAccount, type StorageSettings } from '../core/storage.js';
import { hash32 } from '../core/random.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import type { ObjectView, ObjectViews } from '../core/objects.js';
import {
  OBJECT_TYPES,
  type Attribute,
  type AttributeIn,
  type CreateObjectBody,
  type ObjectSeed,
  type ObjectType,
  type Permissions,
  type Reference,
  type ReferenceIn,
  type RepositoryObject,
  type UpdateObjectBody,
} from './schemas.js';

/** Objects of the types other interfaces own, as their stores show them (core/objects.ts). */
export type ViewObject = ObjectView;
export type ViewProviders = ObjectViews;

/** What a list asks for: the name and each attribute must equal the value given. */
export interface ObjectFilter {
  name?: string;
  attributes: ReadonlyArray<readonly [name: string, value: string]>;
}

type StoredObject = Required<Omit<ObjectSeed, 'created' | 'lastModified' | 'references'>> & { created: number; lastModified: number; references?: Reference[] };

interface Entry {
  object: StoredObject;
  /** Its size as JSON, counted against the byte limit; worked out when first needed for a seeded one. */
  bytes?: number;
}

/** The bytes of each seed, worked out once however many resets and sandboxes build from it. */
const seedBytes = new WeakMap<readonly ObjectSeed[], number>();

/**
 * The site's configuration: one object of the whole site (every tenant sees the same one),
 * id 1 unless the fixtures give their own. Tools read and set the boomerang build a new app
 * gets (`boomerangDefaultVersion`) there. Until it is changed it is not stored: a seed
 * without one gets this, and an export leaves it out.
 */
export const SITE_CONFIGURATION = 'siteconfiguration';
function defaultSiteConfiguration(at: number): StoredObject {
  return {
    id: 1,
    type: SITE_CONFIGURATION,
    name: 'Site Configuration',
    tenant: 'Default',
    description: '',
    schemaVersion: '1.0',
    attributes: [{ name: 'boomerangDefaultVersion', value: '1.737.0' }],
    body: '',
    created: at,
    lastModified: at,
  };
}

const FULL: Permissions = { read: true, write: true, use: true, fullControl: true };
const READ_ONLY: Permissions = { read: true, write: false, use: true, fullControl: false };

const sizeOf = (object: StoredObject) => JSON.stringify(object).length;
const nameKey = ({ type, tenant, name }: { type: string; tenant: string; name: string }) => `${type}\u0000${tenant}\u0000${name}`;
/**
 * What the process's bound (REPOSITORY_PROCESS_MAX_BYTES) charges an object besides its JSON:
 * its lines in the state file, pretty-printed, and its entries in the store's maps.
 */
const OBJECT_BYTES = 256;
const bytesOf = (entry: Entry) => (entry.bytes ??= sizeOf(entry.object));

/** The attribute values as the service keeps them: text, whatever JSON type they came as. */
function normalise(attributes: readonly AttributeIn[]): Attribute[] {
  const seen = new Set<string>();
  return attributes.map(({ name, value }) => {
    if (seen.has(name)) throw invalid(`attribute '${name}' is given twice`);
    seen.add(name);
    return { name, value: value === undefined || value === null ? null : String(value) };
  });
}

/** Fields of an object that the service makes; a create or update body may carry them only as a GET shows them. */
const SERVICE_FIELDS = ['created', 'lastModified', 'tenantID', 'effectivePermissions', 'deleted', 'hidden', 'readOnly', 'ownerID'] as const;
type ServiceFields = Partial<Record<(typeof SERVICE_FIELDS)[number] | 'id', unknown>>;

/** Whether a sent value is the one shown: times as ISO text or epoch ms, numbers as their text too. */
function sameValue(sent: unknown, shown: unknown): boolean {
  if (typeof shown === 'string' && /^\d{4}-\d\d-\d\dT/.test(shown)) {
    const at = typeof sent === 'number' ? sent : typeof sent === 'string' ? Date.parse(sent) : NaN;
    return at === Date.parse(shown);
  }
  if (typeof shown === 'number' && typeof sent === 'string') return sent.trim() !== '' && Number(sent) === shown;
  if (shown !== null && typeof shown === 'object') {
    if (sent === null || typeof sent !== 'object' || Array.isArray(sent)) return false;
    const keys = Object.keys(sent);
    const [a, b] = [sent as Record<string, unknown>, shown as Record<string, unknown>];
    return keys.length === Object.keys(b).length && keys.every((k) => sameValue(a[k], b[k]));
  }
  return sent === shown;
}

/**
 * The fields the service makes, sent back: each must be what a GET shows of the object (a
 * fetched object can be sent back as it is), or is refused, named; on a create there is no
 * object yet, so none may be sent. `null` is the same as leaving a field out.
 */
function checkServiceFields(body: ServiceFields, shown: RepositoryObject | undefined, what: string): void {
  for (const field of SERVICE_FIELDS) {
    const sent = body[field];
    if (sent === undefined || sent === null) continue;
    if (!shown) throw invalid(`body field '${field}' is made by the service: leave it out of a create`);
    const current = (shown as Record<string, unknown>)[field];
    if (current === undefined) throw invalid(`body field '${field}': the emulator does not model it; leave it out`);
    if (!sameValue(sent, current)) {
      const given = JSON.stringify(sent).slice(0, 100);
      throw invalid(`body field '${field}' is ${given} but ${what} has ${JSON.stringify(current)}: a field the service makes can only be sent back as it is`);
    }
  }
}

/** `object` with its references set: none leaves the field out, as an export and a GET show it. */
function withReferences<T extends { references?: Reference[] }>(object: T, references: Reference[] | undefined): T {
  const out = { ...object };
  if (references && references.length > 0) out.references = references;
  else delete out.references;
  return out;
}

/** `into` with each of `changes` replacing the attribute of its name, or added after the others (one pass each). */
function merge(into: readonly Attribute[], changes: readonly Attribute[]): Attribute[] {
  const out = into.map((a) => ({ ...a }));
  const at = new Map(out.map((a, i) => [a.name, i]));
  for (const change of changes) {
    const i = at.get(change.name);
    if (i !== undefined) out[i] = { ...change };
    else at.set(change.name, out.push({ ...change }) - 1);
  }
  return out;
}

/** Whether every filter holds: one pass over the object's attributes, one over the filters. */
function matches(object: { name: string; attributes: readonly Attribute[] }, filter: ObjectFilter): boolean {
  if (filter.name !== undefined && object.name !== filter.name) return false;
  if (filter.attributes.length === 0) return true;
  const { attributes } = object;
  // A handful of attributes is scanned; many are looked up once indexed.
  if (attributes.length <= 16) return filter.attributes.every(([name, value]) => attributes.some((a) => a.name === name && a.value === value));
  const values = new Map(attributes.map((a) => [a.name, a.value]));
  return filter.attributes.every(([name, value]) => values.has(name) && values.get(name) === value);
}

/**
 * The repository's objects. Those of types another interface owns are views of its store,
 * read when asked, so a grid started over CloudService and the `grid` object never disagree;
 * what is stored here for them (a description, a body, further attributes) is kept beside
 * them by type and id. Objects of every other type are stored here whole, each in one tenant.
 * Everything stored is counted in bytes against `maxBytes`.
 */
export class ObjectStore {
  /** Stored objects by type, then id: whole objects, and the additions to views. */
  private readonly stored = new Map<string, Map<number, Entry>>();
  /** Ids of stored objects by type, tenant and name (views are named by their owners). */
  private readonly names = new Map<string, number>();
  private nextId = 1;
  private bytes = 0;
  /** What the Objects calls added since the store was built (the seed not counted), charged to the process. */
  private readonly storage: StorageAccount;
  /** When the store was built: the created time of views that have nothing stored. */
  private readonly builtAt: number;

  constructor(
    seed: readonly ObjectSeed[],
    private readonly views: ViewProviders,
    private readonly clock: Clock,
    private readonly maxBytes: number,
    /** When the state was loaded (BuildContext.loadedAt): the creation time of what it does not say. */
    loadedAt = clock.now(),
    /** REPOSITORY_PROCESS_MAX_BYTES and the state file's bounds, through the process's ledger. */
    limits?: Partial<StorageSettings>,
  ) {
    this.builtAt = loadedAt;
    // Seeded objects are shared with the seed, never changed in place (a change replaces the
    // entry), and their sizes are counted once per seed: a reset or a sandbox costs a pass.
    let bytes = 0;
    const known = seedBytes.get(seed);
    for (const s of seed) {
      const created = s.created ?? this.builtAt;
      const object: StoredObject = { ...s, created, lastModified: s.lastModified ?? created };
      let entries = this.stored.get(object.type);
      if (!entries) this.stored.set(object.type, (entries = new Map()));
      const size = known === undefined ? sizeOf(object) : undefined;
      entries.set(object.id, { object, bytes: size });
      this.names.set(nameKey(object), object.id);
      bytes += size ?? 0;
      if (object.id >= this.nextId) this.nextId = object.id + 1;
    }
    if (known === undefined) seedBytes.set(seed, bytes);
    this.bytes = known ?? bytes;
    this.storage = storageLedgerOf(limits).open(clock, 'repository');
  }

  /** The known object types. */
  static types(): readonly string[] {
    return OBJECT_TYPES;
  }

  /** The objects of a type that `tenant` sees and `filter` matches, in the order of their store. */
  list(type: string, tenant: string, filter: ObjectFilter, details = true): RepositoryObject[] {
    return [...this.listing(type, tenant, filter, details)];
  }

  /**
   * The objects `list` answers, one at a time, as they are now: the type is checked and the
   * objects taken at once (references to entries, which a change replaces, never changes), and
   * each is matched and rendered when asked for, so that a route can write a type of many
   * thousands in slices while other requests change the store.
   */
  listing(type: string, tenant: string, filter: ObjectFilter, details = true): IterableIterator<RepositoryObject> {
    const known = this.knownType(type);
    const tenantId = this.tenantId(tenant);
    // Views are merged with what is stored beside them at once; stored objects are only listed.
    // The site configuration is one for every tenant, and there before it is stored.
    const siteWide = known === SITE_CONFIGURATION;
    const taken: ReadonlyArray<StoredObject & { readOnly?: boolean }> =
      this.views[known] || siteWide ? [...this.visible(known, tenant)] : [...(this.stored.get(known)?.values() ?? [])].map((e) => e.object);
    const render = (object: StoredObject & { readOnly?: boolean }) => this.render(type, object, tenantId, details);
    return (function* () {
      for (const object of taken) {
        if ((!siteWide && object.tenant !== tenant) || !matches(object, filter)) continue;
        yield render(object);
      }
    })();
  }

  /** One object; not-found for an unknown type, an unknown id, or another tenant's object. */
  get(type: string, id: number, tenant: string): RepositoryObject {
    return this.render(type, this.find(this.knownType(type), id, tenant), this.tenantId(tenant), true);
  }

  /** A new object of a type stored here, in `tenant`; its id. */
  create(type: string, body: CreateObjectBody, tenant: string): number {
    const known = this.knownType(type);
    if (this.views[known]) throw conflicting(`${type} objects belong to the interface that owns them and are made there (or in the fixtures), not with PUT Objects`);
    if (known === SITE_CONFIGURATION) throw conflicting(`the site has one ${SITE_CONFIGURATION} object: change it with POST Objects/${SITE_CONFIGURATION}/<id>`);
    if (body.name === undefined) throw invalid("body: the field 'name' is required");
    if (body.id !== undefined && body.id !== null) throw invalid("body field 'id' is made by the service: leave it out of a create (the answer gives the new id)");
    checkServiceFields(body, undefined, type);
    this.checkNameFree(known, body.name, tenant);
    const now = this.clock.now();
    const object: StoredObject = {
      id: this.nextId,
      type: known,
      name: body.name,
      tenant,
      description: body.description ?? '',
      schemaVersion: body.schemaVersion ?? '1.0',
      attributes: normalise(body.attributes ?? []),
      body: body.body ?? '',
      created: now,
      lastModified: now,
    };
    const references = this.resolve(body.references, tenant);
    if (references.length > 0) object.references = references;
    this.checkRoom(sizeOf(object));
    this.put(object);
    this.nextId++;
    return object.id;
  }

  /** Changes the fields sent; attributes merge by name. */
  update(type: string, id: number, body: UpdateObjectBody, tenant: string): void {
    const known = this.knownType(type);
    const current = this.find(known, id, tenant);
    checkServiceFields(body, this.render(known, current, this.tenantId(tenant), false), `${type} ${id}`);
    const attributes = body.attributes ? normalise(body.attributes) : undefined;
    const view = this.views[known] ? this.viewOf(known, id, tenant) : undefined;
    if (view) {
      if (view.readOnly) throw conflicting(`${type} ${id} cannot be changed through the repository: users and tenants come from the fixtures' log-in users`);
      if (body.name !== undefined && body.name !== view.name) {
        throw conflicting(`the name of ${type} ${id} is its owning interface's ('${view.name}'): it cannot be changed through the repository`);
      }
      for (const a of attributes ?? []) {
        const owned = view.attributes.find((o) => o.name === a.name);
        if (owned && owned.value !== a.value) {
          throw conflicting(`attribute '${a.name}' of ${type} ${id} is its owning interface's ('${owned.value}'): it cannot be changed through the repository`);
        }
      }
    } else if (body.name !== undefined && body.name !== current.name) {
      this.checkNameFree(known, body.name, current.tenant);
    }
    const entry = this.stored.get(known)?.get(id);
    const base: StoredObject = entry?.object ?? (known === SITE_CONFIGURATION ? current : undefined) ?? {
      id,
      type: known,
      name: current.name,
      tenant: view?.tenant ?? tenant,
      description: '',
      schemaVersion: '1.0',
      attributes: [],
      // Empty: the owner's body shows until one is stored.
      body: '',
      created: this.builtAt,
      lastModified: this.builtAt,
    };
    // null or absent: unchanged; a list (empty too) replaces them all.
    const references = body.references ? this.resolve(body.references, view?.tenant ?? current.tenant) : base.references;
    const changed: StoredObject = {
      ...base,
      name: view ? view.name : (body.name ?? base.name),
      description: body.description ?? base.description,
      schemaVersion: body.schemaVersion ?? base.schemaVersion,
      // Of a view, only what is not its owner's is stored here.
      attributes: merge(base.attributes, (attributes ?? []).filter((a) => !view?.attributes.some((o) => o.name === a.name))),
      body: body.body ?? base.body,
      lastModified: this.clock.now(),
    };
    const next = withReferences(changed, references);
    this.checkRoom(sizeOf(next) - (entry ? bytesOf(entry) : 0));
    this.put(next);
  }

  /** Removes an object stored here; one another interface owns is refused, saying why. */
  delete(type: string, id: number, tenant: string): void {
    const known = this.knownType(type);
    this.find(known, id, tenant);
    const view = this.views[known] ? this.viewOf(known, id, tenant) : undefined;
    if (view) {
      const why = view.refuseDelete?.() ?? `${type} objects are removed through the interface that owns them (or the fixtures), not the repository`;
      throw conflicting(`${type} ${id} cannot be deleted: ${why}`);
    }
    if (known === SITE_CONFIGURATION) throw conflicting(`${type} ${id} cannot be deleted: the site always has its configuration`);
    const user = this.referrer(known, id, tenant);
    if (user) {
      throw conflicting(`${type} ${id} cannot be deleted: ${user.type} ${user.id} ('${user.name}') references it; remove the reference first (POST its references without it)`);
    }
    const entries = this.stored.get(known);
    const entry = entries?.get(id);
    if (entries && entry) {
      entries.delete(id);
      this.names.delete(nameKey(entry.object));
      this.bytes -= bytesOf(entry);
      this.storage.add(-bytesOf(entry) - OBJECT_BYTES);
    }
  }

  /** The stored objects in the fixture format, by type then id order of storing. */
  export(): { objects: ObjectSeed[] } {
    return { objects: structuredClone(this.all()) };
  }

  /** Entries are replaced, never changed in place, so a snapshot holds them as they are. */
  snapshot(): { objects: SectionSnapshot } {
    return { objects: { items: this.all() } };
  }

  counts(): { objects: number } {
    let n = 0;
    for (const entries of this.stored.values()) n += entries.size;
    return { objects: n };
  }

  /** Bytes held by stored objects, as JSON. */
  get size(): number {
    return this.bytes;
  }

  private all(): StoredObject[] {
    const out: StoredObject[] = [];
    for (const entries of this.stored.values()) for (const e of entries.values()) out.push(e.object);
    return out;
  }

  private put(object: StoredObject): void {
    let entries = this.stored.get(object.type);
    if (!entries) this.stored.set(object.type, (entries = new Map()));
    const old = entries.get(object.id);
    if (old) this.names.delete(nameKey(old.object));
    this.names.set(nameKey(object), object.id);
    const bytes = sizeOf(object);
    this.bytes += bytes - (old ? bytesOf(old) : 0);
    this.storage.add(bytes - (old ? bytesOf(old) : -OBJECT_BYTES));
    entries.set(object.id, { object, bytes });
  }

  /**
   * The references a body sends, each checked against the objects `tenant` sees: of a known
   * type, named by name or id (both: the same object), and existing. The stored reference has
   * the object's id and name; the slot, embedding and path are kept as sent (null: left out).
   */
  private resolve(given: readonly ReferenceIn[] | null | undefined, tenant: string): Reference[] {
    if (!given) return [];
    return given.map((r, i) => {
      const where = `body: references[${i}]`;
      if (!(OBJECT_TYPES as readonly string[]).includes(r.type)) throw invalid(`${where}: unknown object type '${r.type}': use one of ${OBJECT_TYPES.join(', ')}`);
      const type = r.type as ObjectType;
      const id = r.id === undefined || r.id === null ? undefined : Number(r.id);
      const name = r.name ?? undefined;
      if (id === undefined && name === undefined) throw invalid(`${where}: name the referenced ${type} object by 'name' or 'id'`);
      let found: StoredObject | undefined;
      for (const object of this.visible(type, tenant)) {
        if (id !== undefined ? object.id === id : object.name === name) {
          found = object;
          break;
        }
      }
      if (!found) throw invalid(`${where}: no ${type} object ${id !== undefined ? `with id ${id}` : `named '${name}'`} in tenant '${tenant}'`);
      if (name !== undefined && found.name !== name) throw invalid(`${where}: ${type} ${found.id} is named '${found.name}', not '${name}'`);
      const out: Reference = { id: found.id, type, name: found.name };
      if (typeof r.internalID === 'string') out.internalID = r.internalID;
      if (typeof r.embedded === 'boolean') out.embedded = r.embedded;
      if (typeof r.path === 'string') out.path = r.path;
      return out;
    });
  }

  /** The first object of `tenant` stored here that references `type` `id`, if any. */
  private referrer(type: string, id: number, tenant: string): StoredObject | undefined {
    for (const entries of this.stored.values()) {
      for (const { object } of entries.values()) {
        if (object.tenant === tenant && object.references?.some((r) => r.type === type && r.id === id)) return object;
      }
    }
    return undefined;
  }

  private checkRoom(growth: number): void {
    if (growth > 0 && this.bytes + growth > this.maxBytes) {
      throw full(`the repository holds ${this.bytes} bytes of objects and REPOSITORY_MAX_BYTES is ${this.maxBytes}: delete objects first`);
    }
    this.storage.check(growth > 0 ? growth + OBJECT_BYTES : growth);
  }

  private checkNameFree(type: string, name: string, tenant: string): void {
    const id = this.names.get(nameKey({ type, tenant, name }));
    if (id !== undefined) throw conflicting(`a ${type} named '${name}' already exists (id ${id})`);
  }

  private knownType(type: string): ObjectType {
    if (!(OBJECT_TYPES as readonly string[]).includes(type)) throw missing(`unknown object type '${type}': use one of ${OBJECT_TYPES.join(', ')}`);
    return type as ObjectType;
  }

  private viewOf(type: ObjectType, id: number, tenant: string): ViewObject | undefined {
    for (const v of this.views[type]?.(tenant) ?? []) if (v.id === id) return v;
    return undefined;
  }

  /** The objects of a type that `tenant` sees, views merged with what is stored for them. */
  private *visible(type: ObjectType, tenant: string): Generator<StoredObject & { readOnly?: boolean }> {
    const provider = this.views[type];
    const entries = this.stored.get(type);
    if (!provider) {
      if (type === SITE_CONFIGURATION) {
        // One for the whole site: every tenant sees it; the default until one is stored.
        if (entries && entries.size > 0) yield* [...entries.values()].map((e) => e.object);
        else yield defaultSiteConfiguration(this.builtAt);
        return;
      }
      for (const e of entries?.values() ?? []) if (e.object.tenant === tenant) yield e.object;
      return;
    }
    for (const v of provider(tenant)) {
      if (v.tenant !== undefined && v.tenant !== tenant) continue;
      const extra = entries?.get(v.id)?.object;
      const owned = new Set(v.attributes.map((a) => a.name));
      yield {
        id: v.id,
        type,
        name: v.name,
        tenant: v.tenant ?? tenant,
        description: extra?.description ?? '',
        schemaVersion: extra?.schemaVersion ?? '1.0',
        // What is stored beside a view never overrides the owner's attributes.
        attributes: [...v.attributes.map((a) => ({ ...a })), ...(extra?.attributes.filter((a) => !owned.has(a.name)).map((a) => ({ ...a })) ?? [])],
        body: extra?.body || v.body || '',
        ...(extra?.references ? { references: extra.references } : {}),
        created: extra?.created ?? this.builtAt,
        lastModified: extra?.lastModified ?? this.builtAt,
        readOnly: v.readOnly === true,
      };
    }
  }

  private find(type: ObjectType, id: number, tenant: string): StoredObject & { readOnly?: boolean } {
    if (!this.views[type] && type !== SITE_CONFIGURATION) {
      // Stored objects are found by id directly.
      const object = this.stored.get(type)?.get(id)?.object;
      if (object && object.tenant === tenant) return object;
      throw missing(`no ${type} object with id ${id}`);
    }
    for (const object of this.visible(type, tenant)) if (object.id === id) return object;
    throw missing(`no ${type} object with id ${id}`);
  }

  /** The id of a tenant's `tenant` object, or one derived from its name when it has none. */
  private tenantId(tenant: string): number {
    for (const t of this.views.tenant?.(tenant) ?? this.stored.get('tenant')?.values() ?? []) {
      const object = 'object' in t ? t.object : t;
      if (object.name === tenant) return object.id;
    }
    return (hash32('tenant', tenant) % 0x7fffffff) + 1;
  }

  private render(type: string, object: StoredObject & { readOnly?: boolean }, tenantId: number, details: boolean): RepositoryObject {
    const out: RepositoryObject = {
      id: object.id,
      name: object.name,
      type,
      description: object.description,
      schemaVersion: object.schemaVersion,
      created: new Date(object.created).toISOString(),
      lastModified: new Date(object.lastModified).toISOString(),
      tenantID: tenantId,
      attributes: object.attributes.map((a) => ({ ...a })),
      effectivePermissions: { ...(object.readOnly ? READ_ONLY : FULL) },
      deleted: false,
      hidden: false,
      readOnly: object.readOnly === true,
    };
    if (details) out.body = object.body;
    if (object.references && object.references.length > 0) out.references = object.references.map((r) => ({ ...r }));
    return out;
  }
}
