import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../emulator.js';
import { installErrorHandling } from '../core/errors.js';

export const PROVISIONING_PREFIX = '/concerto/services/rest/CloudService/v1';

/** The provisioning interface (skeleton: routes are added by the provisioning work). */
export const provisioningRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
};
