import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../world/world.js';
import { ErrorBodySchema } from '../http/errors.js';
import { noContent, parseId, refuseOtherMethods, type StoreOf } from '../http/routing.js';
import { IncidentCreateBodySchema, IncidentSchema } from '../query/schemas.js';

/** Incidents of the Query API's data: "from T1 to T2, page group X is 2.5x slower and errors 10x". */
export const incidentControlRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  const tags = ['Control'];
  /** GET /_emulator/apps: the apps of the Query API, each domain with its app key. */
  app.get(
    '/apps',
    {
      schema: {
        tags,
        operationId: 'listApps', summary: 'The apps of the Query API: each domain with its app key',
        response: {
          200: Type.Array(Type.Object({ domainId: Type.Integer(), name: Type.String(), apiKey: Type.String() }, { additionalProperties: false })),
        },
      },
    },
    async (request) => world(request).stores.query.apps(),
  );

  /** GET /_emulator/incidents: every incident, with absolute times. */
  app.get(
    '/incidents',
    { schema: { tags, operationId: 'listIncidents', summary: "Every incident bending the Query API's numbers", response: { 200: Type.Array(IncidentSchema) } } },
    async (request) => world(request).stores.query.listIncidents(),
  );

  /** POST /_emulator/incidents: add an incident; the domain's numbers change at once, for every range it touches. */
  app.post(
    '/incidents',
    {
      schema: {
        tags,
        operationId: 'addIncident', summary: "Add an incident to a domain's real-user data",
        body: IncidentCreateBodySchema,
        response: { 201: IncidentSchema, 400: ErrorBodySchema, 409: ErrorBodySchema },
      },
    },
    async (request, reply) => reply.code(201).send(world(request).stores.query.createIncident(request.body)),
  );

  /** DELETE /_emulator/incidents/:id: remove an incident; the numbers go back to the model's. */
  app.delete(
    '/incidents/:id',
    {
      schema: {
        tags,
        operationId: 'deleteIncident', summary: 'Remove an incident',
        params: Type.Object({ id: Type.String() }),
        response: { 204: Type.Null(), 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      world(request).stores.query.deleteIncident(parseId(request.params.id, 'incident'));
      return noContent(reply);
    },
  );
  refuseOthers();
};
