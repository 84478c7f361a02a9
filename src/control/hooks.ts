import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { World } from '../interfaces.js';
import type { Sandboxes } from '../world/sandboxes.js';
import { DomainError } from '../core/errors.js';
import { STATUS_OF } from '../http/errors.js';
import { refuseUndecodable, requestArea } from '../http/areas.js';
import type { FaultVerdict } from '../world/faults.js';
import type { StateFileWriter } from '../world/persistence.js';
import { stopwatch } from '../core/clock.js';
import { sendError } from '../http/errors.js';
import { PATHS, type Area } from '../http/paths.js';

export const CONTROL_PREFIX = PATHS.control;

/**
 * What the emulator adds to Fastify above the request pipeline (http/fastify.ts has the
 * pipeline's): the worlds, which only this floor and above know the types of.
 */
declare module 'fastify' {
  interface FastifyInstance {
    /** The default world (what paths without /sandbox/<name> are served by). */
    world: World;
    /** @deprecated The same default world, by the name it had before sandboxes: use `world`. */
    emulator: World;
    sandboxes: Sandboxes;
    /** The state file's writer (control/persistence.ts); null without STATE_FILE. */
    statePersistence: StateFileWriter | null;
  }
  interface FastifyRequest {
    /** The world that serves this request: the default one, or the sandbox its path names. */
    world: World;
    /** Emulated time when the request arrived (for the journal). */
    arrivedAt: number;
    /** stopwatch() when the request arrived (the journal's duration). */
    startedAt: number;
    /** Ids of the fault rules that acted on this request. */
    faultRuleIds: string[] | null;
  }
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
 * Callback hooks, not async ones: they run on every request and wait only for a fault's
 * latency.
 */
export function installControlHooks(app: FastifyInstance): void {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('faultRuleIds', null);

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const emulator = request.world;
    request.arrivedAt = emulator.clock.now();
    request.startedAt = stopwatch();
    if (refuseUndecodable(request, reply)) return;
    const area = requestArea(request) as Area;
    if (area.control) {
      if (area.access !== 'admin' || !refuseWithoutAdminToken(request, reply, emulator)) done();
      return;
    }
    injectFaults(request, reply, emulator, done);
  });

  // The journal records an answer when it is sent, not when the socket has taken it all (an
  // onResponse hook): any onResponse hook makes Fastify follow every response's finish and
  // error events, which cost a request more than everything else these hooks do.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction) => {
    const emulator = request.world;
    // A request refused before its world was known (a bad sandbox name) has no journal to go to.
    if (!emulator || emulator.journal.size === 0 || requestArea(request)?.control) return done();
    const status = reply.statusCode;
    if (typeof payload !== 'string' || status === 204 || status === 304) {
      record(emulator, request, status, payloadSize(status, payload));
      return done();
    }
    // The bytes of a text body take a pass over all of it, which Fastify makes anyway for the
    // Content-Length it sends: it sends the answer inside done(), so the size is read from
    // that header afterwards, and counted here only when the answer has not gone out yet.
    const slot = record(emulator, request, status, 0);
    done();
    const sent = reply.raw.headersSent ? reply.getHeader('content-length') : undefined;
    emulator.journal.setResponseSize(slot, typeof sent === 'string' ? Number(sent) : Buffer.byteLength(payload));
  });
}

/**
 * Bytes of a response body as onSend sees it; -1 for a stream, whose length is not known yet.
 * A 204 or 304 answers no body, whatever a route handed over (Fastify drops it).
 */
function payloadSize(status: number, payload: unknown): number {
  if (payload === null || payload === undefined || status === 204 || status === 304) return 0;
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  if (payload instanceof Uint8Array) return payload.byteLength;
  return -1;
}

/**
 * Hands the journal what the request already holds (its headers and parsed body, by
 * reference): the journal copies or renders them only when it is read, or when a body is
 * longer than it keeps.
 */
function record(emulator: World, request: FastifyRequest, status: number, responseSize: number): number {
  const elapsedMs = stopwatch() - request.startedAt;
  return emulator.journal.record(
    request.arrivedAt,
    request.method,
    request.url,
    status,
    Math.round(elapsedMs * 1000) / 1000,
    request.faultRuleIds,
    request.raw.headers,
    request.body,
    responseSize,
  );
}

/** Answers 401 and returns true when the control API needs an admin token this request lacks. */
function refuseWithoutAdminToken(request: FastifyRequest, reply: FastifyReply, emulator: World): boolean {
  const expected = emulator.config.adminToken;
  if (expected === undefined) return false;
  const header = request.headers.authorization;
  const challenge = { 'www-authenticate': 'Bearer realm="_emulator"' };
  if (header === undefined) {
    sendError(reply, 401, 'the Authorization header is missing: the control API needs Authorization: Bearer <ADMIN_TOKEN>', challenge);
    return true;
  }
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) {
    sendError(reply, 401, 'the Authorization header must be Bearer <ADMIN_TOKEN>', challenge);
    return true;
  }
  if (!sameSecret(match[1].trim(), expected)) {
    sendError(reply, 401, 'the admin token is wrong', challenge);
    return true;
  }
  return false;
}

/** Calls `done` when the request may go on (after any latency), or answers it instead. */
function injectFaults(request: FastifyRequest, reply: FastifyReply, emulator: World, done: HookHandlerDoneFunction): void {
  // Without rules (the usual case) there is nothing to judge, and no facts to gather.
  if (emulator.faults.isEmpty) return done();
  // The path as sent, cut where the router cuts it: before the query or a fragment.
  const end = request.url.search(/[?#]/);
  const verdict = emulator.faults.judge({ method: request.method, path: end < 0 ? request.url : request.url.slice(0, end), headers: request.headers });
  if (verdict.ruleIds.length === 0) return done();
  request.faultRuleIds = verdict.ruleIds;
  if (verdict.latencyMs > 0) setTimeout(() => answerFault(request, reply, emulator, verdict.answer, done), verdict.latencyMs);
  else answerFault(request, reply, emulator, verdict.answer, done);
}

function answerFault(request: FastifyRequest, reply: FastifyReply, emulator: World, answer: FaultVerdict['answer'], done: HookHandlerDoneFunction): void {
  if (!answer) return done();
  if ('drop' in answer.action) {
    // A hijacked request never reaches onResponse, so it is journaled here.
    if (emulator.journal.size > 0) record(emulator, request, 0, 0);
    reply.hijack();
    // Destroying the response destroys its socket; an injected request rejects instead of hanging.
    reply.raw.destroy();
    return;
  }
  const { status, body } = answer.action;
  // The marker tells a person reading a client's log that the failure was staged.
  const headers = { ...answer.action.headers, 'x-emulator-fault': answer.ruleId };
  if (body === undefined) {
    sendError(reply, status, `fault injected by rule '${answer.ruleId}'`, headers);
    return;
  }
  // A string body is sent as it is (a proxy's HTML error page, say); anything else as JSON.
  const type = typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
  reply
    .code(status)
    .type(type)
    .headers(headers)
    .send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** The sandbox name a rewritten URL carried, kept on the raw request for the first hook. */
export const SANDBOX_NAME = Symbol('sandbox name');

/**
 * The first hook of every request: the world it is served by. A path under /sandbox/<name>
 * was rewritten before routing (the name kept on the raw request); its world is found or (in
 * auto mode) created here, and a name that is not one is refused before anything else runs.
 */
export function installWorlds(app: FastifyInstance, main: World, sandboxes: Sandboxes): void {
  app.decorateRequest('world', null as unknown as World);
  app.decorateRequest('sandbox', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const name = (request.raw as { [SANDBOX_NAME]?: string })[SANDBOX_NAME];
    if (name === undefined) {
      request.world = main;
      return done();
    }
    request.sandbox = name;
    try {
      request.world = sandboxes.resolve(name) as World; // every world of the app is forked from `main`
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      sendError(reply, STATUS_OF[err.kind], err.message);
      return;
    }
    done();
  });
}
