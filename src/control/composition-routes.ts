import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import { CompositionListSchema, InstanceOverviewSchema, NextPlayBodySchema } from './schemas.js';

/** Scenarios of composition runs: how the next play of a composition ends, and how many errors it shows. */
export const compositionControlRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/compositions: the compositions of the fixtures, with their size (the dashboard lists them). */
  app.get(
    '/compositions',
    { schema: { tags: ['Control'], operationId: 'listCompositions', summary: 'List the compositions: full path, duration, virtual users, load servers', response: { 200: CompositionListSchema } } },
    async (request) => world(request).stores.compositions.catalog(),
  );

  /** GET /_emulator/compositions/instances: every instance with its result's counts (what the dashboard polls). */
  app.get(
    '/compositions/instances',
    {
      schema: {
        tags: ['Control'],
        operationId: 'listCompositionInstances', summary: "List every composition instance (as GET a composition answers, less url) with its result's message counts",
        response: { 200: InstanceOverviewSchema },
      },
    },
    async (request) => world(request).stores.compositions.overview(),
  );

  /** PUT /_emulator/compositions/next-play: choose how the next play of a composition ends; used up by that play. */
  app.put(
    '/compositions/next-play',
    {
      schema: {
        tags: ['Control'],
        operationId: 'setNextPlay', summary: 'Choose how the next play of a composition ends (Completed, Failed, Stopped), when, and its error factor',
        body: NextPlayBodySchema,
        response: { 200: NextPlayBodySchema, 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request) => {
      const { compositionName, outcome, ...rest } = request.body;
      world(request).stores.compositions.setNextPlayOutcome(compositionName, outcome === null ? null : { outcome, ...rest });
      return request.body;
    },
  );
  refuseOthers();
};
