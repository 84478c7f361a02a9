import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Emulator } from '../emulator.js';
import type { Session } from './store.js';
import { sendError } from '../core/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of a valid X-Auth-Token, set by the guard on protected paths. */
    session: Session | null;
    /** canonicalPath(url), worked out once by requestPath(). */
    canonicalPath: string | null;
  }
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i;

/**
 * Normalises a request path the way an attacker might vary it (case, percent-encoding,
 * repeated or trailing slashes), so that no spelling of a protected path skips the check.
 * Each step runs only when the path could need it, since every request comes through here.
 */
export function canonicalPath(url: string): string {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  // An absolute-form target (`GET http://host/path HTTP/1.1`, as sent to a proxy) is routed
  // by its path, so it is checked by its path too.
  if (path.charCodeAt(0) !== SLASH) path = path.replace(ABSOLUTE_FORM, '');
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path);
    } catch {
      // A malformed escape cannot match a route; the router answers it.
    }
  }
  path = path.toLowerCase();
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (path.endsWith('/')) path = path.replace(/\/+$/, '');
  return path;
}
const SLASH = 0x2f;

/** The request's canonical path, worked out once however many hooks ask for it. */
export function requestPath(request: FastifyRequest): string {
  return (request.canonicalPath ??= canonicalPath(request.url));
}

/** A protected tree: the path itself, or anything below it. */
class Tree {
  private readonly below: string;
  constructor(readonly root: string) {
    this.below = `${root}/`;
  }
  holds(path: string): boolean {
    return path === this.root || path.startsWith(this.below);
  }
}

const PROTECTED = [
  '/concerto/services/rest/cloudservice',
  '/concerto/services/rest/repositoryservice/v1/objects',
  '/concerto/mpulse/api/annotations',
].map((root) => new Tree(root));
const ALERTS = new Tree('/concerto/mpulse/api/alerts');

/**
 * One hook at the root checks X-Auth-Token for every protected path, before routing, so an
 * unknown path under a protected prefix answers 401 to a caller without a token, not 404.
 * A callback hook, not an async one: it never waits, and it runs on every request.
 */
export function installAuthGuard(app: FastifyInstance, emulator: Emulator): void {
  app.decorateRequest('session', null);
  app.decorateRequest('canonicalPath', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const path = requestPath(request);
    const needsToken =
      PROTECTED.some((tree) => tree.holds(path)) || (emulator.config.alertsRequireToken && ALERTS.holds(path));
    if (!needsToken) return done();
    const header = request.headers['x-auth-token'];
    const session = emulator.stores.auth.use(typeof header === 'string' ? header : undefined);
    if (!session) {
      const why = header === undefined ? 'the X-Auth-Token header is missing' : 'the security token is invalid or expired';
      sendError(reply, 401, why);
      return;
    }
    request.session = session;
    done();
  });
}
