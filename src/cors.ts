import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

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

/** `'*'` or a comma-separated list of origins, as CORS_ORIGINS gives it. */
export function parseOrigins(setting: string): '*' | string[] {
  const origins = setting.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  return origins.includes('*') || origins.length === 0 ? '*' : origins;
}

/**
 * CORS for a frontend served from another origin. Must be registered before the token
 * guard: a browser's preflight carries no X-Auth-Token, and it is answered in this plugin's
 * onRequest hook before the guard could refuse it.
 */
export async function installCors(app: FastifyInstance, setting: string): Promise<void> {
  await app.register(cors, {
    origin: parseOrigins(setting),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // A bare OPTIONS (no Origin) is not a browser's preflight; answering it 204 beats the
    // plugin's text/plain 400, which would break the rule that every error is JSON.
    strictPreflight: false,
  });
}
