import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { World } from '../interfaces.js';
import type { Sandboxes } from '../world/sandboxes.js';
import type { StoreOf } from '../http/routing.js';
import { sandboxRoutes } from './sandbox-routes.js';
import { installErrorHandling } from '../http/errors.js';
import { stateRoutes } from './state-routes.js';
import { clockRoutes } from './clock-routes.js';
import { scenarioRoutes } from './scenario-routes.js';
import { alertControlRoutes } from './alert-routes.js';
import { deliveryRoutes } from './delivery-routes.js';
import { faultRoutes } from './fault-routes.js';
import { journalRoutes } from './journal-routes.js';
import { compositionControlRoutes } from './composition-routes.js';
import { incidentControlRoutes } from './incident-routes.js';
import { collectOperations, controlIndexRoutes } from './index-routes.js';
import { eventRoutes } from './event-routes.js';
import { userRoutes } from './user-routes.js';
import { timelineRoutes } from './timeline-routes.js';
import type { TimelinePlayer } from './timeline-player.js';

export { CONTROL_PREFIX } from './hooks.js';

/**
 * The control API under /_emulator: steer the emulator from outside while it runs. The
 * admin-token check, fault injection and the journal are root hooks (hooks.ts), because they
 * must see requests to every interface, not only to these routes.
 */
export interface ControlOptions {
  /** The world of the request: the default one, or the sandbox its path names. */
  world: StoreOf<World>;
  sandboxes: Sandboxes;
  /** Plays the worlds' timelines (the clock's advance plays the steps on its way). */
  player: TimelinePlayer;
}

export const controlRoutes: FastifyPluginAsyncTypebox<ControlOptions> = async (app, { world, sandboxes, player }) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
  // Every body here is JSON; a text body is a mistake worth naming, not a string to parse.
  app.removeContentTypeParser('text/plain');

  // The index lists the operations of the routes registered below, as they are registered.
  const operations = collectOperations(app);
  await app.register(controlIndexRoutes, { operations });
  await app.register(stateRoutes, { world });
  await app.register(clockRoutes, { world, player });
  await app.register(scenarioRoutes, { world });
  await app.register(alertControlRoutes, { world });
  await app.register(deliveryRoutes, { world });
  await app.register(faultRoutes, { world });
  await app.register(journalRoutes, { world });
  await app.register(eventRoutes, { world });
  await app.register(compositionControlRoutes, { world });
  await app.register(incidentControlRoutes, { world });
  await app.register(userRoutes, { world });
  await app.register(timelineRoutes, { world, player });
  await app.register(sandboxRoutes, { sandboxes, world });
};
