import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../emulator.js';
import { installErrorHandling } from '../core/errors.js';

export const ALERTS_PREFIX = '/concerto/mpulse/api/alerts';

/** The alert interface (skeleton: routes are added by the alerts work). */
export const alertRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
};
