import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../world/world.js';
import type { StoreOf } from '../http/routing.js';
import { allowOnly } from '../http/routing.js';
import { JournalListSchema, JournalQuerySchema } from './schemas.js';

/** The request journal: what the system under test sent, and what it got back. */
export const journalRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  /** GET /_emulator/journal: recorded requests, newest first, optionally filtered. */
  app.get(
    '/journal',
    {
      schema: {
        tags: ['Control'],
        summary: 'Recent requests, newest first; filter by method, pathPrefix, status (503 or 5xx), limit',
        querystring: JournalQuerySchema,
        response: { 200: JournalListSchema },
      },
    },
    async (request) => {
      const { journal } = world(request);
      return { size: journal.size, total: journal.total, entries: journal.list(request.query) };
    },
  );

  /** DELETE /_emulator/journal: forget every recorded request. */
  app.delete(
    '/journal',
    { schema: { tags: ['Control'], summary: 'Clear the journal', response: { 204: Type.Null() } } },
    async (request, reply) => {
      world(request).journal.clear();
      return reply.code(204).send(null);
    },
  );
  allowOnly(app, '/journal', ['GET', 'DELETE']);
};
