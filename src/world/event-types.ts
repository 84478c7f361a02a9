/**
 * What the event stream (GET /_emulator/events) sends: the kinds and types of its events, and
 * an event's `data`. Types and constants only, for the world that writes the events
 * (world/events.ts), the route that sends them and the typed client that reads them.
 */

/** What an event is about, as the stream names it. */
export const EVENT_KINDS = ['grid', 'server', 'rsdb', 'environment', 'instance', 'annotation', 'alert', 'delivery', 'fault', 'sandbox', 'object', 'timeline'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const EVENT_TYPES = [
  'transition',
  'annotation.created',
  'annotation.updated',
  'annotation.deleted',
  'alert.fired',
  'alert.cleared',
  'alert.enabled',
  'alert.disabled',
  'delivery.sent',
  'delivery.failed',
  'object.created',
  'object.updated',
  'object.deleted',
  'world.reset',
  'world.imported',
  'world.reloaded',
  'clock.changed',
  'fault.added',
  'fault.removed',
  'sandbox.created',
  'sandbox.deleted',
  'seed.refused',
  'timeline.step',
  'timeline.seek',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Sent first (with no id: it is not one of the world's events) to a client that resumes from
 * an event the buffer no longer holds, or across a time nothing listened: it missed events,
 * and should read the state again.
 */
export const MISSED_TYPE = 'stream.reset';

/** An event's `data`, as the stream sends it (and the typed client yields it). */
export interface WorldEventData {
  /** Increasing per world from 1; absent on a `stream.reset`. */
  id?: number;
  type: EventType | typeof MISSED_TYPE;
  /** Emulated time, epoch ms. */
  at: number;
  kind?: EventKind;
  resourceId?: string | number;
  state?: string;
  view?: unknown;
  /** clock.changed: the clock's scale. */
  rate?: number;
  frozen?: boolean;
  /** stream.reset: the id of the last event of the world. */
  lastId?: number;
  /** alert.fired, alert.cleared: the fire or clear recorded (the alert's `view` has no history). */
  entry?: unknown;
  /** The event's frame would have been over EVENT_VIEW_MAX_BYTES: `view` and `entry` are left out; read the resource. */
  viewOmitted?: boolean;
  [field: string]: unknown;
}
