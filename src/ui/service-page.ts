import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { version } from '../config.js';
import { PATHS } from '../http/paths.js';
import { notFound } from '../http/errors.js';
import { refuseOtherMethods } from '../http/routing.js';

/**
 * The service's front page, `/concerto/`: a client checks a server by reading the build number
 * from `<meta name="buildnumber" content="...">` there (the CloudTest Jenkins plugin does,
 * before it downloads the command-line tool for that build). The emulator answers its own
 * version, which parses as a version number as the service's build numbers do.
 */
const page = (v: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="buildnumber" content="${v}">
<title>cloud-emulator ${v}</title>
</head>
<body>
<p>cloud-emulator ${v}: the emulated service's front page. The emulator's own home page is at <a href="../">/</a>.</p>
</body>
</html>
`;

/** What a client that asks for a command-line tool is told: it is not emulated, and what to use instead. */
export const DOWNLOADS_MESSAGE =
  'the command-line tools (scommand and the other downloads) are not emulated: call the REST interfaces directly, ' +
  "or use the emulator's typed client (cloud-emulator/client) and control API (/_emulator)";

export const VERSION_HEADER = 'x-emulator-version';

export const servicePageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const refuseOthers = refuseOtherMethods(app);
  const v = version();
  const html = page(v);

  /** GET /concerto/: the service's front page, with the build number clients read. */
  app.get(PATHS.concerto, { schema: { hide: true } }, async (_request, reply) => {
    reply.headers({ 'cache-control': 'no-cache', [VERSION_HEADER]: v, 'x-content-type-options': 'nosniff' });
    return reply.type('text/html; charset=utf-8').send(html);
  });

  /** GET /concerto/downloads/<anything>: not emulated; the 404 says so and what to use instead. */
  app.get(`${PATHS.downloads}/*`, { schema: { hide: true } }, async () => {
    throw notFound(DOWNLOADS_MESSAGE);
  });
  refuseOthers();
};
