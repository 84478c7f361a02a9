import { Type, type Static } from '@sinclair/typebox';
import { literals } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';

/**
 * The outbox: one delivery per enabled channel of an alert for each fire and clear, with what
 * was (or would be) sent, where, and what became of it. A section of the alerts' state, so an
 * export carries it and each sandbox has its own.
 */

/** The kinds of channel an alert notifies. */
export const CHANNEL_TYPES = ['email', 'webhook', 'sms', 'slack', 'pagerduty'] as const;

export const DELIVERY_STATUSES = ['pending', 'sent', 'failed', 'refused', 'stored'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** How many attempts a delivery makes at most (the first and three retries). */
export const DELIVERY_MAX_ATTEMPTS = 4;
/** The emulated wait before each retry, after the attempt that failed: 30 s, 2 min, 8 min. */
export const DELIVERY_RETRY_DELAYS_MS = [30_000, 120_000, 480_000] as const;
/** The longest error text an attempt keeps (longer ones are cut). */
export const DELIVERY_ERROR_MAX_CHARS = 200;

export const DeliveryAttemptSchema = Type.Object(
  {
    at: emulatedTime(Type.Integer({ description: 'emulated epoch ms the attempt was started' })),
    statusCode: Type.Optional(Type.Integer({ description: "the receiver's HTTP status (SMTP: the server's reply code, 250 when accepted)" })),
    error: Type.Optional(Type.String({ maxLength: DELIVERY_ERROR_MAX_CHARS, description: 'why the attempt failed or was refused' })),
  },
  { additionalProperties: false },
);
export type DeliveryAttempt = Static<typeof DeliveryAttemptSchema>;

export const DeliverySchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'increases by one per delivery of the world' }),
    alert: Type.String({ minLength: 1, description: 'the uid of the alert' }),
    action: literals(['fire', 'clear'] as const, { description: 'what the alert did' }),
    channel: literals(CHANNEL_TYPES, { description: "the channel's type" }),
    target: Type.String({ minLength: 1, description: "the channel's target: address, number, URL or routing key" }),
    status: literals(DELIVERY_STATUSES, {
      description: 'pending: an attempt is due or under way; sent; failed: every attempt failed, or one that may not be retried; refused: never sent (not allowed); stored: kept here only (sms, or sending off)',
    }),
    reason: Type.Optional(Type.String({ description: 'stored, refused: why it was not sent' })),
    createdAt: emulatedTime(Type.Integer({ description: 'emulated epoch ms of the fire or clear' })),
    nextAttemptAt: Type.Optional(emulatedTime(Type.Integer({ description: 'pending: emulated epoch ms the next attempt is due' }))),
    payload: Type.Record(Type.String(), Type.Unknown(), { description: "what is sent: the JSON body, or the e-mail's to, subject and text" }),
    attempts: Type.Array(DeliveryAttemptSchema, { maxItems: DELIVERY_MAX_ATTEMPTS, default: [] }),
  },
  { additionalProperties: false },
);
export type Delivery = Static<typeof DeliverySchema>;

/** GET /_emulator/deliveries: filters and a page, as the journal's. */
export const DeliveryQuerySchema = Type.Object(
  {
    alert: Type.Optional(Type.String({ minLength: 1, description: 'only the deliveries of this alert uid' })),
    channel: Type.Optional(literals(CHANNEL_TYPES, { description: 'only this channel type' })),
    status: Type.Optional(literals(DELIVERY_STATUSES, { description: 'only this status' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'at most this many, newest first (default 100)' })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: 'only deliveries older than this id: the `next` of the previous page' })),
  },
  { additionalProperties: false },
);
export type DeliveryQuery = Static<typeof DeliveryQuerySchema>;

export const DeliveryListSchema = Type.Object(
  {
    total: Type.Integer({ description: 'deliveries the outbox holds (all, unfiltered)' }),
    deliveries: Type.Array(DeliverySchema, { description: 'newest first' }),
    next: Type.Optional(Type.Integer({ description: 'more match: ask again with before=next' })),
  },
  { additionalProperties: false },
);
