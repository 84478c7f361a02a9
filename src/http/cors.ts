import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** Headers a browser script may read on a cross-origin response. */
export const EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'allow',
];

/** Request headers a cross-origin caller may send (the preflight's answer). */
export const ALLOWED_HEADERS = ['X-Auth-Token', 'Content-Type', 'Authorization', 'X-Request-Id'];

/** Methods a preflight allows. */
export const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** How long a browser may cache a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

/** `'*'` or a comma-separated list of origins, as CORS_ORIGINS gives it. */
export function parseOrigins(setting: string): '*' | string[] {
  const origins = setting.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  return origins.includes('*') || origins.length === 0 ? '*' : origins;
}

/**
 * CORS for a frontend served from another origin, in one callback hook on every request.
 * Must be installed before the token guard: a browser's preflight carries no X-Auth-Token,
 * and it is answered here before the guard could refuse it.
 *
 * The CORS headers go on responses to requests that carry an Origin header: a browser sends
 * one on every cross-origin request (and on every preflight), so a request without one is
 * not a browser's cross-origin call and has no use for them. With a list of origins, every
 * response says `Vary: Origin`, so that a cache never hands one origin's answer to another.
 */
export function installCors(app: FastifyInstance, setting: string): void {
  const origins = parseOrigins(setting);
  const allowed = origins === '*' ? undefined : new Set(origins);
  const exposed = EXPOSED_HEADERS.join(', ');
  const preflightHeaders = {
    'access-control-allow-methods': ALLOWED_METHODS.join(', '),
    'access-control-allow-headers': ALLOWED_HEADERS.join(', '),
    'access-control-max-age': String(PREFLIGHT_MAX_AGE),
  };

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const origin = request.headers.origin;
    if (allowed) reply.header('vary', 'Origin');
    if (origin !== undefined && (!allowed || allowed.has(origin))) {
      reply.header('access-control-allow-origin', allowed ? origin : '*');
      reply.header('access-control-expose-headers', exposed);
    }
    if (request.method !== 'OPTIONS') return done();
    // A preflight, answered here whatever the path. A bare OPTIONS (no Origin) is not a
    // browser's preflight, but a 204 beats a 404 or 405 for it: nothing is there to refuse.
    reply.code(204).headers(preflightHeaders).header('content-length', '0').send();
  });

  // Lets the router accept OPTIONS on every path; the hook above has answered it already.
  app.options('*', { schema: { hide: true } as object }, (_request, reply) => {
    reply.code(204).send();
  });
}
