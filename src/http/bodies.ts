import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import './fastify.js';
import { routeTakesBody } from './route-context.js';

/**
 * Keeps a body's text on the request for the journal, which keeps bytes rather than the
 * parsed tree (many times larger). Every body parser that hands over a parsed value calls it.
 */
export function keepJournalText(request: FastifyRequest, text: string): void {
  request.journalText = text;
}

/**
 * How a plugin scope reads request bodies, the way a JAX-RS service does: a resource method
 * without an entity parameter never reads the body, and Jackson reads what it is given.
 */
export interface BodyRules {
  /**
   * Read the body as JSON whatever its Content-Type says, or without one. Otherwise only
   * `application/json` (any parameters, any case) is read, and another type of body that a
   * route reads is refused as an unsupported media type.
   */
  anyContentType: boolean;
}

/** Whether the route handling `request` takes a body at all (GET, DELETE and 404s do not). */
function readsBody(request: FastifyRequest): boolean {
  return routeTakesBody(request);
}

/**
 * Replaces the scope's body parsers. A body sent to a route that takes none (a DELETE from a
 * client that labels every request `application/json`, with or without `{}`) is ignored
 * rather than refused, as the real service never reads it. JSON goes through the same parser
 * as the root, with its proto-poisoning protection.
 */
export function installBodyRules(app: FastifyInstance, rules: BodyRules): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (!readsBody(request)) return done(null, undefined);
    // An empty body is left to the route's schema, which says what it expected.
    if (rules.anyContentType && (body as string).trim() === '') return done(null, undefined);
    keepJournalText(request, body as string);
    parseJson(request, body as string, done);
  });
  // '*' also receives a body sent without any Content-Type.
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (!readsBody(request)) return done(null, undefined);
    // The scope's error handler words this and picks its status (415 or 400).
    if (!rules.anyContentType) return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
    if ((body as string).trim() === '') return done(null, undefined);
    keepJournalText(request, body as string);
    parseJson(request, body as string, done);
  });
}
