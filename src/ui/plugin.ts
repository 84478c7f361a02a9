import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Emulator } from '../world/world.js';
import { ErrorBodySchema, installErrorHandling, notFound } from '../http/errors.js';
import { allowOnly } from '../http/routing.js';
import { codeRoot, packageRoot } from '../core/package-root.cjs';

export const UI_PREFIX = '/_emulator/ui';

/**
 * Where the page's files are: beside this module (src/ui/static under vitest, and
 * dist/ui/static once `npm run build` has copied them), else the copy in dist/ (for the
 * CommonJS build in dist/cjs), else the source folder, for a dist/ compiled without the copy
 * step.
 */
const CANDIDATE_DIRS = [join(codeRoot(), 'ui/static/'), join(packageRoot(), 'dist/ui/static/'), join(packageRoot(), 'src/ui/static/')];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** Reads every page file once, at start: the page is small and never changes while running. */
export function loadStaticFiles(dir?: string): Map<string, StaticFile> {
  const folder = dir ?? CANDIDATE_DIRS.find((d) => existsSync(`${d}index.html`));
  if (!folder) throw new Error(`the dashboard's files are missing: looked for index.html in ${CANDIDATE_DIRS.join(' and ')}`);
  const files = new Map<string, StaticFile>();
  for (const name of readdirSync(folder)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(`${folder}/${name}`);
    files.set(name, { body, type, etag: `"${createHash('sha1').update(body).digest('base64url')}"` });
  }
  return files;
}

// The page loads nothing from elsewhere and runs no inline script.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const FileParamsSchema = Type.Object({ file: Type.String({ description: 'name of a file of the page' }) });
const PageSchema = Type.String({ description: 'the file itself (HTML, JavaScript, CSS or SVG)' });

/**
 * The dashboard at /_emulator/ui: static files only. The page itself steers the emulator
 * through the public control API and the three interfaces, like any other client.
 */
export const uiRoutes: FastifyPluginAsyncTypebox<{ emulator: Emulator; dir?: string }> = async (app, options) => {
  installErrorHandling(app, { unsupportedMediaType: 400 });
  const files = loadStaticFiles(options.dir);

  /** GET /_emulator/ui: the dashboard page (redirected to the folder form, so relative links resolve). */
  app.get(
    '/',
    { schema: { hide: true, response: { 200: PageSchema, 302: Type.Null(), 304: Type.Null() } } },
    async (request, reply) => {
      const [path, query] = request.url.split('?');
      // Relative, so that the page also works behind a proxy that adds a path prefix.
      if (!path.endsWith('/')) return reply.redirect(`ui/${query === undefined ? '' : `?${query}`}`, 302);
      return send(files.get('index.html')!, request.headers['if-none-match'], reply);
    },
  );
  allowOnly(app, '/', ['GET']);

  /** GET /_emulator/ui/<file>: the page's script, style sheet and icon. */
  app.get(
    '/:file',
    { schema: { hide: true, params: FileParamsSchema, response: { 200: PageSchema, 304: Type.Null(), 404: ErrorBodySchema } } },
    async (request, reply) => {
      const file = files.get(request.params.file);
      if (!file) throw notFound(`the dashboard has no file '${request.params.file}'`);
      return send(file, request.headers['if-none-match'], reply);
    },
  );
  allowOnly(app, '/:file', ['GET']);
};

function send(file: StaticFile, ifNoneMatch: string | undefined, reply: FastifyReply) {
  // no-cache: the browser revalidates each load, so an upgraded emulator never runs a stale page.
  reply.headers({ ...SECURITY_HEADERS, etag: file.etag, 'cache-control': 'no-cache' });
  if (ifNoneMatch === file.etag) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}
