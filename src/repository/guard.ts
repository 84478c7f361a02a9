import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { StoreOf } from '../http/routing.js';
import type { AuthStore, Session } from './store.js';
import { sendError } from '../http/errors.js';
import { ELSEWHERE, areaOf, areaOfUnmatched, type Area } from '../http/paths.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of a valid X-Auth-Token, set by the guard on protected paths. */
    session: Session | null;
    /** requestArea(request), worked out once however many hooks ask for it. */
    area: Area | null;
  }
}

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;

/**
 * The path of a request target no route matched, in one canonical spelling: cut where the
 * router cuts it (at the first `?` or `#`), the absolute form's scheme and host dropped,
 * percent-escapes decoded, lower case, no repeated or trailing slashes. Undefined when the
 * escapes cannot be decoded: such a target is refused, never guessed at.
 */
export function canonicalPath(url: string): string | undefined {
  let end = url.length;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === QUESTION || c === HASH) {
      end = i;
      break;
    }
  }
  let path = url.slice(0, end);
  if (path.charCodeAt(0) !== SLASH) path = path.replace(ABSOLUTE_FORM, '');
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return undefined;
    }
  }
  path = path.toLowerCase();
  if (path.includes('//')) path = path.replace(/\/{2,}/g, '/');
  if (path.endsWith('/')) path = path.replace(/\/+$/, '');
  return path;
}

/** Areas of the route patterns seen so far: one entry per route, never one per request. */
const routeAreas = new Map<string, Area>();

/**
 * Who may call this request, decided from what the router matched: the pattern of the route
 * that will handle it, spelled as the route was registered. However the target was spelled
 * (escapes, fragments, dot segments, slashes), the route that runs is the route whose rule
 * applies. Only a request no route matched is judged by its canonical path, and it reaches
 * no handler either way; one whose path cannot be decoded is undefined (refused with 400).
 */
export function requestArea(request: FastifyRequest): Area | undefined {
  if (request.area) return request.area;
  const pattern = request.is404 ? undefined : request.routeOptions.url;
  let area: Area | undefined;
  if (pattern !== undefined) {
    area = routeAreas.get(pattern);
    if (!area) routeAreas.set(pattern, (area = areaOf(pattern)));
  } else {
    const path = canonicalPath(request.url);
    area = path === undefined ? undefined : areaOfUnmatched(path);
  }
  if (area) request.area = area;
  return area;
}

/** Answers 400 for a target whose path cannot be decoded; true when it did. */
export function refuseUndecodable(request: FastifyRequest, reply: FastifyReply): boolean {
  if (requestArea(request)) return false;
  sendError(reply, 400, 'the URL is not valid: malformed percent-encoding');
  return true;
}

/**
 * One hook at the root checks X-Auth-Token for every protected route, so an unknown path
 * under a protected prefix answers 401 to a caller without a token, not 404.
 * A callback hook, not an async one: it never waits, and it runs on every request.
 */
export interface GuardOptions {
  /** The users and sessions of the request's world. */
  auth: StoreOf<AuthStore>;
  alertsRequireToken: boolean;
}

/** The first of `names` the request carries (an area that takes the token under more than one name). */
function tokenHeader(request: FastifyRequest, names: readonly string[]): string | string[] | undefined {
  for (const name of names) {
    const value = request.headers[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

export function installAuthGuard(app: FastifyInstance, { auth, alertsRequireToken }: GuardOptions): void {
  app.decorateRequest('session', null);
  app.decorateRequest('area', null);
  // Fail closed: a route outside every declared area would be open to anyone, so it is a
  // mistake caught when the route is added, not a hole found later.
  app.addHook('onRoute', (route) => {
    if (areaOf(route.url) === ELSEWHERE) throw new Error(`route ${route.url} lies in no area of http/paths.ts: declare who may call it`);
  });
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (refuseUndecodable(request, reply)) return;
    const { access } = requestArea(request) as Area;
    const needsToken = access === 'token' || (access === 'alert' && alertsRequireToken);
    if (!needsToken) return done();
    const area = requestArea(request) as Area;
    const header = area.tokenHeaders ? tokenHeader(request, area.tokenHeaders) : request.headers['x-auth-token'];
    const session = auth(request).use(typeof header === 'string' ? header : undefined);
    if (!session) {
      const why =
        header !== undefined
          ? 'the security token is invalid or expired'
          : area.tokenHeaders
            ? 'the Authentication header is missing: send the security token in Authentication or X-Auth-Token'
            : 'the X-Auth-Token header is missing';
      sendError(reply, 401, why);
      return;
    }
    request.session = session;
    done();
  });
}
