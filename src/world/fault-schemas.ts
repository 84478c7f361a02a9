import { Type, type Static } from '@sinclair/typebox';
import { MAX_MATCHED_PATH_LENGTH, MAX_PATH_PATTERN_LENGTH } from '../core/path-patterns.js';

/**
 * The fault rules' schemas: what the control API accepts and answers, and what the world's
 * FaultStore keeps. Here, beside the store, so that the world needs nothing from the HTTP face.
 */

/** The longest delay a rule may add: five minutes. */
export const MAX_LATENCY_MS = 300_000;

/**
 * Which requests a rule may strike: `app` (the default) only the emulated interfaces (every
 * path outside the emulator's own: not /_emulator, its health check, dashboard and pages, nor
 * the home page); `all` those too, except the fault routes themselves, so a rule can always
 * be removed.
 */
export const FaultScopeSchema = Type.Union([Type.Literal('app'), Type.Literal('all')], {
  description: "app (default): the emulated interfaces only; all: the emulator's own paths too (/_emulator, its health check, dashboard and pages), except the fault routes",
});
export type FaultScope = Static<typeof FaultScopeSchema>;

/**
 * The methods a rule may name, besides `*`: those the emulator's routes answer. A name not
 * among them (a typo such as PSOT) would match no request, so it is refused, not kept.
 */
export const FAULT_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const FaultIdSchema = Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'letters, digits, _ . -' });

const FaultHeaderSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'header name, any case' }),
    value: Type.Optional(Type.String({ description: 'exact value; absent: the header merely has to be present' })),
  },
  { additionalProperties: false },
);

const ResponseHeadersSchema = Type.Record(Type.String(), Type.String(), { description: 'extra response headers, e.g. Retry-After' });

const LATENCY_MS = Type.Integer({ minimum: 0, maximum: MAX_LATENCY_MS });

/** A fixed delay, or a range from which each fire draws one from the rule's seed. */
const LatencyInputSchema = Type.Union([LATENCY_MS, Type.Object({ min: LATENCY_MS, max: LATENCY_MS }, { additionalProperties: false })], {
  description: `delay the request by this many real ms, then serve it; or {min, max}: a delay drawn for each fire from the rule's seed, min and max included (at most ${MAX_LATENCY_MS})`,
});

export const FaultActionInputSchema = Type.Object(
  {
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 599, description: 'answer this status instead of the route' })),
    body: Type.Optional(Type.Unknown({ description: 'JSON body of the status answer (default: the error body)' })),
    headers: Type.Optional(ResponseHeadersSchema),
    latencyMs: Type.Optional(LatencyInputSchema),
    drop: Type.Optional(Type.Literal(true, { description: 'close the connection without an answer' })),
  },
  { additionalProperties: false, description: 'exactly one of status (with optional body, headers), latencyMs, drop' },
);

export const FaultRuleInputSchema = Type.Object(
  {
    id: Type.Optional(FaultIdSchema),
    method: Type.Optional(Type.String({ pattern: '^([A-Za-z]+|\\*)$', description: 'HTTP method, or * (default) for any' })),
    // The length cap is checked with the pattern rather than by maxLength here, whose
    // validation message would not say what is wrong.
    path: Type.String({
      minLength: 1,
      description: `glob (* any run of characters, ? one) or, starting with ^, a regular expression (JavaScript syntax, run on a linear-time engine: no lookaround or backreferences); at most ${MAX_PATH_PATTERN_LENGTH} characters; matched against the path without the query; a path over ${MAX_MATCHED_PATH_LENGTH} characters matches no rule`,
    }),
    header: Type.Optional(FaultHeaderSchema),
    action: FaultActionInputSchema,
    times: Type.Optional(Type.Integer({ minimum: 1, description: 'fire on the next N matches only' })),
    untilMs: Type.Optional(Type.Integer({ minimum: 1, description: 'fire only for this long after creation (emulated ms)' })),
    probability: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'chance that a match fires (default 1)' })),
    seed: Type.Optional(Type.Integer({ description: 'seed of the rule’s random draws (default: random, reported back)' })),
    scope: Type.Optional(FaultScopeSchema),
  },
  { additionalProperties: false },
);
export type FaultRuleInput = Static<typeof FaultRuleInputSchema>;

export const FaultActionSchema = Type.Union([
  Type.Object({ status: Type.Integer(), body: Type.Optional(Type.Unknown()), headers: Type.Optional(ResponseHeadersSchema) }, { additionalProperties: false }),
  Type.Object(
    { latencyMs: Type.Union([Type.Integer(), Type.Object({ min: Type.Integer(), max: Type.Integer() }, { additionalProperties: false })]) },
    { additionalProperties: false },
  ),
  Type.Object({ drop: Type.Literal(true) }, { additionalProperties: false }),
]);
export type FaultAction = Static<typeof FaultActionSchema>;

export const FaultRuleSchema = Type.Object(
  {
    id: Type.String(),
    method: Type.String(),
    path: Type.String(),
    header: Type.Optional(FaultHeaderSchema),
    action: FaultActionSchema,
    times: Type.Optional(Type.Integer()),
    remaining: Type.Optional(Type.Integer({ description: 'fires left, when limited by times' })),
    untilMs: Type.Optional(Type.Integer()),
    expiresAt: Type.Optional(Type.Integer({ description: 'emulated epoch ms after which the rule no longer fires' })),
    probability: Type.Number(),
    seed: Type.Integer(),
    scope: FaultScopeSchema,
    createdAt: Type.Integer(),
    matched: Type.Integer({ description: 'requests that matched method, path and header' }),
    fired: Type.Integer({ description: 'matches that the rule acted on' }),
    active: Type.Boolean({ description: 'false once used up or expired' }),
  },
  { additionalProperties: false },
);
export type FaultRule = Static<typeof FaultRuleSchema>;

export const FaultIdParamsSchema = Type.Object({ id: Type.String() });

