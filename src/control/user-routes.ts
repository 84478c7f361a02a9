import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { refuseOtherMethods } from '../http/routing.js';
import { MAX_LISTED_USERS, SignInListSchema } from './schemas.js';

/**
 * GET /_emulator/users: whom a client can sign in as in this world, for the dashboard (a seed
 * without the demo user) and for tests. Behind the admin token like every control call.
 */
export const userRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  app.get(
    '/users',
    {
      schema: {
        tags: ['Control'],
        operationId: 'listUsers', summary: "The users the Tokens log-in call knows (with their passwords), and the seed's tokens that never expire",
        response: { 200: SignInListSchema },
      },
    },
    async (request) => {
      const current = world(request);
      const users = current.stores.repository.auth.exportUsers();
      const tokens = current.seedState.tokens.filter((t) => t.neverExpires);
      return {
        users: users
          .slice(0, MAX_LISTED_USERS)
          .map(({ userName, password, tenant, fullName }) => ({ userName, password, tenant, ...(fullName !== undefined ? { fullName } : {}) })),
        tokens: tokens.slice(0, MAX_LISTED_USERS).map(({ token, userName }) => ({ token, userName })),
        unlisted: { users: Math.max(0, users.length - MAX_LISTED_USERS), tokens: Math.max(0, tokens.length - MAX_LISTED_USERS) },
      };
    },
  );
  refuseOthers();
};
