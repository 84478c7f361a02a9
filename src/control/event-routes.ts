import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { unavailable } from '../core/errors.js';
import { ErrorBodySchema, badRequest } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { EVENT_KINDS, EVENT_TYPES, MISSED_TYPE, type EventKind, type EventType } from '../world/event-types.js';
import { frameOf } from '../world/events.js';
import { EventStream, replayWithin, type EventFilter } from '../world/events-stream.js';

/** The longest list a filter takes, and the longest resource id in it. */
export const MAX_EVENT_FILTER_ITEMS = 100;
const MAX_ID_LENGTH = 200;

export const EventQuerySchema = Type.Object(
  {
    kind: Type.Optional(Type.String({ maxLength: 1000, description: `comma-separated kinds: ${EVENT_KINDS.join(', ')}` })),
    id: Type.Optional(Type.String({ maxLength: 4000, description: 'comma-separated resource ids (with kind: of those kinds)' })),
    types: Type.Optional(Type.String({ maxLength: 1000, description: `comma-separated event types: ${EVENT_TYPES.join(', ')}` })),
    lastEventId: Type.Optional(Type.String({ maxLength: 20, description: 'resume after this event id (as the Last-Event-ID header)' })),
  },
  { additionalProperties: false },
);
type EventQuery = Static<typeof EventQuerySchema>;

/** A comma list of a query parameter, each item checked against `allowed` when given. */
function listOf<T extends string>(name: string, raw: string | undefined, allowed?: readonly T[]): Set<T> | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',', MAX_EVENT_FILTER_ITEMS + 1).map((s) => s.trim());
  if (items.length > MAX_EVENT_FILTER_ITEMS) throw badRequest(`query '${name}': more than ${MAX_EVENT_FILTER_ITEMS} items`);
  for (const item of items) {
    if (item === '') throw badRequest(`query '${name}': an empty item`);
    if (allowed && !(allowed as readonly string[]).includes(item)) {
      throw badRequest(`query '${name}': unknown ${name === 'kind' ? 'kind' : 'event type'} '${item.slice(0, 80)}'; use ${allowed.join(', ')}`);
    }
    if (item.length > MAX_ID_LENGTH) throw badRequest(`query '${name}': an item longer than ${MAX_ID_LENGTH} characters`);
  }
  return new Set(items as T[]);
}

/** The event id to resume after, from Last-Event-ID or ?lastEventId=; undefined for a fresh stream. */
function resumeFrom(header: string | string[] | undefined, query: string | undefined): number | undefined {
  const raw = query ?? (Array.isArray(header) ? header[0] : header);
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw badRequest(`Last-Event-ID '${raw.slice(0, 40)}' is not an event id (a whole number)`);
  return Number(raw);
}

function filterOf(query: EventQuery): EventFilter {
  const kinds = listOf<EventKind>('kind', query.kind, EVENT_KINDS);
  const types = listOf<EventType>('types', query.types, EVENT_TYPES);
  const ids = listOf<string>('id', query.id);
  return { ...(kinds ? { kinds } : {}), ...(types ? { types } : {}), ...(ids ? { ids } : {}) };
}

/**
 * GET /_emulator/events: the world's changes as Server-Sent Events (see docs/control-api.md).
 * The answer is written by hand (the reply is hijacked), so every open stream is counted here
 * and ended when the app closes.
 */
export const eventRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  const open = new Set<EventStream>();
  /** Of those, the streams of sandboxes: they may not take the last EVENTS_RESERVED_STREAMS of the total. */
  let inSandboxes = 0;
  app.addHook('preClose', (done) => {
    for (const stream of [...open]) stream.end();
    done();
  });

  /** 503 when one more stream would be past a bound: of the world, of all worlds, of the sandboxes together. */
  const refuseWhenFull = (w: World, sandbox: boolean): void => {
    const { eventsMaxStreams, eventsMaxStreamsTotal, eventsReservedStreams } = w.config;
    if (w.events.listeners >= eventsMaxStreams) throw unavailable(`${w.events.listeners} event streams are open on this world and EVENTS_MAX_STREAMS is ${eventsMaxStreams}; close some or raise it`);
    if (open.size >= eventsMaxStreamsTotal) throw unavailable(`${open.size} event streams are open and EVENTS_MAX_STREAMS_TOTAL is ${eventsMaxStreamsTotal}; close some or raise it`);
    // Sandboxes, which anyone may make without ADMIN_TOKEN, never take the default world's last streams.
    const forSandboxes = Math.max(0, eventsMaxStreamsTotal - eventsReservedStreams);
    if (sandbox && inSandboxes >= forSandboxes) {
      throw unavailable(
        `${inSandboxes} event streams are open on sandboxes, and EVENTS_MAX_STREAMS_TOTAL (${eventsMaxStreamsTotal}) less EVENTS_RESERVED_STREAMS (${eventsReservedStreams}), kept for the default world, is ${forSandboxes}; close some or raise them`,
      );
    }
  };

  /** GET /_emulator/events: a stream of the world's changes, filtered, resumable. */
  app.get(
    '/events',
    {
      // Before preHandler, where a sandbox made by this request would be registered: a stream refused as one too many makes none.
      preValidation: (request, _reply, done) => {
        try {
          refuseWhenFull(world(request), request.sandbox !== null);
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      schema: {
        tags: ['Control'],
        operationId: 'streamEvents', summary: 'Server-Sent Events of the world: lifecycle transitions, annotations, alerts, objects, resets, the clock, fault rules, sandboxes',
        querystring: EventQuerySchema,
        response: {
          200: { description: 'text/event-stream: `id`, `event` and one JSON `data` line per event; heartbeats as comments', content: { 'text/event-stream': { schema: Type.String() } } },
          400: ErrorBodySchema,
          503: ErrorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const w = world(request);
      const filter = filterOf(request.query);
      const from = resumeFrom(request.headers['last-event-id'], request.query.lastEventId);
      const { eventsClientMaxBytes, eventsHeartbeatMs } = w.config;
      const sandbox = request.sandbox !== null;
      // Checked again: a stream may have opened since (the world is the same, only registered since).
      refuseWhenFull(w, sandbox);

      // A HEAD asks only whether the stream would open: it gets the headers, and no stream.
      if (request.method === 'HEAD') return reply.code(200).type('text/event-stream; charset=utf-8').send('');
      const raw = reply.raw;
      reply.hijack();
      raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string | number | string[]>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
        // A stream's connection is not used again: once it ends, the socket goes (app.close() waits for none).
        connection: 'close',
      });
      // Flushes the headers, so a client knows at once that the stream is open.
      raw.write(`: events of ${w.name === undefined ? 'the default world' : `sandbox ${w.name}`}, last id ${w.events.lastId}\n\n`);
      // Ended, the stream lets its connection go at once: the socket is not kept for another request.
      const out = {
        write: (chunk: string | Buffer) => raw.write(chunk),
        get writableLength() {
          return raw.writableLength;
        },
        end: () => {
          raw.once('finish', () => raw.socket?.destroy());
          raw.end();
        },
        destroy: () => raw.destroy(),
        cork: () => raw.cork(),
        uncork: () => raw.uncork(),
      };
      const stream = new EventStream(out, filter, eventsClientMaxBytes, () => {
        if (open.delete(stream) && sandbox) inSandboxes--;
        w.events.unsubscribe(stream);
      });
      open.add(stream);
      if (sandbox) inSandboxes++;
      raw.on('close', () => stream.closed());
      // The server keeps a half-closed connection open (app.ts): a client that ends its side is gone.
      const socket = request.raw.socket;
      if (socket?.readableEnded) queueMicrotask(() => stream.end());
      else socket?.once('end', () => stream.end());
      const { missed, replay } = w.events.subscribe(stream, from);
      // A replay takes at most half of what the client may hold, leaving the rest for what happens while it reads.
      const resumed = replayWithin(replay, Math.floor(eventsClientMaxBytes / 2));
      if (missed || resumed.cut) stream.send(frameOf(undefined, MISSED_TYPE, { type: MISSED_TYPE, at: w.clock.now(), lastId: w.events.lastId }));
      for (const event of resumed.events) stream.send(event.frame);
      stream.beat(eventsHeartbeatMs, () => String(w.clock.now()));
    },
  );
  refuseOthers();
};
