import { Type, type Static } from '@sinclair/typebox';

/**
 * The request journal's schemas: what the control API answers and accepts, and what the
 * world's Journal keeps. Here, beside the journal, so that the world needs nothing from the
 * HTTP face.
 */


export const JournalRecordSchema = Type.Object(
  {
    sandbox: Type.Optional(Type.String({ description: 'the sandbox the request was for; absent for the default one' })),
    id: Type.Integer({ description: 'increases by one per recorded request' }),
    time: Type.Integer({ description: 'emulated epoch ms when the request arrived' }),
    method: Type.String(),
    path: Type.String(),
    query: Type.Optional(Type.String({ description: 'the raw query string, without ?' })),
    headers: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
      description: 'request headers, names in lower case; X-Auth-Token, Authentication, Authorization, Proxy-Authorization and Cookie values masked',
    }),
    body: Type.Optional(
      Type.String({
        description: 'the request body as text, as sent; at most JOURNAL_BODY_LIMIT_BYTES, a longer one cut and ended with a marker; the values of password and apiToken fields masked',
      }),
    ),
    bodyCut: Type.Optional(Type.Literal(true, { description: 'the body was longer than JOURNAL_BODY_LIMIT_BYTES and is cut' })),
    bodyDropped: Type.Optional(
      Type.Union([Type.Literal('unmatched'), Type.Literal('budget')], {
        description: 'the request had a body that is not kept: no route matched it (404), or the journal byte budget (JOURNAL_MAX_BYTES) was taken by other worlds',
      }),
    ),
    headersCut: Type.Optional(Type.Literal(true, { description: 'the headers were longer than JOURNAL_HEADER_LIMIT_BYTES: only those that fit are shown' })),
    status: Type.Integer({ description: '0 when the connection was dropped by a fault' }),
    responseSize: Type.Optional(Type.Integer({ description: 'bytes of the response body (absent for a streamed one)' })),
    durationMs: Type.Number({ description: 'real time spent answering' }),
    faulted: Type.Optional(Type.Array(Type.String(), { description: 'ids of the fault rules that acted on it' })),
    origin: Type.Optional(Type.Literal('timeline', { description: "the request was a step of the world's timeline (X-Emulator-Client: timeline; docs/timelines.md)" })),
  },
  { additionalProperties: false },
);
export type JournalRecord = Static<typeof JournalRecordSchema>;

/** The dashboard marks its requests (X-Emulator-Client: dashboard); they are left out unless asked for. */
const IncludeSchema = Type.Literal('dashboard', {
  description: "'dashboard': also the requests the dashboard marked as its own (X-Emulator-Client: dashboard), which are left out otherwise",
});

const StatusFilterSchema = Type.String({ pattern: '^([0-9]{1,3}|[1-5]xx)$', description: 'an exact status (503) or a class (5xx)' });

export const JournalQuerySchema = Type.Object(
  {
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$' })),
    pathPrefix: Type.Optional(Type.String({ minLength: 1 })),
    status: Type.Optional(StatusFilterSchema),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'at most this many, newest first (default 100); a page also ends at 512 KiB of entries' })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'only entries older than this id: the `next` of the previous page' })),
    include: Type.Optional(IncludeSchema),
  },
  { additionalProperties: false },
);
export type JournalQuery = Static<typeof JournalQuerySchema>;

export const JournalListSchema = Type.Object(
  {
    size: Type.Integer({ description: 'capacity (JOURNAL_SIZE); 0 = off' }),
    total: Type.Integer({ description: 'requests recorded since the last clear, including those pushed out' }),
    entries: Type.Array(JournalRecordSchema, { description: 'newest first' }),
    next: Type.Optional(Type.Integer({ description: 'more entries may follow: pass this as `before` for the next page' })),
  },
  { additionalProperties: false },
);

// The caps below are checked by the journal routes rather than by maxLength and
// maxProperties here, whose validation messages would not say what is wrong.

/** Longest path glob of a journal matcher; a real one names a route. */
export const MAX_JOURNAL_GLOB_LENGTH = 256;

/** Most query parameters or headers one matcher may name. */
export const MAX_JOURNAL_MATCHER_NAMES = 32;

export const JournalMatcherSchema = Type.Object(
  {
    method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$', description: 'HTTP method, any case' })),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        description: `glob over the path without the query: * any run of characters (slashes included), ? one; at most ${MAX_JOURNAL_GLOB_LENGTH} characters`,
      }),
    ),
    query: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: `query parameters the request carried, each with exactly this value (decoded); at most ${MAX_JOURNAL_MATCHER_NAMES}`,
      }),
    ),
    header: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: `headers (name in any case) the request carried, each with exactly this value (the value as sent, not masked); at most ${MAX_JOURNAL_MATCHER_NAMES}`,
      }),
    ),
    bodyContains: Type.Optional(Type.String({ minLength: 1, description: 'text the body holds (as the entry shows it)' })),
    bodyJson: Type.Optional(
      Type.Unknown({
        description: 'a JSON value the body matches partially: every field given must be there with a matching value; arrays match element by element',
      }),
    ),
    status: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 999 }), StatusFilterSchema], { description: 'an exact status (503) or a class ("5xx")' })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'only entries older than this id: the `next` of the previous answer' })),
    include: Type.Optional(IncludeSchema),
  },
  { additionalProperties: false },
);
export type JournalMatcher = Static<typeof JournalMatcherSchema>;

export const JournalFindBodySchema = Type.Object(
  {
    ...JournalMatcherSchema.properties,
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'at most this many, newest first' })),
  },
  { additionalProperties: false },
);
export type JournalFindBody = Static<typeof JournalFindBodySchema>;

export const JournalCountSchema = Type.Object(
  {
    count: Type.Integer({ description: 'entries held that match; requests pushed out of the ring are not counted' }),
    next: Type.Optional(Type.Integer({ description: 'the call stopped at its work bound: count the entries older than this id (pass it as `before`) and add' })),
  },
  { additionalProperties: false },
);
export type JournalCount = Static<typeof JournalCountSchema>;

export const JournalFoundSchema = Type.Object(
  {
    entries: Type.Array(JournalRecordSchema, { description: 'matching entries, newest first' }),
    next: Type.Optional(Type.Integer({ description: 'more matching entries may follow: pass this as `before` to go on' })),
  },
  { additionalProperties: false },
);
export type JournalFound = Static<typeof JournalFoundSchema>;

