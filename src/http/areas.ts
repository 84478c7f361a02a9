import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import './fastify.js';
import { sendError } from './errors.js';
import { routePattern } from './route-context.js';
import { ELSEWHERE, type Area, type AreaTable } from './paths.js';

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

/**
 * Works out each request's area before any other hook runs, and refuses to add a route that
 * lies in no area. Who may call a request is decided from what the router matched: the
 * pattern of the route that will handle it, spelled as the route was registered. However the
 * target was spelled (escapes, fragments, dot segments, slashes), the route that runs is the
 * route whose rule applies. Only a request no route matched is judged by its canonical path,
 * and it reaches no handler either way; one whose path cannot be decoded has none (and is
 * refused with 400 by refuseUndecodable).
 * Returns the step of the request pipeline (http/pipeline.ts) that sets it; it never answers.
 */
export function installAreas(app: FastifyInstance, table: AreaTable): (request: FastifyRequest) => void {
  app.decorateRequest('area', null);
  // Fail closed: a route outside every declared area would be open to anyone, so it is a
  // mistake caught when the route is added, not a hole found later.
  app.addHook('onRoute', (route) => {
    if (table.of(route.url) === ELSEWHERE) throw new Error(`route ${route.url} lies in no area of http/paths.ts or of its interface: declare who may call it`);
  });
  /** Areas of the route patterns seen so far: one entry per route, never one per request. */
  const routeAreas = new Map<string, Area>();
  return (request: FastifyRequest): void => {
    // The catch-all OPTIONS route answers preflights for every path: they are judged, like an
    // unmatched request, by the path they are for (so the journal leaves the control API's alone).
    const url = routePattern(request);
    const pattern = url === '*' ? undefined : url;
    if (pattern !== undefined) {
      let area = routeAreas.get(pattern);
      if (!area) routeAreas.set(pattern, (area = table.of(pattern)));
      request.area = area;
    } else {
      const path = canonicalPath(request.url);
      request.area = path === undefined ? null : table.ofUnmatched(path);
    }
  };
}

/** Who may call this request (see installAreas); undefined when its path cannot be decoded. */
export function requestArea(request: FastifyRequest): Area | undefined {
  return request.area ?? undefined;
}

/** Answers 400 for a target whose path cannot be decoded; true when it did. */
export function refuseUndecodable(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.area) return false;
  sendError(reply, 400, 'the URL is not valid: malformed percent-encoding');
  return true;
}
