import { createHash, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Emulator } from '../emulator.js';
import { canonicalPath } from '../auth/guard.js';
import { sendError } from '../core/errors.js';
import { DOCS_PATH, OPENAPI_PATH } from '../openapi.js';
import { UI_PREFIX } from '../ui/plugin.js';

export const CONTROL_PREFIX = '/_emulator';
const CONTROL = CONTROL_PREFIX.toLowerCase();
/** Polled by container health checks, so it must answer without credentials. */
const OPEN_CONTROL_PATHS = new Set([`${CONTROL}/health`, OPENAPI_PATH.toLowerCase()]);
/**
 * Static pages, open too: a browser cannot add a Bearer header to a page load, and they hold
 * no state. The dashboard asks for the admin token itself and sends it on its API calls.
 */
const OPEN_CONTROL_TREES = [UI_PREFIX, DOCS_PATH].map((p) => p.toLowerCase());

declare module 'fastify' {
  interface FastifyRequest {
    /** Emulated time when the request arrived (for the journal). */
    arrivedAt: number;
    /** Ids of the fault rules that acted on this request. */
    faultRuleIds: string[] | null;
  }
}

function isControlPath(path: string): boolean {
  return path === CONTROL || path.startsWith(`${CONTROL}/`);
}

function splitUrl(url: string): { path: string; query?: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url } : { path: url.slice(0, q), ...(q < url.length - 1 ? { query: url.slice(q + 1) } : {}) };
}

/** Compares digests, so neither the content nor the length of the token leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The hooks of the control API that must see every request, so they are installed on the
 * root instance before any route plugin: the admin-token check of /_emulator, fault
 * injection and the request journal. Call it before the X-Auth-Token guard, so that a fault
 * hits a request the way a failing network or proxy would: before the service checks it.
 */
export function installControlHooks(app: FastifyInstance, emulator: Emulator): void {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('faultRuleIds', null);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    request.arrivedAt = emulator.clock.now();
    const path = canonicalPath(request.url);
    if (isControlPath(path)) return checkAdminToken(request, reply, emulator, path);
    return injectFaults(request, reply, emulator);
  });

  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    if (emulator.journal.size === 0 || isControlPath(canonicalPath(request.url))) return;
    record(emulator, request, reply.statusCode, reply.elapsedTime);
  });
}

function record(emulator: Emulator, request: FastifyRequest, status: number, elapsedMs: number): void {
  emulator.journal.record({
    time: request.arrivedAt,
    method: request.method,
    ...splitUrl(request.url),
    status,
    durationMs: Math.round(elapsedMs * 1000) / 1000,
    ...(request.faultRuleIds ? { faulted: request.faultRuleIds } : {}),
  });
}

async function checkAdminToken(request: FastifyRequest, reply: FastifyReply, emulator: Emulator, path: string) {
  const expected = emulator.config.adminToken;
  if (expected === undefined || OPEN_CONTROL_PATHS.has(path) || OPEN_CONTROL_TREES.some((p) => path === p || path.startsWith(`${p}/`))) return;
  const header = request.headers.authorization;
  const challenge = { 'www-authenticate': 'Bearer realm="_emulator"' };
  if (header === undefined) {
    return sendError(reply, 401, 'the Authorization header is missing: the control API needs Authorization: Bearer <ADMIN_TOKEN>', challenge);
  }
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return sendError(reply, 401, 'the Authorization header must be Bearer <ADMIN_TOKEN>', challenge);
  if (!sameSecret(match[1].trim(), expected)) return sendError(reply, 401, 'the admin token is wrong', challenge);
}

async function injectFaults(request: FastifyRequest, reply: FastifyReply, emulator: Emulator) {
  const verdict = emulator.faults.judge({ method: request.method, path: splitUrl(request.url).path, headers: request.headers });
  if (verdict.ruleIds.length === 0) return;
  request.faultRuleIds = verdict.ruleIds;
  if (verdict.latencyMs > 0) await sleep(verdict.latencyMs);
  const answer = verdict.answer;
  if (!answer) return;
  if ('drop' in answer.action) {
    // A hijacked request never reaches onResponse, so it is journaled here.
    if (emulator.journal.size > 0) record(emulator, request, 0, reply.elapsedTime);
    reply.hijack();
    // Destroying the response destroys its socket; an injected request rejects instead of hanging.
    reply.raw.destroy();
    return reply;
  }
  const { status, body } = answer.action;
  // The marker tells a person reading a client's log that the failure was staged.
  const headers = { ...answer.action.headers, 'x-emulator-fault': answer.ruleId };
  if (body === undefined) return sendError(reply, status, `fault injected by rule '${answer.ruleId}'`, headers);
  // A string body is sent as it is (a proxy's HTML error page, say); anything else as JSON.
  const type = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
  return reply
    .code(status)
    .type(type)
    .headers(headers)
    .send(typeof body === 'string' ? body : JSON.stringify(body));
}
