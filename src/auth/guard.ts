import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Emulator } from '../emulator.js';
import type { Session } from './store.js';
import { sendError } from '../core/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of a valid X-Auth-Token, set by the guard on protected paths. */
    session: Session | null;
  }
}

/**
 * Normalises a request path the way an attacker might vary it (case, percent-encoding,
 * repeated or trailing slashes), so that no spelling of a protected path skips the check.
 */
export function canonicalPath(url: string): string {
  // An absolute-form target (`GET http://host/path HTTP/1.1`, as sent to a proxy) is routed
  // by its path, so it is checked by its path too.
  let path = url.split('?')[0].replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape cannot match a route; the router answers it.
  }
  return path.toLowerCase().replace(/\/{2,}/g, '/').replace(/\/+$/, '');
}

const PROTECTED = [
  '/concerto/services/rest/cloudservice',
  '/concerto/services/rest/repositoryservice/v1/objects',
  '/concerto/mpulse/api/annotations',
];
const ALERTS = '/concerto/mpulse/api/alerts';

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * One hook at the root checks X-Auth-Token for every protected path, before routing, so an
 * unknown path under a protected prefix answers 401 to a caller without a token, not 404.
 */
export function installAuthGuard(app: FastifyInstance, emulator: Emulator): void {
  app.decorateRequest('session', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply) => {
    const path = canonicalPath(request.url);
    const needsToken =
      PROTECTED.some((prefix) => under(path, prefix)) || (emulator.config.alertsRequireToken && under(path, ALERTS));
    if (!needsToken) return;
    const header = request.headers['x-auth-token'];
    const session = emulator.stores.auth.use(typeof header === 'string' ? header : undefined);
    if (!session) {
      const why = header === undefined ? 'the X-Auth-Token header is missing' : 'the security token is invalid or expired';
      return sendError(reply, 401, why);
    }
    request.session = session;
  });
}
