import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestMark, RequestStep } from './pipeline.js';

/** Headers a browser script may read on a cross-origin response. */
export const EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'x-request-id',
  'allow',
  'x-emulator-fault',
  'x-emulator-now',
];

/** Request headers a preflight allows when it names none (or names them in a form not taken). */
export const ALLOWED_HEADERS = ['X-Auth-Token', 'Content-Type', 'Authorization', 'X-Request-Id'];

/** Most header names a preflight's Access-Control-Request-Headers may list to be echoed. */
const MAX_REQUESTED_HEADERS = 64;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/**
 * The header names a preflight asks for, when every one is a valid name and there are not too
 * many; undefined otherwise (the fixed list is answered instead). Tracing and monitoring
 * libraries add headers of their own (traceparent, tracestate, baggage, sentry-trace), and a
 * development server allows whatever its page sends: so does the emulator, unless
 * CORS_ALLOW_HEADERS says otherwise.
 */
export function requestedHeaders(value: string | undefined): string | undefined {
  if (value === undefined || value.length > MAX_REQUESTED_HEADERS * 101) return undefined;
  const names = value.split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0 || names.length > MAX_REQUESTED_HEADERS || !names.every((n) => HEADER_NAME.test(n))) return undefined;
  return names.join(', ');
}

/** Methods a preflight allows. */
export const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** How many origins the credentials warning names, one line each, before it falls silent. */
const MAX_WARNED_ORIGINS = 16;

/** Whether the Origin is the server's own (the dashboard's calls): no CORS applies to them. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  return host !== undefined && origin.replace(/^https?:\/\//, '') === host;
}

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
export interface CorsSettings {
  /** CORS_ORIGINS: `'*'` or a comma-separated list. */
  origins: string;
  /** CORS_ALLOW_HEADERS: a fixed list for preflights; absent, the asked-for headers are allowed. */
  allowHeaders?: string;
  /** CORS_CREDENTIALS: Access-Control-Allow-Credentials for listed origins. */
  credentials?: boolean;
}

/**
 * Returns the step of the request pipeline (http/pipeline.ts) that marks answers, and the one
 * that answers preflights, for the caller to run once each request's world is known.
 */
export function installCors(app: FastifyInstance, settings: CorsSettings): { mark: RequestMark; preflights: RequestStep } {
  const origins = parseOrigins(settings.origins);
  const allowed = origins === '*' ? undefined : new Set(origins);
  // loadConfig refuses credentials with '*'; a list is needed to answer them.
  const credentials = Boolean(settings.credentials) && allowed !== undefined;
  const exposed = EXPOSED_HEADERS.join(', ');
  const fixedHeaders = settings.allowHeaders
    ?.split(',')
    .map((h) => h.trim())
    .filter(Boolean)
    .join(', ');
  const preflightHeaders = {
    'access-control-allow-methods': ALLOWED_METHODS.join(', '),
    'access-control-max-age': String(PREFLIGHT_MAX_AGE),
  };

  // Origins already told about (bounded: a page cannot grow it past a handful of lines).
  const warned = new Set<string>();
  const mark = (request: FastifyRequest, reply: FastifyReply): void => {
    if (allowed) reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin !== undefined && (!allowed || allowed.has(origin))) {
      reply.header('access-control-allow-origin', allowed ? origin : '*');
      reply.header('access-control-expose-headers', exposed);
      if (credentials) reply.header('access-control-allow-credentials', 'true');
    }
    // A browser sends cookies on a cross-origin call only in credentials mode ('include'), whose
    // answer it then refuses unless the origin is named and credentials allowed: say so once.
    if (origin !== undefined && request.headers.cookie !== undefined && warned.size < MAX_WARNED_ORIGINS && !warned.has(origin)) {
      const refused = !credentials || !allowed!.has(origin);
      if (refused && !sameOrigin(origin, request.headers.host)) {
        warned.add(origin);
        request.log.warn(
          { origin },
          `a request from ${origin.slice(0, 200)} was sent with credentials (cookies: fetch's credentials: 'include'), and the browser will refuse its answer: ${
            allowed ? (allowed.has(origin) ? 'set CORS_CREDENTIALS=true' : `add the origin to CORS_ORIGINS, and set CORS_CREDENTIALS=true`) : `CORS_ORIGINS is '*': list the origin in CORS_ORIGINS and set CORS_CREDENTIALS=true`
          } (or send the request without credentials)`,
        );
      }
    }
  };

  // A preflight is answered once its world is known (so the journal records it), and before
  // any credential check: a browser's preflight carries none. Whatever the path: a bare
  // OPTIONS (no Origin) is not a browser's preflight, but a 204 beats a 404 or 405 for it.
  const preflights = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.method !== 'OPTIONS') return true;
    const asked = fixedHeaders === undefined ? requestedHeaders(request.headers['access-control-request-headers'] as string | undefined) : undefined;
    if (fixedHeaders === undefined) reply.header('vary', allowed ? 'Origin, Access-Control-Request-Headers' : 'Access-Control-Request-Headers');
    reply
      .code(204)
      .headers(preflightHeaders)
      .header('access-control-allow-headers', fixedHeaders ?? asked ?? ALLOWED_HEADERS.join(', '))
      .header('content-length', '0')
      .send();
    return false;
  };

  // Lets the router accept OPTIONS on every path; the preflight hook has answered it already.
  app.options('*', { schema: { hide: true } as object }, (_request, reply) => {
    reply.code(204).send();
  });
  return { mark, preflights };
}
