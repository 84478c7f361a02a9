import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { LATEST_INSTANT } from '../core/clock.js';
import { ErrorBodySchema, badRequest } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { TimelineSchema, TimelineViewSchema, relativeMs, type TimelineView } from '../world/timeline-schemas.js';
import type { TimelinePlayer } from './timeline-player.js';

const SeekBodySchema = Type.Object(
  {
    to: Type.Union([Type.String({ minLength: 2, maxLength: 64, description: 'an offset from the start: "+4m", "+1h30m", "+0s"' }), Type.Integer({ minimum: 0, description: 'an offset from the start, ms' })], {
      description: "where to: an offset from the timeline's start, at least 0; past the last step is allowed (the world after it, the clock at the offset)",
    }),
  },
  { additionalProperties: false },
);

const RecordBodySchema = Type.Object(
  { on: Type.Boolean({ description: 'true: from now on, every request that changes the world is added as a step; false: stop' }) },
  { additionalProperties: false },
);

const TimelineFixtureSchema = Type.Object(
  { timeline: TimelineSchema },
  { additionalProperties: false, description: 'a fixture file holding the timeline: save it into the fixture folder' },
);

/** What GET /_emulator/timeline answers. */
function viewOf(world: World): TimelineView {
  return world.timeline.view(world.clock.now());
}

/**
 * Timelines (docs/timelines.md): read, set, seek and record the world's timeline. The steps
 * due by now were played before any of these handlers runs (timeline-player.ts, a root hook).
 */
export const timelineRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World>; player: TimelinePlayer }> = async (app, { world, player }) => {
  // No fault rule strikes these, whatever its scope: a seek must always bring the world back.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, faultExempt: true };
  });
  const refuseOthers = refuseOtherMethods(app);

  /** GET /_emulator/timeline: the steps, which are played, and where the timeline is. */
  app.get(
    '/timeline',
    {
      schema: {
        tags: ['Control'],
        operationId: 'getTimeline',
        summary: "Read the world's timeline: its steps (each done or not), the offset reached, the next step, whether it records",
        response: { 200: TimelineViewSchema },
      },
    },
    async (request) => viewOf(world(request)),
  );

  /** PUT /_emulator/timeline: replaces the timeline; it starts now. */
  app.put(
    '/timeline',
    {
      schema: {
        tags: ['Control'],
        operationId: 'setTimeline',
        summary: 'Replace the timeline with these steps (requests at offsets like "+30s", or instants); it starts at the current emulated time',
        body: TimelineSchema,
        response: { 200: TimelineViewSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const w = world(request);
      // Checked whole before anything changes: a refused timeline leaves the one there was.
      w.timeline.replace(request.body, w.clock.now());
      // A step at +0s is due at once.
      await player.catchUp(w);
      return viewOf(w);
    },
  );

  /** GET /_emulator/timeline/fixture: the steps as a fixture file. */
  app.get(
    '/timeline/fixture',
    {
      schema: {
        tags: ['Control'],
        operationId: 'exportTimeline',
        summary: 'The timeline as a fixture file ({"timeline":{"steps":[...]}}), to save into a fixture folder (a recorded rehearsal, say)',
        response: { 200: TimelineFixtureSchema },
      },
    },
    async (request) => ({ timeline: world(request).timeline.toInput() }),
  );

  /** POST /_emulator/timeline/seek: the world as playing the timeline to that offset makes it. */
  app.post(
    '/timeline/seek',
    {
      schema: {
        tags: ['Control'],
        operationId: 'seekTimeline',
        summary: 'Seek the timeline, forwards or backwards: the world rebuilt from the seed at its start and its steps replayed up to the offset',
        body: SeekBodySchema,
        response: { 200: TimelineViewSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const w = world(request);
      const { to } = request.body;
      const offset = typeof to === 'number' ? to : relativeMs(to);
      if (offset === undefined) throw badRequest(`body field 'to': '${String(to)}' is not an offset ("+4m", "+1h30m", "+250ms") nor ms`);
      if (w.timeline.startedAt + offset > LATEST_INSTANT) {
        throw badRequest(`body field 'to': the timeline's start plus ${offset} ms is past ${new Date(LATEST_INSTANT).toISOString()}`);
      }
      await player.seek(w, offset);
      return viewOf(w);
    },
  );

  /** POST /_emulator/timeline/record: turns recording on or off. */
  app.post(
    '/timeline/record',
    {
      schema: {
        tags: ['Control'],
        operationId: 'recordTimeline',
        summary: 'Record ({"on":true}) or stop ({"on":false}): while on, each request that changes the world becomes a step at its offset',
        body: RecordBodySchema,
        response: { 200: TimelineViewSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const w = world(request);
      w.timeline.setRecording(request.body.on, w.clock.now());
      return viewOf(w);
    },
  );
  refuseOthers();
};
