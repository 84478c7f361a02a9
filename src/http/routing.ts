import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { badRequest, sendError } from './errors.js';

const METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT'];
/** The order of the methods an Allow header names. */
const ALLOW_ORDER: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Answers 405 with an Allow header for every method `url` does not support (OPTIONS is left
 * to CORS preflight). The answer comes from onRequest, before any body is parsed, so a 405
 * never turns into a content-type error.
 */
export function allowOnly(app: FastifyInstance, url: string, allowed: HTTPMethods[]): void {
  const allow = allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : allowed;
  const others = METHODS.filter((m) => !allow.includes(m));
  const header = allow.join(', ');
  app.route({
    method: others,
    url,
    schema: { hide: true } as object, // kept out of the OpenAPI document
    onRequest: async (request, reply) =>
      sendError(reply, 405, `method ${request.method} is not allowed here; allowed: ${header}`, { allow: header }),
    handler: async () => undefined,
  });
}

/**
 * The 405 answers of a plugin, from its own routes: call at the start of the plugin, and the
 * function it returns at the end, once every route is added. Each path gets a 405 for every
 * method its routes do not serve (see allowOnly), with the methods they do in the Allow
 * header (GET first, DELETE last). Routes added by a plugin registered inside this one, under
 * a prefix of its own, are that plugin's to refuse.
 */
export function refuseOtherMethods(app: FastifyInstance): () => void {
  const served = new Map<string, HTTPMethods[]>();
  let done = false;
  app.addHook('onRoute', (route) => {
    if (done || route.prefix !== app.prefix) return;
    const methods = served.get(route.routePath) ?? [];
    for (const method of [route.method].flat() as HTTPMethods[]) if (method !== 'HEAD' && !methods.includes(method)) methods.push(method);
    served.set(route.routePath, methods);
  });
  return () => {
    done = true;
    for (const [url, methods] of served) allowOnly(app, url, methods.sort((a, b) => ALLOW_ORDER.indexOf(a) - ALLOW_ORDER.indexOf(b)));
  };
}

/** Parses an integer path id; anything else is a 400 naming what was wrong. */
export function parseId(raw: string, what: string): number {
  // 1 to 15 decimal digits, checked a character at a time (every read by id passes here).
  let digits = raw.length > 0 && raw.length <= 15;
  for (let i = 0; digits && i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    digits = c >= 0x30 && c <= 0x39;
  }
  if (!digits) throw badRequest(`${what} id '${raw}' is not an integer`);
  return Number(raw);
}

/**
 * How a route plugin reaches its store: through the request, whose world (the default one or
 * a sandbox's) the app resolved before any route ran. A plugin gets only this getter, never
 * the whole world.
 */
export type StoreOf<T> = (request: FastifyRequest) => T;

/**
 * Answers 204 with no payload at all. `send(null)` would have the null serialised and a
 * Content-Type set, only for Fastify to drop both again because a 204 has no body.
 */
export function noContent(reply: FastifyReply): FastifyReply {
  return reply.code(204).send();
}
