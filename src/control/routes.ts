import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../world/world.js';
import { installErrorHandling } from '../http/errors.js';
import { stateRoutes } from './state-routes.js';
import { clockRoutes } from './clock-routes.js';
import { scenarioRoutes } from './scenario-routes.js';
import { alertControlRoutes } from './alert-routes.js';
import { faultRoutes } from './fault-routes.js';
import { journalRoutes } from './journal-routes.js';

export { CONTROL_PREFIX } from './hooks.js';

/**
 * The control API under /_emulator: steer the emulator from outside while it runs. The
 * admin-token check, fault injection and the journal are root hooks (hooks.ts), because they
 * must see requests to every interface, not only to these routes.
 */
export const controlRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator }> = async (app, { emulator }) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
  // Every body here is JSON; a text body is a mistake worth naming, not a string to parse.
  app.removeContentTypeParser('text/plain');

  await app.register(stateRoutes, { emulator });
  await app.register(clockRoutes, { emulator });
  await app.register(scenarioRoutes, { emulator });
  await app.register(alertControlRoutes, { emulator });
  await app.register(faultRoutes, { emulator });
  await app.register(journalRoutes, { emulator });
};
