import type { FastifyRequest } from 'fastify';
import fastifySymbols from 'fastify/lib/symbols.js';

/**
 * What a request's hooks read of the route that matched it, without `request.routeOptions`:
 * that getter builds a new object of twelve fields (and asks the router about version
 * constraints) on every call, and the hooks every request passes read the route's pattern
 * two or three times. Fastify keeps the route's context on the request under its own symbol;
 * its `config` holds the route's `url` (the pattern as registered) and its `config` options,
 * its `schema` the route's schemas.
 */
interface RouteContext {
  config?: { url?: string; faultExempt?: boolean };
  schema?: { body?: unknown };
}

const ROUTE_CONTEXT: symbol = (fastifySymbols as { kRouteContext: symbol }).kRouteContext;
// Checked once at load: a Fastify without it would leave every request without its route,
// so the server refuses to start rather than judge requests by nothing.
if (typeof ROUTE_CONTEXT !== 'symbol') throw new Error('this version of Fastify keeps no route context on its requests (kRouteContext)');

function contextOf(request: FastifyRequest): RouteContext | undefined {
  return (request as unknown as Record<symbol, RouteContext | undefined>)[ROUTE_CONTEXT];
}

/** The pattern of the route that matched, as registered; undefined when none did (a 404). */
export function routePattern(request: FastifyRequest): string | undefined {
  return contextOf(request)?.config?.url;
}

/** The route's `config.faultExempt`. */
export function routeFaultExempt(request: FastifyRequest): boolean {
  return contextOf(request)?.config?.faultExempt === true;
}

/** Whether the route that matched declares a body schema (takes a body at all). */
export function routeTakesBody(request: FastifyRequest): boolean {
  return contextOf(request)?.schema?.body !== undefined;
}
