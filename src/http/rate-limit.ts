import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { durationText, type RateCounters } from '../core/rate-counters.js';
import { ApiError } from './errors.js';

export { RATE_LIMIT_KEYS, RateCounters, durationText, type WindowCount } from '../core/rate-counters.js';

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  /** What is counted, for the 429 message: "token", "alert". */
  per: string;
  /** What a request is counted under (the counters belong to one interface, so no prefix is needed). */
  key: (request: FastifyRequest) => string;
  /**
   * Requests that are not counted at all (say, for an alert that does not exist, which answers
   * 404): the counters remember a bounded number of keys, and a flood of made-up keys must not
   * push out a real one's window and so lift its limit.
   */
  uncounted?: (request: FastifyRequest) => boolean;
  /**
   * The live counters of the request's world: they belong to a store, so a reset or an import
   * starts every window afresh, and each sandbox counts on its own.
   */
  counters: (request: FastifyRequest) => RateCounters;
}

/**
 * Rate limiting for the routes a plugin declares after this call (and only those): a hook on
 * each route counts the request in its world's counters; a 429 carries `Retry-After`, the
 * `x-ratelimit-*` headers and the JSON error body naming the limit and the window; an allowed
 * request carries the headers too.
 *
 * Hand-written rather than @fastify/rate-limit: that plugin's store is asked by key alone, so
 * it cannot reach counters that belong to the request's world (a sandbox's, or the default
 * world's after a reset), and its per-request promises were a measurable share of the cost of
 * a write. The headers and the 429 are the plugin's.
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): void {
  const { max, windowMs, key, uncounted, counters } = options;
  const limit = `${max} request${max === 1 ? '' : 's'} per ${durationText(windowMs)} per ${options.per}`;
  const maxText = String(max);
  const hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (uncounted?.(request)) return done();
    const { current, ttl } = counters(request).hit(key(request), windowMs);
    const resetSeconds = Math.ceil(ttl / 1000);
    // Values as strings: a number would be converted by Node for every answer anyway.
    reply.header('x-ratelimit-limit', maxText);
    reply.header('x-ratelimit-remaining', max > current ? `${max - current}` : '0');
    reply.header('x-ratelimit-reset', `${resetSeconds}`);
    if (current <= max) return done();
    reply.header('retry-after', resetSeconds);
    done(new ApiError(429, `rate limit exceeded: at most ${limit}; retry in ${durationText(resetSeconds * 1000)}`));
  };
  // Route by route, after the route's own onRequest hooks (a 405 answers before it is counted).
  app.addHook('onRoute', (route) => {
    const own = route.onRequest;
    route.onRequest = [...(own === undefined ? [] : Array.isArray(own) ? own : [own]), hook] as typeof route.onRequest;
  });
}
