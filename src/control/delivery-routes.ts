import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { DeliveryListSchema, DeliveryQuerySchema } from '../alerts/delivery-schemas.js';

/** The outbox: what each fire and clear sent, or would have, to the alerts' channels. */
export const deliveryRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/deliveries: the outbox, newest first, a page at a time, filtered. */
  app.get(
    '/deliveries',
    {
      schema: {
        tags: ['Control'],
        operationId: 'listDeliveries', summary: 'Alert deliveries, newest first, a page at a time (limit, before); filter by alert, channel, status',
        querystring: DeliveryQuerySchema,
        response: { 200: DeliveryListSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => world(request).stores.alerts.deliveries(request.query),
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
