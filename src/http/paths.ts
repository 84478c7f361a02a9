/**
 * Every path prefix the emulator serves, and who may call what lies under it. Each emulated
 * interface's prefix is written here once, by its name in src/interfaces.ts: its routes.ts
 * takes its `..._PREFIX` from here, and the typed client and the dashboard their URLs; the
 * emulator's own paths follow. The table of areas (AreaTable) is made from these and each
 * interface's declared areas, and the token guard, the control hooks, the OpenAPI document
 * and the dashboard all read it, so a route cannot be protected in one place and open in another.
 */
export const PATHS = {
  provisioning: '/concerto/services/rest/CloudService/v1',
  repository: '/concerto/services/rest/RepositoryService/v1',
  annotations: '/concerto/mpulse/api/annotations/v1',
  alerts: '/concerto/mpulse/api/alerts',
  compositions: '/concerto/services/rest/composition/instances/v1',
  results: '/concerto/services/rest/Results/v1',
  query: '/concerto/mpulse/api/v2',
  control: '/_emulator',
  health: '/_emulator/health',
  openapi: '/_emulator/openapi.json',
  docs: '/_emulator/docs',
  ui: '/_emulator/ui',
  /** The service's own front page, which clients read its build number from. */
  concerto: '/concerto',
  /** Where the service offers its command-line tools; not emulated (a 404 that says so). */
  downloads: '/concerto/downloads',
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
  /**
   * The schemes of the Authorization header a `token` area takes instead of its token header,
   * each for that request only (no session is made): `bearer`, a seed user's API token;
   * `basic`, a seed user's name and password. Absent: none.
   */
  readonly authorization?: readonly AuthorizationScheme[];
}

/** A scheme of the Authorization header an area may take (see Area.authorization). */
export type AuthorizationScheme = 'bearer' | 'basic';

const area = (prefix: string, access: Access, tree = true): Area => ({
  prefix,
  tree,
  access,
  control: prefix === PATHS.control || prefix.startsWith(`${PATHS.control}/`),
});

/** An interface's area as it declares it (http/interface.ts). */
export interface DeclaredArea {
  readonly prefix: string;
  readonly access: Access;
  readonly tree?: boolean;
  /** See Area.tokenHeaders. */
  readonly tokenHeaders?: readonly string[];
  /** See Area.authorization. */
  readonly authorization?: readonly AuthorizationScheme[];
}

/** Paths outside every area: open, and not part of the control API. */
export const ELSEWHERE: Area = { prefix: '/', tree: true, access: 'open', control: false };

function holds(a: Area, path: string): boolean {
  return path === a.prefix || (a.tree && path.length > a.prefix.length && path.startsWith(a.prefix) && path.charCodeAt(a.prefix.length) === 0x2f);
}

/** Who may call what, for the emulator's own paths and the areas of its interfaces. */
export class AreaTable {
  /**
   * Most specific first: the first area that holds a path decides. An interface's trees may
   * be wider than the versioned prefix its routes use, so that an unknown version of a
   * protected interface is refused like the interface itself.
   */
  readonly areas: readonly Area[];
  private readonly lower: readonly Area[];

  constructor(interfaceAreas: readonly DeclaredArea[]) {
    this.areas = [
      area(PATHS.health, 'open', false),
      area(PATHS.openapi, 'open', false),
      // A browser cannot add a Bearer header to a page load, and these pages hold no state; the
      // dashboard asks for the admin token itself and sends it on its API calls.
      area(PATHS.docs, 'open'),
      area(PATHS.ui, 'open'),
      area(PATHS.control, 'admin'),
      // The service's front page and its downloads hold no state: open, as on the service.
      area(PATHS.concerto, 'open', false),
      area(PATHS.downloads, 'open'),
      ...interfaceAreas.map((a) => ({
        ...area(a.prefix, a.access, a.tree ?? true),
        ...(a.tokenHeaders ? { tokenHeaders: a.tokenHeaders } : {}),
        ...(a.authorization ? { authorization: a.authorization } : {}),
      })),
      // The home page (GET /) belongs to the emulator itself: open, and left alone by faults and the journal.
      { prefix: '/', tree: false, access: 'open', control: true },
    ];
    this.lower = this.areas.map((a) => ({ ...a, prefix: a.prefix.toLowerCase() }));
  }

  /** The area of a path spelled exactly as the routes are (a route's pattern). */
  of(path: string): Area {
    for (const a of this.areas) if (holds(a, path)) return a;
    return ELSEWHERE;
  }

  /**
   * The area of a path no route matched, compared without regard to case: an unknown path that
   * looks like it belongs to a protected interface is refused without credentials (401), not
   * answered 404, so that a caller without a token learns nothing of what exists.
   */
  ofUnmatched(canonical: string): Area {
    for (const a of this.lower) if (holds(a, canonical)) return a;
    return ELSEWHERE;
  }
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

/** Where the sandbox name of a rewritten URL is kept: on the raw request, the one place it lives. */
const SANDBOX_NAME = Symbol('sandbox name');

/**
 * For Fastify's rewriteUrl: `/sandbox/<name>/rest` becomes `/rest`, and the name is kept on
 * the raw request, where `request.sandbox` reads it (http/fastify.ts).
 */
export function rewriteSandboxUrl(raw: { url?: string }): string {
  const url = raw.url ?? '/';
  const split = splitSandbox(url);
  if (!split) return url;
  (raw as { [SANDBOX_NAME]?: string })[SANDBOX_NAME] = split.name;
  return split.rest;
}

/** The sandbox a raw request was addressed to, as named in its path; null for the default world. */
export function sandboxOf(raw: object): string | null {
  return (raw as { [SANDBOX_NAME]?: string })[SANDBOX_NAME] ?? null;
}
