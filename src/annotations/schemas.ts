import { Type, type Static } from '@sinclair/typebox';
import { integerOrDigits, repeatable } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

/** Latest instant a JavaScript Date can hold; later "times" cannot be real. */
const MAX_EPOCH_MS = 8_640_000_000_000_000;

/** The ranges of the numbers a request body may also spell as strings of digits. */
export const TIME_RANGE = { minimum: 0, maximum: MAX_EPOCH_MS };
export const DOMAIN_ID_RANGE = { minimum: 1 };

const fields = {
  id: Type.Integer({ minimum: 1, description: 'annotation id' }),
  title: Type.String({ description: 'short title' }),
  text: Type.String({ description: 'description' }),
  start: Type.Integer({ minimum: 0, maximum: MAX_EPOCH_MS, description: 'UTC epoch milliseconds' }),
  end: Type.Integer({ minimum: 0, maximum: MAX_EPOCH_MS, description: 'UTC epoch milliseconds; only for annotations with a range' }),
  domainId: Type.Integer({ minimum: 1, description: 'domain id' }),
  lastModified: Type.Integer({ description: 'UTC epoch milliseconds of the last create or update' }),
  source: Type.String({ description: '"REST API" for annotations made through this interface' }),
  type: Type.String({ description: '"USER_ENTERED" for annotations made through this interface' }),
  user: Type.String({ description: 'identity of the creating user' }),
};

export const DomainSeedSchema = Type.Object(
  {
    id: fields.domainId,
    name: Type.String({ minLength: 1, description: 'domain name, e.g. www.example.com' }),
    apiKey: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9-]{1,64}$',
        description: "the domain's app key (the Query API's <api-key>, the repository object's apiKey attribute); absent: derived from the id",
      }),
    ),
    tenant: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'the tenant that owns the domain: only its sessions read its app data (Query API) and its repository object; absent: Default',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DomainSeed = Static<typeof DomainSeedSchema>;

/** A domain's app key (core/app-keys.ts): the one its seed gives, else one derived from its id. */
export { domainApiKey } from '../core/app-keys.js';

/**
 * An annotation in a fixture. Times are absolute (`start`, `end`) or relative to the moment
 * the seed loads (`startAgoMs`, `endAgoMs`), so a demo seed stays in "the last 30 days"
 * however old the file is. An export writes a relative time relative to its clock again.
 */
export const AnnotationSeedSchema = Type.Object(
  {
    id: fields.id,
    title: fields.title,
    text: fields.text,
    start: Type.Optional(fields.start),
    startAgoMs: Type.Optional(
      Type.Integer({ minimum: -MAX_EPOCH_MS, maximum: MAX_EPOCH_MS, description: 'start = the time the seed loads minus this many ms (instead of start; negative: after the load)' }),
    ),
    end: Type.Optional(fields.end),
    endAgoMs: Type.Optional(
      Type.Integer({ minimum: -MAX_EPOCH_MS, maximum: MAX_EPOCH_MS, description: 'end = the time the seed loads minus this many ms (instead of end; negative: after the load)' }),
    ),
    domainIds: Type.Array(fields.domainId, { default: [], description: 'ids from the domains catalogue; empty: tenant-wide' }),
    lastModified: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms; absent: the moment the seed loads' }))),
    source: Type.String({ default: 'REST API' }),
    type: Type.String({ default: 'USER_ENTERED', description: 'USER_ENTERED, MP_SYSTEM_EVENT, MP_ALERT, DIMENSION_EXPLOSION, ...' }),
    user: fields.user,
  },
  {
    additionalProperties: false,
    // For editors: exactly one form of start, at most one of end. The store checks it too.
    // `type` on each sub-schema keeps Ajv's strict mode quiet when the schema is compiled.
    oneOf: [{ type: 'object', required: ['start'] }, { type: 'object', required: ['startAgoMs'] }],
    not: { type: 'object', required: ['end', 'endAgoMs'] },
  },
);
export type AnnotationSeed = Static<typeof AnnotationSeedSchema>;

/** An annotation as the interface answers it (section 2.5). */
export const AnnotationSchema = Type.Object(
  {
    id: fields.id,
    title: fields.title,
    text: fields.text,
    start: fields.start,
    end: Type.Optional(fields.end),
    domains: Type.Array(Type.Object({ id: fields.domainId, name: Type.String() }, { additionalProperties: false }), {
      description: 'the attached domains; empty for a tenant-wide annotation',
    }),
    lastModified: fields.lastModified,
    source: fields.source,
    type: fields.type,
    user: fields.user,
  },
  { additionalProperties: false },
);
export type Annotation = Static<typeof AnnotationSchema>;

/**
 * Request bodies take each number as a JSON integer or as a string of its decimal digits
 * (`"start": "1631282415000"`), as the real service's JSON reader does; the routes turn the
 * strings into numbers before the store sees them. Responses always carry integers.
 */
const bodyFields = {
  start: integerOrDigits({ ...TIME_RANGE, description: 'UTC epoch milliseconds' }),
  end: integerOrDigits({ ...TIME_RANGE, description: 'UTC epoch milliseconds; only for annotations with a range' }),
  domainId: integerOrDigits({ ...DOMAIN_ID_RANGE, description: 'domain id' }),
};

const DomainIdsSchema = Type.Union([bodyFields.domainId, Type.Array(bodyFields.domainId)], {
  description: 'one domain id, or an array of them',
});

export const AnnotationCreateBodySchema = Type.Object(
  {
    title: fields.title,
    start: bodyFields.start,
    text: fields.text,
    end: Type.Optional(bodyFields.end),
    domainIds: Type.Optional(DomainIdsSchema),
  },
  { additionalProperties: false },
);
/** A create body as sent: numbers may still be strings of digits. */
export type AnnotationCreateBody = Static<typeof AnnotationCreateBodySchema>;

export const AnnotationUpdateBodySchema = Type.Object(
  {
    title: Type.Optional(fields.title),
    start: Type.Optional(bodyFields.start),
    text: Type.Optional(fields.text),
    end: Type.Optional(Type.Union([bodyFields.end, Type.Null()], { description: 'a time, or null to remove the range' })),
    domainIds: Type.Optional(DomainIdsSchema),
  },
  { additionalProperties: false, description: 'any subset of the create fields' },
);
/** An update body as sent: numbers may still be strings of digits. */
export type AnnotationUpdateBody = Static<typeof AnnotationUpdateBodySchema>;

/** A create as the store takes it: every number a number, domains as a list. */
export interface AnnotationCreate {
  title: string;
  start: number;
  text: string;
  end?: number;
  domainIds?: number[];
}

/** An update as the store takes it; `end: null` removes the range. */
export interface AnnotationUpdate {
  title?: string;
  start?: number;
  text?: string;
  end?: number | null;
  domainIds?: number[];
}

export const AnnotationIdSchema = Type.Object({ id: fields.id }, { additionalProperties: false });

/** Path ids arrive as text and are parsed by the route, so "abc" gets a message of its own. */
export const AnnotationParamsSchema = Type.Object({ id: Type.String({ description: 'annotation id (integer)' }) });

/** Unknown parameters are ignored, as the real service ignores them. */
export const AnnotationListQuerySchema = Type.Object({
  'date-start': Type.Optional(repeatable({ description: 'UTC epoch ms; keeps annotations with start >= this (repeated: the first counts)' })),
  'date-end': Type.Optional(repeatable({ description: 'UTC epoch ms; keeps annotations with start <= this (repeated: the first counts)' })),
  domain: Type.Optional(
    repeatable({
      description: 'domain id, or a comma-separated list, or repeated; keeps annotations on any of them plus tenant-wide ones',
    }),
  ),
});
export type AnnotationListQuery = Static<typeof AnnotationListQuerySchema>;

export const AnnotationListSchema = Type.Array(AnnotationSchema, { description: 'ascending start, then id' });
export const AnnotationListWrappedSchema = Type.Object(
  { annotations: AnnotationListSchema },
  { additionalProperties: false, description: 'the real service\'s shape (ANNOTATIONS_LIST_WRAPPED=true)' },
);

/** This interface's sections of the state (world/state.ts composes every interface's). */
export const AnnotationSectionsSchema = {
  domains: Type.Array(DomainSeedSchema, { default: [] }),
  annotations: Type.Array(AnnotationSeedSchema, { default: [] }),
};
export type AnnotationSections = { domains: DomainSeed[]; annotations: AnnotationSeed[] };
