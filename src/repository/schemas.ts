import { Type, type Static } from '@sinclair/typebox';

export const UserSeedSchema = Type.Object(
  {
    userName: Type.String({ minLength: 1, description: 'log-in name, usually an e-mail address' }),
    password: Type.String({ description: 'password for the Tokens log-in call' }),
    apiToken: Type.Optional(Type.String({ minLength: 1, description: 'API token accepted by the Tokens log-in call' })),
    tenant: Type.String({ minLength: 1, default: 'Default', description: 'tenant the user belongs to' }),
    fullName: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type UserSeed = Static<typeof UserSeedSchema>;

export const TokenSeedSchema = Type.Object(
  {
    token: Type.String({ minLength: 1, description: 'value of the X-Auth-Token header' }),
    userName: Type.String({ minLength: 1, description: 'the user this session belongs to' }),
    lastUsedAt: Type.Optional(Type.Integer({ description: 'epoch ms of the last use; absent: the moment the seed is loaded' })),
    neverExpires: Type.Boolean({ default: false, description: 'exempt from the idle timeout (handy for demo tokens)' }),
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

export const RepositoryObjectSchema = Type.Object(
  { id: Type.Integer(), name: Type.String(), type: Type.String() },
  { additionalProperties: false },
);
export const ObjectsResponseSchema = Type.Object(
  { objects: Type.Array(RepositoryObjectSchema) },
  { additionalProperties: false },
);
export type RepositoryObject = Static<typeof RepositoryObjectSchema>;

/** This interface's sections of the state (world/state.ts composes every interface's). */
export const RepositorySectionsSchema = {
  users: Type.Array(UserSeedSchema, { default: [] }),
  tokens: Type.Array(TokenSeedSchema, { default: [] }),
};
