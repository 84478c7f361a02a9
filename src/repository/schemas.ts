import { Type, type Static } from '@sinclair/typebox';
import { literals } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

export const UserSeedSchema = Type.Object(
  {
    userName: Type.String({ minLength: 1, description: 'log-in name, usually an e-mail address' }),
    password: Type.String({ description: 'password for the Tokens log-in call' }),
    apiToken: Type.Optional(Type.String({ minLength: 1, description: 'API token accepted by the Tokens log-in call' })),
    tenant: Type.String({ minLength: 1, default: 'Default', description: 'tenant the user belongs to' }),
    tenants: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: "further tenants the user is in: a log-in's tenant or X-Tenant-Name may pick one" }),
    ),
    fullName: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type UserSeed = Static<typeof UserSeedSchema>;

export const TokenSeedSchema = Type.Object(
  {
    token: Type.String({ minLength: 1, description: 'value of the X-Auth-Token header' }),
    userName: Type.String({ minLength: 1, description: 'the user this session belongs to' }),
    lastUsedAt: Type.Optional(emulatedTime(Type.Integer({ description: 'epoch ms of the last use; absent: the moment the seed is loaded' }))),
    neverExpires: Type.Boolean({ default: false, description: 'exempt from the idle timeout (handy for demo tokens)' }),
    tenant: Type.Optional(Type.String({ minLength: 1, description: "the tenant the session was logged in to; absent: the user's own" })),
  },
  { additionalProperties: false },
);
export type TokenSeed = Static<typeof TokenSeedSchema>;

/** A log-in field: `null` is the same as leaving it out, as clients that serialise every field send it. */
const orNull = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));

export const LogInBodySchema = Type.Object(
  {
    userName: orNull('log-in name'),
    password: orNull('password of userName'),
    apiToken: orNull('API token (instead of userName and password)'),
    tenant: orNull("tenant to log in to; empty, null or absent: the user's own"),
  },
  { additionalProperties: false, description: 'userName and password, or apiToken; tenant optional' },
);
export type LogInBody = Static<typeof LogInBodySchema>;

/** The credentials of a log-in body: a user name and password, or an API token. */
export type Credentials =
  | { userName: string; password: string; tenant?: string }
  | { apiToken: string; tenant?: string };

export const TokenResponseSchema = Type.Object({ token: Type.String() }, { additionalProperties: false });

/** An attribute as the service spells it: values are strings (or null), whatever they mean. */
export const AttributeSchema = Type.Object(
  { name: Type.String({ minLength: 1 }), value: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);
export type Attribute = Static<typeof AttributeSchema>;

/** What the caller may do with an object. */
export const PermissionsSchema = Type.Object(
  { read: Type.Boolean(), write: Type.Boolean(), use: Type.Boolean(), fullControl: Type.Boolean() },
  { additionalProperties: false },
);
export type Permissions = Static<typeof PermissionsSchema>;

/**
 * A reference from one object to another, as the service spells it: the object it names (by
 * type and name, or id), the slot it fills (`internalID`: a domain's boomerang build is its
 * `boomr` reference), whether the referenced object is embedded, and its path.
 */
export const ReferenceSchema = Type.Object(
  {
    internalID: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    id: Type.Integer({ description: 'the referenced object' }),
    embedded: Type.Optional(Type.Boolean()),
    type: Type.String({ minLength: 1, description: 'the referenced object type' }),
    path: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    name: Type.String({ minLength: 1, description: 'the referenced object name' }),
  },
  { additionalProperties: false },
);
export type Reference = Static<typeof ReferenceSchema>;

/** A reference as clients send it: by type and name, or type and id (both: they must agree); ids as numbers or their text, as Jackson reads them. */
export const ReferenceInSchema = Type.Object(
  {
    internalID: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[0-9]{1,15}$' }), Type.Null()])),
    embedded: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    type: Type.String({ minLength: 1 }),
    path: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    name: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ReferenceIn = Static<typeof ReferenceInSchema>;

/** The most references one object holds. */
export const MAX_REFERENCES = 100;

/** A repository object as the Objects calls answer it. */
export const RepositoryObjectSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    type: Type.String(),
    description: Type.String(),
    schemaVersion: Type.String(),
    created: Type.String({ description: 'ISO-8601, UTC' }),
    lastModified: Type.String({ description: 'ISO-8601, UTC' }),
    tenantID: Type.Integer({ description: "id of the tenant object of the object's tenant" }),
    attributes: Type.Array(AttributeSchema),
    body: Type.Optional(Type.String({ description: 'XML; left out of a list with includeDetails=false' })),
    references: Type.Optional(Type.Array(ReferenceSchema, { description: 'the objects this one uses; left out when it uses none' })),
    effectivePermissions: PermissionsSchema,
    deleted: Type.Boolean(),
    hidden: Type.Boolean(),
    readOnly: Type.Boolean(),
  },
  { additionalProperties: false, $id: 'RepositoryObject' },
);
export type RepositoryObject = Static<typeof RepositoryObjectSchema>;

export const ObjectsResponseSchema = Type.Object(
  { objects: Type.Array(RepositoryObjectSchema) },
  { additionalProperties: false },
);

export const ObjectIdResponseSchema = Type.Object({ id: Type.Integer() }, { additionalProperties: false });

/**
 * The object types the Objects calls know. Those another interface owns (grids, domains,
 * alerts, users...) are views of its store; the others are stored here as they are sent.
 */
export const OBJECT_TYPES = [
  'alert',
  'boomerang',
  'clip',
  'composition',
  'dashboard',
  'domain',
  'folder',
  'grid',
  'license',
  'location',
  'result',
  'rsdb',
  'scheduledtask',
  'seeddata',
  'siteconfiguration',
  'statisticalmodel',
  'target',
  'tenant',
  'testenvironment',
  'user',
] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/**
 * A stored object in a fixture or an export. Of a type that another interface owns (a grid,
 * a domain), the entry adds to that interface's object of the same id: its description,
 * body and further attributes; the owning interface keeps its name and its own attributes.
 */
export const ObjectSeedSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    type: literals(OBJECT_TYPES, { description: 'license, boomerang, statisticalmodel, ...' }),
    name: Type.String({ minLength: 1 }),
    tenant: Type.String({ minLength: 1, default: 'Default', description: 'the tenant the object belongs to' }),
    description: Type.String({ default: '' }),
    schemaVersion: Type.String({ default: '1.0' }),
    attributes: Type.Array(AttributeSchema, { default: [] }),
    body: Type.String({ default: '', description: 'XML' }),
    references: Type.Optional(Type.Array(ReferenceSchema, { maxItems: MAX_REFERENCES, description: 'the objects this one uses (each of a stored type, by id and name); absent: none' })),
    created: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms; absent: the moment the seed loads' }))),
    lastModified: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms; absent: created' }))),
  },
  { additionalProperties: false },
);
export type ObjectSeed = Static<typeof ObjectSeedSchema>;

/** An attribute value as clients send it: Jackson reads a number or boolean into a String field as its text. */
const AttributeValueInSchema = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
export const AttributeInSchema = Type.Object(
  { name: Type.String({ minLength: 1 }), value: Type.Optional(AttributeValueInSchema) },
  { additionalProperties: false },
);
export type AttributeIn = Static<typeof AttributeInSchema>;

/**
 * Fields of an object that the service makes, not the caller: a body copied from a GET may
 * carry them, and they are not changed by it.
 */
const readOnlyFields = {
  id: Type.Optional(Type.Unknown()),
  created: Type.Optional(Type.Unknown()),
  lastModified: Type.Optional(Type.Unknown()),
  tenantID: Type.Optional(Type.Unknown()),
  effectivePermissions: Type.Optional(Type.Unknown()),
  deleted: Type.Optional(Type.Unknown()),
  hidden: Type.Optional(Type.Unknown()),
  readOnly: Type.Optional(Type.Unknown()),
  ownerID: Type.Optional(Type.Unknown()),
};

const writableFields = {
  name: Type.Optional(Type.String({ minLength: 1 })),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  schemaVersion: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  attributes: Type.Optional(Type.Union([Type.Array(AttributeInSchema), Type.Null()])),
  body: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  references: Type.Optional(Type.Union([Type.Array(ReferenceInSchema, { maxItems: MAX_REFERENCES }), Type.Null()])),
};

export const CreateObjectBodySchema = Type.Object(
  { type: Type.Optional(Type.String()), ...writableFields, ...readOnlyFields },
  { additionalProperties: false, description: 'type and name required (type may come from the path); description, attributes, body optional' },
);
export type CreateObjectBody = Static<typeof CreateObjectBodySchema>;

export const UpdateObjectBodySchema = Type.Object(
  { type: Type.Optional(Type.String()), ...writableFields, ...readOnlyFields },
  { additionalProperties: false, description: 'the fields to change; attributes merge by name' },
);
export type UpdateObjectBody = Static<typeof UpdateObjectBodySchema>;

/** This interface's sections of the state (world/state.ts composes every interface's). */
export const RepositorySectionsSchema = {
  users: Type.Array(UserSeedSchema, { default: [] }),
  tokens: Type.Array(TokenSeedSchema, { default: [] }),
  objects: Type.Array(ObjectSeedSchema, { default: [] }),
};
