import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBodySchema, installErrorHandling, notFound } from '../http/errors.js';
import { PATHS, SANDBOX_PREFIX, type Area } from '../http/paths.js';
import { AREAS, INTERFACES } from '../interfaces.js';
import { OBJECT_TYPES } from '../repository/schemas.js';
import { NO_TEARDOWN_STATES, STATE_FAMILIES } from '../provisioning/schemas.js';
import { ACCEPTED_IN, INSTANCE_FAMILIES } from '../compositions/lifecycles.js';
import { refuseOtherMethods } from '../http/routing.js';
import { staticPlugin } from '../http/deferred-packages.cjs';
import { PluginRecorder } from '../http/deferred.js';
import { codeRoot, packageRoot } from '../core/package-root.cjs';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from '../world/sandboxes.js';
import type { Demo } from '../world/state.js';

export const UI_PREFIX = PATHS.ui;

/**
 * Where the page's files are: beside this module (src/ui/static under vitest, and
 * dist/ui/static once `npm run build` has copied them), else the copy in dist/ (for the
 * CommonJS build in dist/cjs), else the source folder, for a dist/ compiled without the copy
 * step.
 */
const CANDIDATE_DIRS = [join(codeRoot(), 'ui/static/'), join(packageRoot(), 'dist/ui/static/'), join(packageRoot(), 'src/ui/static/')];

// Set here rather than guessed by the library: its table says application/javascript, and
// module scripts are text/javascript (RFC 9239).
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface PageFiles {
  dir: string;
  /** File name -> content type. Only these are served: the folder also holds type declarations for the tests. */
  types: Map<string, string>;
}

/** Lists the page's files once, at start; their content is read from disk on each request. */
export function pageFiles(dir?: string): PageFiles {
  const folder = dir ?? CANDIDATE_DIRS.find((d) => existsSync(join(d, 'index.html')));
  if (!folder) throw new Error(`the dashboard's files are missing: looked for index.html in ${CANDIDATE_DIRS.join(' and ')}`);
  const types = new Map<string, string>();
  for (const name of readdirSync(folder)) {
    const type = TYPES[extname(name)];
    if (type) types.set(name, type);
  }
  return { dir: folder, types };
}

// The page loads nothing from elsewhere and runs no inline script.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface PageSettings {
  paths: typeof PATHS;
  areas: readonly Area[];
  /** The emulated interfaces (src/interfaces.ts), in order: name, path prefix and label. */
  interfaces: Array<{ name: string; prefix: string; label: string }>;
  /** Where sandboxes live and what names they take, for the page's sandbox picker. */
  sandboxes: { prefix: string; name: string; rule: string };
  /** The repository's object types, for the objects panel. */
  objectTypes: readonly string[];
  /** The failed and terminated state families (the badges' colours), and where terminating is a no-op. */
  states: { failed: readonly string[]; terminated: readonly string[]; noTeardown: readonly string[] };
  /** Composition instances: the states each command is accepted in, and the colour families of their states. */
  instances: { acceptedIn: Readonly<Record<string, readonly string[]>>; families: Readonly<Record<string, readonly string[]>> };
  /** The demo the seed's fixtures describe (their `demo` part), for the presenter view; absent when they name none. */
  demo?: Demo;
}

/**
 * What the page needs to know of the server's layout: every path prefix, who may call what
 * under it, and how sandboxes are named. The page reads this instead of keeping its own copy.
 * `demo`: the title the seed's fixtures give the demo.
 */
export function pageSettings(demo?: Demo): PageSettings {
  const interfaces = INTERFACES.map(({ name, prefix, label }) => ({ name, prefix, label }));
  return {
    paths: PATHS,
    areas: AREAS.areas,
    interfaces,
    sandboxes: { prefix: SANDBOX_PREFIX, name: SANDBOX_NAME.source, rule: SANDBOX_NAME_RULE },
    objectTypes: OBJECT_TYPES,
    // What the state badges and the Terminate button need to know, from the server's own constants.
    states: { ...STATE_FAMILIES, noTeardown: NO_TEARDOWN_STATES },
    instances: { acceptedIn: ACCEPTED_IN, families: INSTANCE_FAMILIES },
    ...(demo ? { demo } : {}),
  };
}

interface Settings {
  body: Buffer;
  tag: string;
}

function settingsOf(demo?: Demo): Settings {
  const body = Buffer.from(JSON.stringify(pageSettings(demo)));
  return { body, tag: `"${createHash('sha1').update(body).digest('base64url')}"` };
}

const FileParamsSchema = Type.Object({ file: Type.String({ description: 'name of a file of the page' }) });
const PageSchema = Type.String({ description: 'the file itself (HTML, JavaScript, CSS or SVG)' });
const SettingsSchema = Type.Object({}, { additionalProperties: true, description: 'path prefixes and access areas' });

/**
 * The dashboard at /_emulator/ui: static files only. The page itself steers the emulator
 * through the public control API and the three interfaces, like any other client.
 */
export const uiRoutes: FastifyPluginAsyncTypebox<{ dir?: string }> = async (app, options) => {
  const refuseOthers = refuseOtherMethods(app);
  installErrorHandling(app, { unsupportedMediaType: 400 });
  const files = pageFiles(options.dir);
  // Only @fastify/static's reply.sendFile: the routes below decide which names exist, so that
  // anything else gets the JSON 404 of every other interface. The library's validators are
  // weak (W/"size-mtime") and its types come from its own table; both are set here instead.
  // It is run on the first file sent (http/deferred.ts), so a start loads none of its code.
  let sendFile: Promise<SendFile> | undefined;
  const send: PageSender = (reply, name) =>
    (sendFile ??= new PluginRecorder(app)
      .run(staticPlugin() as never, { root: files.dir, serve: false, etag: false, cacheControl: false, contentType: false })
      .then((recorder) => recorder.replyDecorations.get('sendFile') as SendFile)
      .catch((err: unknown) => {
        sendFile = undefined;
        throw err;
      })).then((fn) => fn.call(reply, name));

  /** GET /_emulator/ui: the dashboard page (redirected to the folder form, so relative links resolve). */
  app.get(
    '/',
    { schema: { hide: true, response: { 200: PageSchema, 302: Type.Null(), 304: Type.Null() } } },
    async (request, reply) => {
      const [path, query] = request.url.split('?');
      // Relative, so that the page also works behind a proxy that adds a path prefix.
      if (!path.endsWith('/')) return reply.redirect(`ui/${query === undefined ? '' : `?${query}`}`, 302);
      return sendPageFile(files, send, 'index.html', request, reply);
    },
  );

  // Made once per seed: the world's seed gives the demo's title.
  const plain = settingsOf();
  const bySeed = new WeakMap<object, Settings>();
  /** GET /_emulator/ui/paths.json: the prefixes and access rules, from the table the server itself uses. */
  app.get('/paths.json', { schema: { hide: true, response: { 200: SettingsSchema, 304: Type.Null() } } }, async (request, reply) => {
    const seed = request.world?.seedState;
    let settings = plain;
    if (seed?.demo) {
      settings = bySeed.get(seed) ?? settingsOf(seed.demo);
      bySeed.set(seed, settings);
    }
    return sendBuffer(settings.body, 'application/json; charset=utf-8', settings.tag, request, reply);
  });

  /** GET /_emulator/ui/<file>: the page's scripts, style sheet and icon. */
  app.get(
    '/:file',
    { schema: { hide: true, params: FileParamsSchema, response: { 200: PageSchema, 304: Type.Null(), 404: ErrorBodySchema } } },
    async (request, reply) => sendPageFile(files, send, request.params.file, request, reply),
  );
  // 405 for the methods a path does not serve, from the routes above.
  refuseOthers();
};

/** @fastify/static's reply.sendFile, called with the reply as `this`. */
type SendFile = (this: FastifyReply, name: string) => FastifyReply;
/** Sends a file of the page's folder as the answer. */
type PageSender = (reply: FastifyReply, name: string) => Promise<FastifyReply>;

async function sendPageFile(files: PageFiles, send: PageSender, name: string, request: FastifyRequest, reply: FastifyReply) {
  const type = files.types.get(name);
  const info = type === undefined ? undefined : await stat(join(files.dir, name)).catch(() => undefined);
  if (type === undefined || !info?.isFile()) throw notFound(`the dashboard has no file '${name}'`);
  // Size and modification time, like most web servers: a strong validator without reading the file.
  const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  if (revalidated(request, reply, etag)) return reply.code(304).send();
  reply.type(type);
  return send(reply, name);
}

function sendBuffer(body: Buffer, type: string, etag: string, request: FastifyRequest, reply: FastifyReply) {
  if (revalidated(request, reply, etag)) return reply.code(304).send();
  return reply.type(type).send(body);
}

/** Sets the headers every answer of the page carries; true when the client's copy is current. */
function revalidated(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  // no-cache: the browser revalidates each load, so an upgraded emulator never runs a stale page.
  reply.headers({ ...SECURITY_HEADERS, etag, 'cache-control': 'no-cache' });
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
