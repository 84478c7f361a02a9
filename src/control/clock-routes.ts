import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../world/world.js';
import { ErrorBodySchema, badRequest, notFound } from '../http/errors.js';
import { allowOnly } from '../http/routing.js';
import { AdvanceBodySchema, AdvanceResultSchema, ClockSettingsBodySchema, ClockStatusSchema, type AdvanceBody, type ClockStatusBody } from './schemas.js';

export function clockStatus(emulator: Emulator): ClockStatusBody {
  const status = emulator.clock.status();
  const next = emulator.stores.provisioning.nextTransitionAt();
  return { ...status, ...(next !== undefined ? { nextTransitionAt: next } : {}) };
}

/**
 * The latest instant the clock may be moved to: the end of year 9999, far enough below the
 * last instant a JavaScript Date can hold that a running (even sped-up) clock stays showable.
 */
const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The instant an advance body asks for; undefined when there is nothing to wait for. */
function target(emulator: Emulator, body: AdvanceBody, now: number): number | undefined {
  const given = (['ms', 'to', 'until'] as const).filter((k) => body[k] !== undefined);
  if (given.length !== 1) {
    throw badRequest(`body: give exactly one of ms, to or until (got ${given.length ? given.join(', ') : 'none'})`);
  }
  if (body.ms !== undefined) return now + body.ms;
  if (body.until !== undefined) {
    const { kind, id } = body.until;
    const settlesAt = emulator.stores.provisioning.settlesAt(kind, id);
    if (settlesAt === undefined) throw notFound(`body field 'until': no ${kind} ${id}`);
    // null: never started, so there is nothing to wait for.
    return settlesAt ?? undefined;
  }
  const to = body.to!;
  if (to === 'next') return emulator.stores.provisioning.nextTransitionAt();
  const at = typeof to === 'number' ? to : Date.parse(to);
  if (Number.isNaN(at)) throw badRequest(`body field 'to': '${to}' is neither "next", epoch ms nor an ISO 8601 date-time`);
  if (at < now) {
    throw badRequest(`body field 'to': ${new Date(at).toISOString()} is before the emulator's time ${new Date(now).toISOString()}; time never goes backwards`);
  }
  return at;
}

/** Emulated time: read it, move it forward, speed it up, slow it down or stop it. */
export const clockRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app, { emulator }) => {
  /** GET /_emulator/clock: emulated time, scale, frozen, and the next lifecycle transition. */
  app.get(
    '/clock',
    { schema: { tags: ['Control'], summary: 'Read the emulated clock', response: { 200: ClockStatusSchema } } },
    async () => clockStatus(emulator),
  );

  /** PUT /_emulator/clock: change how fast emulated time passes, or freeze it. */
  app.put(
    '/clock',
    {
      schema: {
        tags: ['Control'],
        summary: 'Set the clock scale (1 real time, >1 faster, <1 slower) or freeze it',
        body: ClockSettingsBodySchema,
        response: { 200: ClockStatusSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const { scale, frozen } = request.body;
      if (scale !== undefined) emulator.clock.setScale(scale);
      if (frozen !== undefined) emulator.clock.setFrozen(frozen);
      return clockStatus(emulator);
    },
  );
  allowOnly(app, '/clock', ['GET', 'PUT']);

  /** POST /_emulator/clock/advance: move time forward; every lifecycle follows at once. */
  app.post(
    '/clock/advance',
    {
      schema: {
        tags: ['Control'],
        summary: 'Move time forward: {"ms":N}, {"to":"next"|instant} or {"until":{"kind","id"}} (until that resource settles)',
        body: AdvanceBodySchema,
        response: { 200: AdvanceResultSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const before = emulator.clock.now();
      const at = target(emulator, request.body, before);
      // Near the end of what a Date can hold, time could no longer be shown, and it never goes
      // back: one such call would break every later answer, reset included.
      if (at !== undefined && at > LATEST_INSTANT) {
        throw badRequest(`the clock cannot move past ${new Date(LATEST_INSTANT).toISOString()} (asked for epoch ms ${at})`);
      }
      const advancedMs = at !== undefined && at > before ? at - before : 0;
      if (advancedMs > 0) emulator.clock.advance(advancedMs);
      return { ...clockStatus(emulator), advancedMs };
    },
  );
  allowOnly(app, '/clock/advance', ['POST']);
};
