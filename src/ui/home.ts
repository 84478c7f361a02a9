import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { version } from '../config.js';
import { PATHS } from '../http/paths.js';
import { allowOnly } from '../http/routing.js';

export const HOME_PATH = '/';

/** Where a person or a program goes from the root; paths, so they hold behind any host. */
const LINKS = {
  dashboard: `${PATHS.ui}/`,
  apiReference: PATHS.docs,
  openapi: PATHS.openapi,
  health: PATHS.health,
};

const INTERFACES = {
  provisioning: PATHS.provisioning,
  repository: PATHS.repository,
  annotations: PATHS.annotations,
  alerts: PATHS.alerts,
  query: PATHS.query,
  control: PATHS.control,
};

/** The page holds no script and loads nothing. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** The q-value the Accept header gives `type`, from its most specific matching range. */
function quality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let q = 0;
  for (const part of accept.split(',', 64)) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity <= best) continue;
    best = specificity;
    const given = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = given === undefined ? 1 : Number(given.slice(2));
    q = Number.isFinite(value) ? value : 0;
  }
  return q;
}

/**
 * A browser names text/html before anything else; curl sends `*\/*` and a client that wants
 * data names application/json. On a tie the JSON answer wins: it reads well in a terminal.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return quality(accept, 'text/html') > quality(accept, 'application/json');
}

// Relative links (no leading slash), so the page also works behind a proxy that adds a prefix.
const page = (v: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>cloud-emulator ${v}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}code{font-size:.9em}</style>
</head>
<body>
<h1>cloud-emulator <small>${v}</small></h1>
<p>A stateful emulator of a cloud load-testing service: provisioning, repository, annotations, alerts and the Query API, with a control API for tests.</p>
<ul>
<li><a href="${LINKS.dashboard.slice(1)}">Dashboard</a>: watch and steer the emulator</li>
<li><a href="${LINKS.apiReference.slice(1)}">API reference</a>: every operation, to try out (OpenAPI document: <a href="${LINKS.openapi.slice(1)}"><code>${LINKS.openapi}</code></a>)</li>
<li><a href="${LINKS.health.slice(1)}">Health</a>: <code>${LINKS.health}</code></li>
</ul>
<p>Interfaces: ${Object.values(INTERFACES)
  .map((p) => `<code>${p}</code>`)
  .join(', ')}. The demo session token is <code>demo-token</code>.</p>
</body>
</html>
`;

/**
 * GET /: what this server is and where to go next. HTML for a browser, JSON for a program.
 * Kept out of the OpenAPI document, like the dashboard's files: it is a way in, not an
 * operation of the emulated service.
 */
export const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const v = version();
  const html = page(v);
  const json = { name: 'cloud-emulator' as const, version: v, links: LINKS, interfaces: INTERFACES };

  app.get(HOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    reply.headers({ vary: 'Accept', 'cache-control': 'no-cache' });
    const sandbox = request.sandbox;
    if (!prefersHtml(request.headers.accept)) {
      if (sandbox === null) return reply.type('application/json; charset=utf-8').send(JSON.stringify(json));
      // Under /sandbox/<name>, every link leads into the same sandbox.
      const prefix = `/sandbox/${sandbox}`;
      const within = (links: Record<string, string>) => Object.fromEntries(Object.entries(links).map(([k, v]) => [k, `${prefix}${v}`]));
      return reply.type('application/json; charset=utf-8').send(JSON.stringify({ ...json, links: within(LINKS), interfaces: within(INTERFACES) }));
    }
    // The page's links are relative: from /sandbox/<name> without the slash they would leave
    // the sandbox, so the page is served from the folder form.
    const path = request.originalUrl.split('?')[0];
    if (sandbox !== null && !path.endsWith('/')) return reply.redirect(`${path}/`, 308);
    return reply.headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(html);
  });
  allowOnly(app, HOME_PATH, ['GET']);
};
