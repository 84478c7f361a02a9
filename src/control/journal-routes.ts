import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { World } from '../interfaces.js';
import type { StoreOf } from '../http/routing.js';
import { ErrorBodySchema, badRequest } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';
import {
  JournalCountSchema,
  JournalFindBodySchema,
  JournalFoundSchema,
  JournalListSchema,
  JournalMatcherSchema,
  JournalQuerySchema,
  MAX_JOURNAL_GLOB_LENGTH,
  MAX_JOURNAL_MATCHER_NAMES,
  type JournalMatcher,
} from './schemas.js';

/** The caps that bound a search's work, each refused with a message naming it. */
function checkBounds(matcher: JournalMatcher): void {
  if (matcher.path !== undefined && matcher.path.length > MAX_JOURNAL_GLOB_LENGTH) {
    throw badRequest(`body field 'path': longer than ${MAX_JOURNAL_GLOB_LENGTH} characters`);
  }
  for (const field of ['query', 'header'] as const) {
    const names = matcher[field] === undefined ? 0 : Object.keys(matcher[field]).length;
    if (names > MAX_JOURNAL_MATCHER_NAMES) throw badRequest(`body field '${field}': ${names} names, at most ${MAX_JOURNAL_MATCHER_NAMES}`);
  }
}

/** Runs a journal search; a matcher it cannot use throws an `invalid` DomainError (a 400). */
function searching<T>(matcher: JournalMatcher, search: () => T): T {
  checkBounds(matcher);
  return search();
}

/** The request journal: what the system under test sent, and what it got back. */
export const journalRoutes: FastifyPluginAsyncTypebox<{ world: StoreOf<World> }> = async (app, { world }) => {
  const refuseOthers = refuseOtherMethods(app);
  /** GET /_emulator/journal: recorded requests, newest first, optionally filtered. */
  app.get(
    '/journal',
    {
      schema: {
        tags: ['Control'],
        operationId: 'listJournal', summary: 'Recent requests, newest first, a page at a time (limit, before); filter by method, pathPrefix, status (503 or 5xx)',
        querystring: JournalQuerySchema,
        response: { 200: JournalListSchema },
      },
    },
    async (request) => {
      const { journal } = world(request);
      const { items, next } = journal.list(request.query);
      return { size: journal.size, total: journal.total, entries: items, ...(next !== undefined ? { next } : {}) };
    },
  );

  /** DELETE /_emulator/journal: forget every recorded request. */
  app.delete(
    '/journal',
    { schema: { tags: ['Control'], operationId: 'clearJournal', summary: 'Clear the journal', response: { 204: Type.Null() } } },
    async (request, reply) => {
      world(request).journal.clear();
      return reply.code(204).send(null);
    },
  );

  /** POST /_emulator/journal/count: how many requests held match, for a test to assert on. */
  app.post(
    '/journal/count',
    {
      schema: {
        tags: ['Control'],
        operationId: 'countRequests', summary: 'Count the requests held that match (method, path glob, query, header, bodyContains, bodyJson, status)',
        body: JournalMatcherSchema,
        response: { 200: JournalCountSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const { before, ...matcher } = request.body;
      const { items, next } = searching(matcher, () => world(request).journal.count(matcher, before));
      return { count: items, ...(next !== undefined ? { next } : {}) };
    },
  );

  /** POST /_emulator/journal/find: the matching requests themselves, newest first. */
  app.post(
    '/journal/find',
    {
      schema: {
        tags: ['Control'],
        operationId: 'findRequests', summary: 'The requests held that match, newest first, with headers and bodies',
        body: JournalFindBodySchema,
        response: { 200: JournalFoundSchema, 400: ErrorBodySchema },
      },
    },
    async (request) => {
      const { limit, before, ...matcher } = request.body;
      const { items, next } = searching(matcher, () => world(request).journal.find(matcher, limit, before));
      return { entries: items, ...(next !== undefined ? { next } : {}) };
    },
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};
