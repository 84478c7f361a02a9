import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Emulator } from '../emulator.js';
import { installErrorHandling } from '../core/errors.js';

export const CONTROL_PREFIX = '/_emulator';

/** The control API (skeleton: health only; the rest is added by the control API work). */
export const controlRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app, { emulator }) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });

  /** GET /_emulator/health: fixtures are loaded and the server answers. */
  app.get(
    '/health',
    {
      schema: {
        tags: ['Control'],
        summary: 'Liveness and readiness',
        response: { 200: Type.Object({ status: Type.Literal('ok'), now: Type.Integer() }) },
      },
    },
    async () => ({ status: 'ok' as const, now: emulator.clock.now() }),
  );
};
