import { Type, type Static } from '@sinclair/typebox';
import { literals, noBody } from '../core/schema.js';
import { emulatedTime } from '../core/time-shift.js';
import { AlertRuleSchema, RuleStatusSchema } from './rule-schemas.js';
import { CHANNEL_TYPES, DeliverySchema, type Delivery } from './delivery-schemas.js';

/** How many fire and clear events each alert remembers; older ones are dropped first. */
export const ALERT_HISTORY_LIMIT = 1000;

export { CHANNEL_TYPES };

export const AlertChannelSchema = Type.Object(
  {
    type: literals(CHANNEL_TYPES, { description: 'kind of notification; subject applies to email only' }),
    target: Type.String({ minLength: 1, description: 'address, number or URL notified (pagerduty: a routing key, or a URL)' }),
    enabled: Type.Optional(Type.Boolean({ description: 'false: fires and clears make no delivery to it; absent: enabled' })),
    secret: Type.Optional(Type.String({ minLength: 1, description: 'webhook: signs each body, HMAC-SHA256, in X-Emulator-Signature' })),
  },
  { additionalProperties: false },
);
export type AlertChannel = Static<typeof AlertChannelSchema>;

export const AlertEventSchema = Type.Object(
  {
    action: literals(['fire', 'clear'] as const),
    at: emulatedTime(Type.Integer({ description: 'UTC epoch ms, emulated time' })),
    message: Type.Optional(Type.String({ description: 'fire: the message sent' })),
    subject: Type.Optional(Type.String({ description: 'fire: the subject sent (e-mail channels)' })),
    by: Type.Optional(Type.Literal('rule', { description: "recorded by the alert's threshold rule; absent: by a call" })),
    value: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: "by a rule: the value of the minute that made the change, in the rule's unit" })),
  },
  { additionalProperties: false },
);
export type AlertEvent = Static<typeof AlertEventSchema>;

/**
 * An alert configured for external invocation. The first fields are its configuration; the
 * rest is its run-time state, which an export writes so that an import resumes it.
 */
export const AlertSeedSchema = Type.Object(
  {
    uid: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9._~-]+$', description: 'opaque id used in the webhook path' }),
    name: Type.String({ minLength: 1 }),
    enabled: Type.Boolean({ default: true, description: 'fire and clear of a disabled alert answer 409' }),
    message: Type.Optional(Type.String({ description: "default message; absent: \"<name> is firing\"" })),
    subject: Type.Optional(Type.String({ description: 'default e-mail subject; absent: the name' })),
    channels: Type.Array(AlertChannelSchema, { default: [] }),
    state: literals(['cleared', 'firing'] as const, { default: 'cleared' }),
    lastTriggered: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms of the last fire' }))),
    lastCleared: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms of the last clear' }))),
    lastUpdated: Type.Optional(emulatedTime(Type.Integer({ description: 'UTC epoch ms of the last configuration change (enable, disable)' }))),
    history: Type.Array(AlertEventSchema, { default: [], maxItems: ALERT_HISTORY_LIMIT, description: 'fire and clear events, oldest first' }),
    rule: Type.Optional(AlertRuleSchema),
    ruleStatus: Type.Optional(RuleStatusSchema),
  },
  { additionalProperties: false },
);
export type AlertSeed = Static<typeof AlertSeedSchema>;
/** An alert with its state, as the control API shows it. */
export type Alert = AlertSeed;

export const AlertParamsSchema = Type.Object({ uid: Type.String({ description: 'alert uid' }) });

const FireContentSchema = Type.Object(
  {
    message: Type.Optional(Type.String({ description: "absent: the alert's default message" })),
    subject: Type.Optional(Type.String({ description: "e-mail subject; absent: the alert's default subject" })),
  },
  { additionalProperties: false },
);
export type FireContent = Static<typeof FireContentSchema>;

/** No body (null here) sends the alert's default content. */
export const FireBodySchema = Type.Union([FireContentSchema, Type.Null()], {
  description: 'optional; fields left out take the alert\'s defaults',
});
export type FireBody = Static<typeof FireBodySchema>;

/** Clear takes no body; an empty object is tolerated. */
export const ClearBodySchema = noBody('none');

/** This interface's section of the state (world/state.ts composes every interface's). */
export const AlertSectionsSchema = {
  alerts: Type.Array(AlertSeedSchema, { default: [] }),
  deliveries: Type.Array(DeliverySchema, { default: [], description: 'the outbox: what fires and clears sent, or would have, to the channels' }),
};
export type AlertSections = { alerts: AlertSeed[]; deliveries?: Delivery[] };
