import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStep } from '../http/pipeline.js';
import type { StoreOf } from '../http/routing.js';
import type { AuthStore } from './store.js';
import { sendError } from '../http/errors.js';
import type { Area } from '../http/paths.js';
import { refuseUndecodable, requestArea } from '../http/areas.js';
import { sessionOf } from './guard-credentials.js';

/**
 * One step of the root's request pipeline checks X-Auth-Token for every protected route, so an unknown path
 * under a protected prefix answers 401 to a caller without a token, not 404.
 */
export interface GuardOptions {
  /** The users and sessions of the request's world. */
  auth: StoreOf<AuthStore>;
  alertsRequireToken: boolean;
}

/** Returns the guard as a step of the request pipeline (http/pipeline.ts): true when the request goes on. */
export function installAuthGuard(app: FastifyInstance, { auth, alertsRequireToken }: GuardOptions): RequestStep {
  app.decorateRequest('session', null);
  return (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (refuseUndecodable(request, reply)) return false;
    const { access } = requestArea(request) as Area;
    const needsToken = access === 'token' || (access === 'alert' && alertsRequireToken);
    if (!needsToken) return true;
    const found = sessionOf(request, auth(request));
    if (typeof found === 'string') {
      sendError(reply, 401, found);
      return false;
    }
    request.session = found;
    return true;
  };
}
