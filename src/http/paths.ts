/**
 * Every path prefix the emulator serves, and who may call what lies under it. The token
 * guard, the control hooks, the OpenAPI document and the dashboard all read this one table,
 * so a route cannot be protected in one place and open in another.
 */

export const PATHS = {
  provisioning: '/concerto/services/rest/CloudService/v1',
  repository: '/concerto/services/rest/RepositoryService/v1',
  annotations: '/concerto/mpulse/api/annotations/v1',
  alerts: '/concerto/mpulse/api/alerts',
  query: '/concerto/mpulse/api/v2',
  control: '/_emulator',
  health: '/_emulator/health',
  openapi: '/_emulator/openapi.json',
  docs: '/_emulator/docs',
  ui: '/_emulator/ui',
} as const;

/**
 * - `token`: needs a valid X-Auth-Token (a session from the Repository log-in).
 * - `alert`: the alert calls; a token only when ALERTS_REQUIRE_TOKEN is set.
 * - `admin`: the control API; Authorization: Bearer <ADMIN_TOKEN> when ADMIN_TOKEN is set.
 * - `open`: anyone (log-in, health, static pages that hold no state).
 */
export type Access = 'token' | 'alert' | 'admin' | 'open';

export interface Area {
  /** The path itself, and (for a tree) anything below it. */
  readonly prefix: string;
  readonly tree: boolean;
  readonly access: Access;
  /** Part of the emulator's own API (/_emulator): faults and the journal leave it alone. */
  readonly control: boolean;
  /**
   * The headers a `token` area reads the session token from, first present wins (lower
   * case). Absent: `x-auth-token` alone.
   */
  readonly tokenHeaders?: readonly string[];
}

const area = (prefix: string, access: Access, tree = true): Area => ({
  prefix,
  tree,
  access,
  control: prefix === PATHS.control || prefix.startsWith(`${PATHS.control}/`),
});

/**
 * Most specific first: the first area that holds a path decides. The trees are wider than
 * the versioned prefixes the routes use, so that an unknown version of a protected interface
 * is refused like the interface itself.
 */
export const AREAS: readonly Area[] = [
  area(PATHS.health, 'open', false),
  area(PATHS.openapi, 'open', false),
  // A browser cannot add a Bearer header to a page load, and these pages hold no state; the
  // dashboard asks for the admin token itself and sends it on its API calls.
  area(PATHS.docs, 'open'),
  area(PATHS.ui, 'open'),
  area(PATHS.control, 'admin'),
  area('/concerto/services/rest/CloudService', 'token'),
  area(`${PATHS.repository}/Objects`, 'token'),
  area(`${PATHS.repository}/Tokens`, 'open'),
  area('/concerto/mpulse/api/annotations', 'token'),
  area(PATHS.alerts, 'alert'),
  // The Query API: clients send the session token as `Authentication`, some as `X-Auth-Token`.
  { ...area(PATHS.query, 'token'), tokenHeaders: ['authentication', 'x-auth-token'] },
  // The home page (GET /) belongs to the emulator itself: open, and left alone by faults and the journal.
  { prefix: '/', tree: false, access: 'open', control: true },
];

/** Paths outside every area: open, and not part of the control API. */
export const ELSEWHERE: Area = { prefix: '/', tree: true, access: 'open', control: false };

function holds(a: Area, path: string): boolean {
  return path === a.prefix || (a.tree && path.length > a.prefix.length && path.startsWith(a.prefix) && path.charCodeAt(a.prefix.length) === 0x2f);
}

/** The area of a path spelled exactly as the routes are (a route's pattern). */
export function areaOf(path: string): Area {
  for (const a of AREAS) if (holds(a, path)) return a;
  return ELSEWHERE;
}

const LOWER_AREAS = AREAS.map((a) => ({ ...a, prefix: a.prefix.toLowerCase() }));

/**
 * The area of a path no route matched, compared without regard to case: an unknown path that
 * looks like it belongs to a protected interface is refused without credentials (401), not
 * answered 404, so that a caller without a token learns nothing of what exists.
 */
export function areaOfUnmatched(canonical: string): Area {
  for (const a of LOWER_AREAS) if (holds(a, canonical)) return a;
  return ELSEWHERE;
}

/** Every path above is also served below `/sandbox/<name>`, in that sandbox's own world. */
export const SANDBOX_PREFIX = '/sandbox/';

/**
 * Splits `/sandbox/<name>/rest` into the name and the path the routes know (`/rest`, or `/`
 * for nothing after the name). Undefined for a path outside the prefix, which is served by
 * the default world. The name is taken as sent, escapes and all: a name that is not exactly a
 * sandbox name is refused later, never decoded into one.
 */
export function splitSandbox(url: string): { name: string; rest: string } | undefined {
  if (!url.startsWith(SANDBOX_PREFIX)) return undefined;
  let end = SANDBOX_PREFIX.length;
  // Bounded by the URL, which the HTTP parser has already bounded.
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break;
    end++;
  }
  const rest = url.slice(end);
  return { name: url.slice(SANDBOX_PREFIX.length, end), rest: rest.charCodeAt(0) === 0x2f ? rest : `/${rest}` };
}
