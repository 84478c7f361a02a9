import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../emulator.js';
import { installErrorHandling } from '../core/errors.js';

export const ANNOTATIONS_PREFIX = '/concerto/mpulse/api/annotations/v1';

/** The annotation interface (skeleton: routes are added by the annotations work). */
export const annotationRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app) => {
  installErrorHandling(app, { unsupportedMediaType: 415 });
};
