import type { FastifyRequest } from 'fastify';
import { PATHS } from '../http/paths.js';
import type { AuthStore, Session } from './store.js';

/**
 * Where `Authorization: Bearer <apiToken>` is taken instead of a session token: the
 * repository's objects and the provisioning interface, where an automation script of the
 * service's own authors sends it. Everywhere else needs X-Auth-Token.
 */
const BEARER_AREAS = new Set<string>([`${PATHS.repository}/Objects`, '/concerto/services/rest/CloudService']);

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The first of `names` the request carries. */
function tokenHeader(request: FastifyRequest, names: readonly string[]): string | string[] | undefined {
  for (const name of names) {
    const value = request.headers[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The session of a request to a protected area, or why there is none (the 401 message):
 * the session token in X-Auth-Token, or (where accepted) an API token as a Bearer; and
 * X-Tenant-Name, when sent, must name the user's tenant.
 */
export function sessionOf(request: FastifyRequest, auth: AuthStore): Session | string {
  // An area may take the token under other names (the Query API's clients send Authentication).
  const names = request.area?.tokenHeaders;
  const header = names ? tokenHeader(request, names) : request.headers['x-auth-token'];
  let session: Session | undefined;
  if (header !== undefined) {
    session = auth.use(typeof header === 'string' ? header : undefined);
    if (!session) return 'the security token is invalid or expired';
  } else {
    const authorization = request.headers.authorization;
    const bearer = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    if (bearer === undefined || !BEARER_AREAS.has(request.area?.prefix ?? '')) {
      return names ? 'the Authentication header is missing: send the security token in Authentication or X-Auth-Token' : 'the X-Auth-Token header is missing';
    }
    session = auth.useApiToken(bearer);
    if (!session) return 'the API token in the Authorization header is invalid';
  }
  const tenant = request.headers['x-tenant-name'];
  if (tenant === undefined || tenant === '') return session;
  if (typeof tenant !== 'string' || !session.tenants.includes(tenant)) {
    return `the user has no access to tenant '${Array.isArray(tenant) ? tenant[0] : tenant}' (X-Tenant-Name)`;
  }
  return { ...session, tenant };
}
