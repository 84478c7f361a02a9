import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { StoreOf } from '../http/routing.js';
import type { AuthStore } from './store.js';
import { sendError } from '../http/errors.js';
import type { Area } from '../http/paths.js';
import { refuseUndecodable, requestArea } from '../http/areas.js';
import { sessionOf } from './guard-credentials.js';

/**
 * One hook at the root checks X-Auth-Token for every protected route, so an unknown path
 * under a protected prefix answers 401 to a caller without a token, not 404.
 * A callback hook, not an async one: it never waits, and it runs on every request.
 */
export interface GuardOptions {
  /** The users and sessions of the request's world. */
  auth: StoreOf<AuthStore>;
  alertsRequireToken: boolean;
}

export function installAuthGuard(app: FastifyInstance, { auth, alertsRequireToken }: GuardOptions): void {
  app.decorateRequest('session', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (refuseUndecodable(request, reply)) return;
    const { access } = requestArea(request) as Area;
    const needsToken = access === 'token' || (access === 'alert' && alertsRequireToken);
    if (!needsToken) return done();
    const found = sessionOf(request, auth(request));
    if (typeof found === 'string') {
      sendError(reply, 401, found);
      return;
    }
    request.session = found;
    done();
  });
}
