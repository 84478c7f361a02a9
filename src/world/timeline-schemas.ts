import { Type, type Static } from '@sinclair/typebox';
import { LATEST_INSTANT } from '../core/clock.js';

/**
 * A timeline: a demo or a failure drill written once, as requests at emulated offsets from its
 * start, played as the emulated clock passes them and seekable back and forth (docs/timelines.md).
 * Schemas, bounds and the reading of `at` only, so that the state format and the typed client
 * can name them without the player.
 */

/** At most this many steps in one timeline. */
export const MAX_TIMELINE_STEPS = 1000;
/** At most this many bytes of JSON for a whole timeline's steps. */
export const MAX_TIMELINE_BYTES = 1024 * 1024;
/** At most this many bytes of JSON for one step's body. */
export const MAX_STEP_BODY_BYTES = 64 * 1024;
/** At most this many headers on one step's request. */
export const MAX_STEP_HEADERS = 16;

/** The methods a step may use: a step changes something (a read changes nothing worth replaying). */
export const STEP_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A relative offset: `+` and one or more amounts with units, as `+30s`, `+5m`, `+1h30m`, `+250ms`. */
const RELATIVE = /^\+(?:\d{1,9}(?:\.\d{1,3})?(?:ms|s|m|h|d))+$/;
const AMOUNT = /(\d{1,9}(?:\.\d{1,3})?)(ms|s|m|h|d)/g;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Headers a step may not set: the player sets them, or they describe the transport. */
export const RESERVED_STEP_HEADERS = ['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-emulator-client'] as const;

export const StepRequestSchema = Type.Object(
  {
    method: Type.Union(
      STEP_METHODS.map((m) => Type.Literal(m)),
      { description: 'the HTTP method' },
    ),
    path: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^/',
      description: 'the path (and query) in the world the timeline belongs to: an emulated interface or /_emulator; never a sandbox path',
    }),
    body: Type.Optional(
      Type.Unknown({ description: 'the JSON body, sent as application/json; a string "{{at}}" (or "{{at+5m}}", "{{at-1h}}") in it is sent as the step\'s instant, epoch ms' }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+$' }), Type.String({ maxLength: 4096 }), {
        maxProperties: MAX_STEP_HEADERS,
        description: 'request headers (an X-Auth-Token of the seed for an emulated interface); the admin token of a /_emulator path is added by the player',
      }),
    ),
  },
  { additionalProperties: false, description: 'the HTTP request the step makes, as a client would' },
);
export type StepRequest = Static<typeof StepRequestSchema>;

export const TimelineAtSchema = Type.Union(
  [
    Type.String({ minLength: 2, maxLength: 64, description: 'an offset from the start, "+30s", "+5m", "+1h30m", "+250ms" (units ms, s, m, h, d); or an ISO 8601 instant' }),
    Type.Integer({ minimum: 0, maximum: LATEST_INSTANT, description: 'an instant, epoch ms' }),
  ],
  { description: 'when the step happens: an offset from the timeline\'s start ("+30s") or an absolute instant (epoch ms or ISO 8601)' },
);

export const TimelineStepInputSchema = Type.Object(
  {
    at: TimelineAtSchema,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a label for the step, shown by the dashboard' })),
    request: StepRequestSchema,
  },
  { additionalProperties: false },
);
export type TimelineStepInput = Static<typeof TimelineStepInputSchema>;

/** The `timeline` of a fixture file, and the body of PUT /_emulator/timeline. */
export const TimelineSchema = Type.Object(
  {
    steps: Type.Array(TimelineStepInputSchema, { maxItems: MAX_TIMELINE_STEPS, description: `at most ${MAX_TIMELINE_STEPS} steps, in any order (played in the order of their times, steps of one instant in the order given)` }),
  },
  { additionalProperties: false, description: 'a timeline: requests played at emulated offsets from its start (docs/timelines.md); at most one fixture file gives it' },
);
export type TimelineInput = Static<typeof TimelineSchema>;

/**
 * A timeline as a state (an export, the state file, a fixture) holds it: its steps, and, in an
 * export, how far it had gone, so that a world loaded from it goes on where it was and plays
 * no step twice. Each step's `at` is its offset there, which no shift of the state's times moves.
 */
export const TimelineStateSchema = Type.Object(
  {
    ...TimelineSchema.properties,
    elapsedMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: LATEST_INSTANT, description: "emulated ms since the timeline's start (an export's): a world loaded from it goes on from there" }),
    ),
    played: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_TIMELINE_STEPS, description: 'how many of its steps, in the order they are played, were played already (an export\'s): they are not played again' }),
    ),
  },
  { additionalProperties: false, description: TimelineSchema.description },
);
export type TimelineState = Static<typeof TimelineStateSchema>;

/** A step as GET /_emulator/timeline answers it. */
export const TimelineStepSchema = Type.Object(
  {
    at: TimelineAtSchema,
    atMs: Type.Integer({ minimum: 0, description: "the step's offset from the timeline's start, ms" }),
    name: Type.Optional(Type.String()),
    request: StepRequestSchema,
    done: Type.Boolean({ description: 'played (the timeline has passed it)' }),
    status: Type.Optional(Type.Integer({ description: 'the HTTP status its request was answered with, once done' })),
  },
  { additionalProperties: false },
);
export type TimelineStep = Static<typeof TimelineStepSchema>;

export const TimelineViewSchema = Type.Object(
  {
    steps: Type.Array(TimelineStepSchema, { description: 'in the order they are played' }),
    startedAt: Type.Integer({ description: "the timeline's start, emulated epoch ms" }),
    offsetMs: Type.Integer({ description: 'emulated ms since the start (negative only if the clock was set back before it)' }),
    next: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'the index of the next step not yet played, null when all are' }),
    lengthMs: Type.Integer({ minimum: 0, description: 'the offset of the last step, 0 without steps' }),
    recording: Type.Boolean({ description: 'requests that change the world are being added as steps (POST /_emulator/timeline/record)' }),
  },
  { additionalProperties: false },
);
export type TimelineView = Static<typeof TimelineViewSchema>;

/** The offset a relative `at` ("+1m30s") stands for, ms; undefined when it is not one. */
export function relativeMs(at: string): number | undefined {
  if (!RELATIVE.test(at)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of at.matchAll(AMOUNT)) ms += Number(amount) * UNIT_MS[unit];
  return Math.round(ms);
}

/** An offset written as a relative `at`: "+1m30s", "+250ms", "+0s". */
export function formatOffset(ms: number): string {
  let rest = Math.max(0, Math.round(ms));
  if (rest === 0) return '+0s';
  let text = '+';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit];
    const n = Math.floor(rest / size);
    if (n > 0) {
      text += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return text;
}

/**
 * What is wrong with an `at`, given the timeline's start (epoch ms, when known): undefined when
 * it is fine. An absolute instant must not be before the start.
 */
export function atProblem(at: string | number, start: number | undefined): string | undefined {
  const ms = offsetOf(at, start ?? 0);
  if (ms === undefined) return `'${String(at)}' is neither an offset ("+30s", "+5m", "+1h30m", "+250ms") nor an instant (epoch ms or ISO 8601)`;
  if (start !== undefined && ms < 0) return `${new Date(start + ms).toISOString()} is before the timeline's start ${new Date(start).toISOString()}`;
  if (start !== undefined && start + ms > LATEST_INSTANT) return `the step would be after ${new Date(LATEST_INSTANT).toISOString()}`;
  return undefined;
}

/** The offset of an `at` from `start`, ms (negative for an instant before it); undefined when it cannot be read. */
export function offsetOf(at: string | number, start: number): number | undefined {
  if (typeof at === 'number') return at - start;
  if (at.startsWith('+')) return relativeMs(at);
  // An ISO 8601 instant: a date and a time, as Date.parse reads them.
  if (!/^\d{4}-\d{2}-\d{2}T/.test(at)) return undefined;
  const instant = Date.parse(at);
  return Number.isNaN(instant) ? undefined : instant - start;
}

/** A string of a step's body that stands for its instant: `{{at}}`, `{{at+5m}}`, `{{at-1h}}`. */
const INSTANT = /^\{\{at(?:([+-])((?:\d{1,9}(?:ms|s|m|h|d)){1,8}))?\}\}$/;

/**
 * A step's body with every string that names its instant (`{{at}}`, `{{at-5m}}`) replaced by
 * that instant, epoch ms: the times of an annotation or an incident, written once for any
 * start. Walks at most the body's own size (bounded by MAX_STEP_BODY_BYTES).
 */
export function bodyAt(body: unknown, at: number): unknown {
  if (typeof body === 'string') {
    if (!body.startsWith('{{at')) return body;
    const match = INSTANT.exec(body);
    if (!match) return body;
    const delta = match[2] === undefined ? 0 : (relativeMs(`+${match[2]}`) ?? 0);
    return match[1] === '-' ? at - delta : at + delta;
  }
  if (Array.isArray(body)) return body.map((item) => bodyAt(item, at));
  if (body !== null && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, bodyAt(v, at)]));
  return body;
}

/** Paths no step may reach: the timeline itself, what replaces the world, sandboxes, the MCP endpoint. */
const FORBIDDEN_PATHS = ['/_emulator/timeline', '/_emulator/clock/advance', '/_emulator/reset', '/_emulator/state', '/_emulator/sandboxes', '/_emulator/mcp', '/sandbox'];

/** What is wrong with a step's request besides its shape (the schema's); undefined when nothing. */
export function requestProblem(request: StepRequest): { field: string; message: string } | undefined {
  const path = request.path.split(/[?#]/, 1)[0].toLowerCase().replace(/\/{2,}/g, '/');
  for (const forbidden of FORBIDDEN_PATHS) {
    if (path === forbidden || path.startsWith(`${forbidden}/`)) {
      return { field: 'path', message: `a step may not call ${forbidden} (it would replace the world or the timeline, leave it, or move the clock the timeline's own times move)` };
    }
  }
  for (const name of Object.keys(request.headers ?? {})) {
    if ((RESERVED_STEP_HEADERS as readonly string[]).includes(name.toLowerCase())) return { field: `headers.${name}`, message: `the header '${name}' is set by the player` };
  }
  if (request.body !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(request.body) ?? '');
    if (bytes > MAX_STEP_BODY_BYTES) return { field: 'body', message: `a step's body is at most ${MAX_STEP_BODY_BYTES} bytes of JSON (this one ${bytes})` };
  }
  return undefined;
}

/**
 * Every problem of a timeline, each with the JSON pointer of its field below the timeline
 * (`/steps/3/at`). `start`: the timeline's start when known (a PUT), for absolute instants.
 */
export function timelineProblems(timeline: TimelineInput, start: number | undefined): Array<{ pointer: string; message: string }> {
  const problems: Array<{ pointer: string; message: string }> = [];
  timeline.steps.forEach((step, i) => {
    const at = atProblem(step.at, start);
    if (at) problems.push({ pointer: `/steps/${i}/at`, message: at });
    const request = requestProblem(step.request);
    if (request) problems.push({ pointer: `/steps/${i}/request/${request.field.replace('.', '/')}`, message: request.message });
  });
  const bytes = Buffer.byteLength(JSON.stringify(timeline.steps));
  if (bytes > MAX_TIMELINE_BYTES) problems.push({ pointer: '/steps', message: `a timeline is at most ${MAX_TIMELINE_BYTES} bytes of JSON (this one ${bytes})` });
  return problems;
}
