import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { AlertParamsSchema, AlertSeedSchema } from '../alerts/schemas.js';
import { AlertPatchBodySchema } from './schemas.js';
import { DeliverySchema } from '../alerts/delivery-schemas.js';

/** How many of an alert's deliveries its GET shows, newest first (GET /_emulator/deliveries?alert= pages through all). */
export const ALERT_DELIVERIES_SHOWN = 100;

const AlertWithDeliveriesSchema = Type.Composite([
  AlertSeedSchema,
  Type.Object({ deliveries: Type.Array(DeliverySchema, { description: `its latest ${ALERT_DELIVERIES_SHOWN} deliveries, newest first` }) }),
]);

/** Alerts as the user interface would show them: enabled or not, and everything sent through them. */
export const alertControlRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/alerts: every alert with its state and fire/clear history. */
  app.get(
    '/alerts',
    { schema: { tags: ['Control'], operationId: 'listAlerts', summary: 'Every alert with its state and fire/clear history', response: { 200: Type.Array(AlertSeedSchema) } } },
    async (request) => world(request).stores.alerts.list(),
  );

  /** GET /_emulator/alerts/:uid: one alert, with what each fire carried (message, subject). */
  app.get(
    '/alerts/:uid',
    {
      schema: {
        tags: ['Control'],
        operationId: 'getAlert', summary: 'One alert with its fire/clear history and its latest deliveries',
        params: AlertParamsSchema,
        response: { 200: AlertWithDeliveriesSchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const alerts = world(request).stores.alerts;
      const alert = alerts.get(request.params.uid);
      return { ...alert, deliveries: alerts.outbox.list({ alert: alert.uid, limit: ALERT_DELIVERIES_SHOWN }).deliveries };
    },
  );

  /** PATCH /_emulator/alerts/:uid: enable or disable an alert, as in the user interface. */
  app.patch(
    '/alerts/:uid',
    {
      schema: {
        tags: ['Control'],
        operationId: 'setAlertEnabled', summary: 'Enable or disable an alert (a disabled one answers 409 to fire and clear)',
        params: AlertParamsSchema,
        body: AlertPatchBodySchema,
        response: { 200: AlertSeedSchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request) => world(request).stores.alerts.setEnabled(request.params.uid, request.body.enabled),
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
