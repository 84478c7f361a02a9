import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { LATEST_INSTANT } from '../core/clock.js';
import { ErrorBodySchema, badRequest, notFound } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import type { TimelinePlayer } from './timeline-player.js';
import { AdvanceBodySchema, AdvanceResultSchema, ClockSettingsBodySchema, ClockStatusSchema, type AdvanceBody, type ClockStatusBody } from './schemas.js';

export function clockStatus(world: World): ClockStatusBody {
  const status = world.clock.status();
  const next = world.nextTransitionAt();
  return { ...status, ...(next !== undefined ? { nextTransitionAt: next } : {}) };
}

/** The instant an advance body asks for; undefined when there is nothing to wait for. */
function target(world: World, body: AdvanceBody, now: number): number | undefined {
  const given = (['ms', 'to', 'until'] as const).filter((k) => body[k] !== undefined);
  if (given.length !== 1) {
    throw badRequest(`body: give exactly one of ms, to or until (got ${given.length ? given.join(', ') : 'none'})`);
  }
  if (body.ms !== undefined) return now + body.ms;
  if (body.until !== undefined) {
    const { kind, id } = body.until;
    // A composition instance goes by its instanceID, a text; every other kind by an integer id.
    if (kind !== 'compositionInstance' && typeof id !== 'number') throw badRequest(`body field 'until': the id of a ${kind} is an integer`);
    const settlesAt = world.settlesAt(kind, id);
    if (settlesAt === undefined) throw notFound(`body field 'until': no ${kind === 'compositionInstance' ? 'composition instance' : kind} ${typeof id === 'string' ? `'${id}'` : id}`);
    // null: never started, so there is nothing to wait for.
    return settlesAt ?? undefined;
  }
  const to = body.to!;
  if (to === 'next') return world.nextTransitionAt();
  const at = typeof to === 'number' ? to : Date.parse(to);
  if (Number.isNaN(at)) throw badRequest(`body field 'to': '${to}' is neither "next", epoch ms nor an ISO 8601 date-time`);
  if (at < now) {
    throw badRequest(`body field 'to': ${new Date(at).toISOString()} is before the emulator's time ${new Date(now).toISOString()}; time never goes backwards`);
  }
  return at;
}

/** Emulated time: read it, move it forward, speed it up, slow it down or stop it. */
export const clockRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World>; player: TimelinePlayer }> = async (app, { world, player }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/clock: emulated time, scale, frozen, and the next lifecycle transition. */
  app.get(
    '/clock',
    { schema: { tags: ['Control'], operationId: 'getClock', summary: 'Read the emulated clock', response: { 200: ClockStatusSchema } } },
    async (request) => clockStatus(world(request)),
  );

  /** PUT /_emulator/clock: change how fast emulated time passes, or freeze it. */
  app.put(
    '/clock',
    {
      schema: {
        tags: ['Control'],
        operationId: 'setClock', summary: 'Set the clock scale (1 real time, >1 faster, <1 slower) or freeze it',
        body: ClockSettingsBodySchema,
        response: { 200: ClockStatusSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const { scale, frozen } = request.body;
      if (scale !== undefined) world(request).clock.setScale(scale);
      if (frozen !== undefined) world(request).clock.setFrozen(frozen);
      return clockStatus(world(request));
    },
  );

  /** POST /_emulator/clock/advance: move time forward; every lifecycle follows at once. */
  app.post(
    '/clock/advance',
    {
      schema: {
        tags: ['Control'],
        operationId: 'advanceClock', summary: 'Move time forward: {"ms":N}, {"to":"next"|instant} or {"until":{"kind","id"}} (until that resource settles)',
        body: AdvanceBodySchema,
        response: { 200: AdvanceResultSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const before = world(request).clock.now();
      const at = target(world(request), request.body, before);
      // Near the end of what a Date can hold, time could no longer be shown, and it never goes
      // back: one such call would break every later answer, reset included.
      if (at !== undefined && at > LATEST_INSTANT) {
        throw badRequest(`the clock cannot move past ${new Date(LATEST_INSTANT).toISOString()} (asked for epoch ms ${at})`);
      }
      const advancedMs = at !== undefined && at > before ? at - before : 0;
      // The timeline's steps on the way are played each at its own instant.
      if (advancedMs > 0) await player.playTo(world(request), before + advancedMs);
      return { ...clockStatus(world(request)), advancedMs };
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
