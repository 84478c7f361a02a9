import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { World } from '../interfaces.js';
import { Sandboxes } from '../world/sandboxes.js';
import { DomainError, missing } from '../core/errors.js';
import { STATUS_OF } from '../http/errors.js';
import { refuseUndecodable, requestArea } from '../http/areas.js';
import type { FaultTarget, FaultVerdict } from '../world/faults.js';
import { fromDashboard } from '../world/journal.js';
import type { StateFileWriter } from '../world/persistence.js';
import type { SeedWatch } from '../world/seed-watch.js';
import type { State } from '../state.js';
import { stopwatch } from '../core/clock.js';
import { errorBody, sendError } from '../http/errors.js';
import { PATHS, sandboxOf, type Area } from '../http/paths.js';
import { keepJournalText } from '../http/bodies.js';
import { routeFaultExempt } from '../http/route-context.js';
import { noteChange } from './event-changes.js';
import { sessionOf, type CredentialSource } from '../repository/guard-credentials.js';
import type { Continue, RequestStep, WaitingStep } from '../http/pipeline.js';

export const CONTROL_PREFIX = PATHS.control;

/** The types of what this floor hands Fastify (declared once, in http/fastify.ts). */
declare module '../http/fastify.js' {
  interface EmulatorTypes {
    world: World;
    sandboxes: Sandboxes;
    statePersistence: StateFileWriter;
    seedWatch: SeedWatch<State>;
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
 * The admin-token check and the faults are a step of the request pipeline (http/pipeline.ts),
 * returned for the caller to run; it waits only for a fault's latency.
 */
export function installControlHooks(app: FastifyInstance): WaitingStep {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('faultRuleIds', null);
  app.decorateRequest('journalText', null);
  // The root's JSON parser (inherited by the scopes that keep it) also keeps the text.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    keepJournalText(request, body as string);
    parseJson(request, body as string, done);
  });

  const control: WaitingStep = (request, reply, done, next) => {
    const emulator = request.world;
    if (refuseUndecodable(request, reply)) return;
    const area = requestArea(request) as Area;
    if (area.control) {
      // The emulator's own paths: the admin token first, then only rules of scope `all`.
      if (area.access === 'admin' && refuseWithoutAdminToken(request, reply, emulator)) return;
      const target = routeFaultExempt(request) ? 'exempt' : 'own';
      injectFaults(request, reply, emulator, target, done, next);
      return;
    }
    // The dashboard's own reads of the interfaces are judged as the emulator's own paths:
    // only a rule of scope `all` reaches them. Without rules, no header is read.
    const target = !emulator.faults.isEmpty && fromDashboard(request.headers) ? 'own' : 'app';
    injectFaults(request, reply, emulator, target, done, next);
  };

  // The journal records an answer when it is sent, not when the socket has taken it all (an
  // onResponse hook): any onResponse hook makes Fastify follow every response's finish and
  // error events, which cost a request more than everything else these hooks do. It is
  // there without a journal too (JOURNAL_SIZE=0): a stream opened later hears of changes.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction) => {
    const emulator = request.world;
    // A request that may have changed a world someone listens to: its event stream hears of it.
    if (emulator?.events.listening && request.method !== 'GET' && request.method !== 'HEAD') noteChange(emulator, request, reply, payload);
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
  return control;
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
 * Why the journal keeps no body of this request: a request no route matched is recorded (a
 * test asserts on it) but without its body, which any client can send without credentials
 * and which no route read. (A request without a valid X-Auth-Token is refused before its body
 * is read, so there is none to keep; a failed log-in keeps its body, secrets masked: it is
 * the request a person debugging a client wants to see.)
 */
function dropBodyOf(request: FastifyRequest): 'unmatched' | undefined {
  return request.is404 ? 'unmatched' : undefined;
}

/**
 * Hands the journal what the request already holds (its headers by reference, the body's
 * text as sent): the journal cuts the body to its limit and masks secrets when recording.
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
    request.journalText ?? request.body,
    responseSize,
    request.body,
    dropBodyOf(request),
    request.raw.rawHeaders,
  );
}

/** What is wrong with the request's admin token; undefined when it is the right one. */
function adminTokenProblem(request: FastifyRequest, expected: string): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return 'the Authorization header is missing: the control API needs Authorization: Bearer <ADMIN_TOKEN>';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return 'the Authorization header must be Bearer <ADMIN_TOKEN>';
  if (!sameSecret(match[1].trim(), expected)) return 'the admin token is wrong';
  return undefined;
}

/** Answers 401 and returns true when the control API needs an admin token this request lacks. */
function refuseWithoutAdminToken(request: FastifyRequest, reply: FastifyReply, emulator: World): boolean {
  const expected = emulator.config.adminToken;
  if (expected === undefined) return false;
  const problem = adminTokenProblem(request, expected);
  if (problem === undefined) return false;
  sendError(reply, 401, problem, { 'www-authenticate': 'Bearer realm="_emulator"' });
  return true;
}

/** Calls `next` when the request may go on (after any latency), or answers it instead. */
function injectFaults(request: FastifyRequest, reply: FastifyReply, emulator: World, target: FaultTarget, done: HookHandlerDoneFunction, next: Continue): void {
  // Without rules (the usual case) there is nothing to judge, and no facts to gather.
  if (!emulator.faults.mayStrike(target)) return next(request, reply, done);
  // The path as sent, cut where the router cuts it: before the query or a fragment.
  const end = request.url.search(/[?#]/);
  const verdict = emulator.faults.judge({ method: request.method, path: end < 0 ? request.url : request.url.slice(0, end), headers: request.headers, target });
  if (verdict.ruleIds.length === 0) return next(request, reply, done);
  request.faultRuleIds = verdict.ruleIds;
  if (verdict.latencyMs > 0) {
    // Later, outside the hook runner: what the steps after this one throw goes to `done`.
    setTimeout(() => {
      try {
        answerFault(request, reply, emulator, verdict.answer, done, next);
      } catch (err) {
        done(err as Error);
      }
    }, verdict.latencyMs);
  } else answerFault(request, reply, emulator, verdict.answer, done, next);
}

function answerFault(request: FastifyRequest, reply: FastifyReply, emulator: World, answer: FaultVerdict['answer'], done: HookHandlerDoneFunction, next: Continue): void {
  if (!answer) return next(request, reply, done);
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

/** A provisional sandbox's name, on a request whose world is registered once its checks pass. */
const PENDING = Symbol('pending sandbox');

/**
 * Answers an error from a hook as a body already written out, so that no route's response
 * schema for that status (the health check's 503) can turn it into a 500.
 */
function sendPlainError(reply: FastifyReply, err: DomainError): void {
  const statusCode = STATUS_OF[err.kind];
  reply
    .code(statusCode)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(statusCode, err.message)));
}

/**
 * The first hook of every request: the world it is served by. A path under /sandbox/<name>
 * was rewritten before routing (the name kept on the raw request). An existing sandbox serves
 * it. An unknown name is judged first by the credentials its area needs, decided without a
 * world (the admin token from the settings, a session token from the state a new sandbox
 * starts from), so that a refused request answers 401 whether or not the name exists and
 * builds nothing. A request that passes is served (auto mode) by a provisional world from the
 * seed, registered only in preHandler, once every check of the request has passed; with
 * ADMIN_TOKEN set, a request that needs no credential (health, log-in, the pages) does not
 * create one at all. A sandbox is marked used in preHandler too: a refused request does not
 * keep one alive.
 */
/** The last X-Emulator-Now written, and its text: requests of the same millisecond share it. */
let lastNow = Number.NaN;
let lastNowText = '';

/** Sets the world that serves the request and when it arrived (for the journal); true: the request goes on. */
function arrived(request: FastifyRequest, reply: FastifyReply, world: World): true {
  request.world = world;
  // What fell due since the last look (a delivery's retry) is started before the request is served.
  world.runDue();
  const now = world.clock.now();
  request.arrivedAt = now;
  request.startedAt = stopwatch();
  // The emulated time of every answer, so that a page can say "5 minutes ago" in the emulator's time.
  if (now !== lastNow) {
    lastNow = now;
    lastNowText = `${now}`;
  }
  reply.header('x-emulator-now', lastNowText);
  return true;
}

/**
 * Returns the step of the request pipeline (http/pipeline.ts) that sets the request's world,
 * and installs the preHandler hook that registers or marks a sandbox.
 */
export function installWorlds(app: FastifyInstance, main: World, sandboxes: Sandboxes, seedCredentials: () => CredentialSource): RequestStep {
  app.decorateRequest('world', null as unknown as World);
  // The name lives on the raw request (http/paths.ts rewriteSandboxUrl); this reads it there.
  app.decorateRequest('sandbox', {
    getter(this: FastifyRequest) {
      return sandboxOf(this.raw);
    },
  });
  const { adminToken, alertsRequireToken } = main.config;
  const arrive = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const name = request.sandbox;
    if (name === null) return arrived(request, reply, main);
    try {
      const found = sandboxes.find(name);
      // Every world of the app is forked from `main`, so it serves the listed interfaces.
      if (found) return arrived(request, reply, found as World);
      // A preflight carries no credentials and makes nothing: to a sandbox not made yet it is
      // answered (by the CORS preflight step) with no world, and so not journaled.
      if (request.method === 'OPTIONS') return true;
      Sandboxes.check(name, sandboxes.mode);
      if (refuseUndecodable(request, reply)) return false;
      const { access } = requestArea(request) as Area;
      const admin = adminToken === undefined || adminTokenProblem(request, adminToken) === undefined;
      if (access === 'admin' && !admin) {
        refuseWithoutAdminToken(request, reply, main);
        return false;
      }
      if (access === 'token' || (access === 'alert' && alertsRequireToken)) {
        // Every credential the guard takes, judged by the guard's own function against the
        // seed's users and tokens: a new sandbox refuses nothing the default world accepts.
        const found = sessionOf(request, seedCredentials());
        if (typeof found === 'string') {
          sendError(reply, 401, found);
          return false;
        }
      } else if (!admin) {
        // ADMIN_TOKEN is set and the request needs no credential: it may not make a sandbox.
        if (sandboxes.mode === 'explicit') throw sandboxes.notFound(name);
        throw missing(
          `no sandbox '${name}': with ADMIN_TOKEN set, a sandbox is made only by a request with credentials ` +
            `(Authorization: Bearer <ADMIN_TOKEN>, or an X-Auth-Token of the seed) or by PUT /_emulator/sandboxes/${name}`,
        );
      }
      (request as { [PENDING]?: string })[PENDING] = name;
      return arrived(request, reply, sandboxes.provisional(name) as World);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      sendPlainError(reply, err);
      return false;
    }
  };

  // Every check of the request has passed (credentials, faults, body, schema): only now is a
  // provisional world registered, and an existing one marked used. With sandboxes off no
  // request names one, and no route pays for the hook.
  if (sandboxes.mode !== 'off') app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const name = request.sandbox;
    if (name === null) return done();
    const pending = (request as { [PENDING]?: string })[PENDING];
    if (pending === undefined) {
      sandboxes.touch(name);
      return done();
    }
    try {
      const world = sandboxes.adopt(name, request.world);
      if (world !== request.world) {
        // Made by another request meanwhile, perhaps from a state of its own: the credentials
        // are judged again in the world that will serve the request, whatever their kind.
        if (request.session) {
          const found = sessionOf(request, (world as World).stores.repository.auth);
          if (typeof found === 'string') {
            sendError(reply, 401, found);
            return;
          }
          request.session = found;
        }
        request.world = world as World;
      }
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      sendPlainError(reply, err);
      return;
    }
    done();
  });
  return arrive;
}
