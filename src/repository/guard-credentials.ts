import type { FastifyRequest } from 'fastify';
import type { AuthStore, Session } from './store.js';

/** What the credentials of a request are judged against: a world's users and sessions, or those of the seed a new sandbox starts from. */
export type CredentialSource = Pick<AuthStore, 'use' | 'useApiToken' | 'useBasic' | 'isSessionToken'>;

/** A scheme and one credential; the header is at most Node's header size, and the pattern has no nested repetition. */
const AUTHORIZATION = /^(Bearer|Basic)\s+(\S+)\s*$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The first of `names` the request carries. */
function tokenHeader(request: FastifyRequest, names: readonly string[]): string | string[] | undefined {
  for (const name of names) {
    const value = request.headers[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The user name and password of a Basic credential, or undefined when it is not base64 of `<user>:<password>`. */
function basicCredentials(encoded: string): { userName: string; password: string } | undefined {
  if (!BASE64.test(encoded)) return undefined;
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  return { userName: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * The session of a request to a protected area, or why there is none (the 401 message):
 * the session token in X-Auth-Token (or the area's own header), or (where accepted) an API
 * token as a Bearer, or a user name and password as Basic; and X-Tenant-Name, when sent, must
 * name the user's tenant. Judged the same way against a world and against the seed a new
 * sandbox starts from (control/hooks.ts), so a sandbox takes what the default world takes.
 */
export function sessionOf(request: FastifyRequest, auth: CredentialSource): Session | string {
  // An area may take the token under other names (the Query API's clients send Authentication).
  const names = request.area?.tokenHeaders;
  const header = names ? tokenHeader(request, names) : request.headers['x-auth-token'];
  let session: Session | string;
  if (header !== undefined) {
    session = auth.use(typeof header === 'string' ? header : undefined) ?? 'the security token is invalid or expired';
  } else {
    session = fromAuthorization(request, auth, names);
  }
  if (typeof session === 'string') return session;
  const tenant = request.headers['x-tenant-name'];
  if (tenant === undefined || tenant === '') return session;
  if (typeof tenant !== 'string' || !session.tenants.includes(tenant)) {
    return `the user has no access to tenant '${Array.isArray(tenant) ? tenant[0] : tenant}' (X-Tenant-Name)`;
  }
  return { ...session, tenant };
}

/** The session of the Authorization header, where the area takes its scheme; else why not. */
function fromAuthorization(request: FastifyRequest, auth: CredentialSource, names: readonly string[] | undefined): Session | string {
  const tokenHeaders = names ? 'Authentication or X-Auth-Token' : 'X-Auth-Token';
  const missing = names ? 'the Authentication header is missing: send the security token in Authentication or X-Auth-Token' : 'the X-Auth-Token header is missing';
  const authorization = request.headers.authorization;
  const found = typeof authorization === 'string' ? AUTHORIZATION.exec(authorization) : null;
  if (!found) return missing;
  // The schemes the area takes besides its token header (its declaration: the repository's objects and the provisioning interface).
  const schemes = request.area?.authorization ?? [];
  const credential = found[2];
  if (found[1].toLowerCase() === 'bearer') {
    const takesBearer = schemes.includes('bearer');
    const session = takesBearer ? auth.useApiToken(credential) : undefined;
    if (session) return session;
    // A session token where an API token (or nothing) is taken: say where it goes.
    if (auth.isSessionToken(credential)) {
      return `the Authorization header holds a session token: send it as ${tokenHeaders}` + (takesBearer ? ' (Authorization: Bearer takes an API token)' : '');
    }
    return takesBearer ? 'the API token in the Authorization header is invalid' : missing;
  }
  if (!schemes.includes('basic')) return `${missing} (Authorization: Basic is taken only by the repository's Objects)`;
  const basic = basicCredentials(credential);
  if (!basic) return 'the Authorization header must be Basic <base64 of user name:password>';
  return auth.useBasic(basic.userName, basic.password) ?? 'the user name or password in the Authorization header (Basic) is wrong';
}
