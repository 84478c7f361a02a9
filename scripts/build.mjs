// Compiles src/ twice, as ES modules into dist/ and as CommonJS into dist/cjs/ (for require()
// and test runners that cannot load ES modules), and copies what tsc does not: the dashboard's
// files and the plain CommonJS modules. Then bundles the two process entries (see bundleEntries).
//   node scripts/build.mjs             build
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build
//   node scripts/build.mjs --esm-only  no CommonJS build (the container image runs the ES modules)
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helpIfAsked } from '../bench/help.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(root, 'dist', '.build-stamp');
const INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.cjs.json', 'scripts/build.mjs'];

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

/** True when dist/ is missing or older than any source it is built from. */
export function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((input) => existsSync(join(root, input)) && newest(join(root, input)) > built);
}

function tsc(project) {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '-p', project], { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsc -p ${project} failed (exit code ${code})`))));
  });
}

/** Paths under src/ of the files tsc does not emit: plain CommonJS modules and their types. */
function plainCommonJs(dir = 'src') {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return path === 'src/ui/static' ? [] : plainCommonJs(path);
    return /\.(cjs|d\.cts)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * Packages left out of the bundle, loaded from node_modules as installed: pino starts its
 * transports (pino-pretty) in worker threads that load files by path; the API reference, the
 * OpenAPI document and the dashboard's files are served by packages loaded on their first
 * request (src/http/deferred-packages.cjs), which a start then neither compiles nor runs.
 */
const BUNDLE_EXTERNAL = ['pino', 'pino-pretty', 'thread-stream', '@fastify/swagger', '@fastify/swagger-ui', '@fastify/static'];

// Each bundle file's own place, for the CommonJS code in it (`require`, `__dirname`).
const BUNDLE_BANNER = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { dirname as __bundleDirname, join as __bundleJoin } from 'node:path';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  'const __bundleFile = __bundleFileURLToPath(import.meta.url);',
  'const require = __bundleCreateRequire(__bundleFile);',
  'const __filename = __bundleFile;',
  'const __dirname = __bundleDirname(__bundleFile);',
].join('\n');

/**
 * A bundled package that reads its own files (@fastify/swagger-ui serves its folder static/)
 * must find them where the package is installed, not beside the bundle: in each of its
 * modules that names `__dirname` or `__filename`, they are set to the module's installed
 * place, found at run time the way Node would find the package from the bundle.
 */
const installedPlaces = {
  name: 'installed-places',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      // node_modules/a/node_modules/@b/c/lib/x.js: package a, then @b/c from a's folder.
      const parts = args.path.split(`${sep}node_modules${sep}`).slice(1);
      const chain = parts.map((part) => part.split(sep).slice(0, part.startsWith('@') ? 2 : 1).join('/'));
      let entry = args.path.slice(0, args.path.indexOf(`${sep}node_modules${sep}`) + 1);
      for (const name of chain) entry = createRequire(entry).resolve(name);
      const main = chain.reduce((from, name) => `__bundleCreateRequire(${from}).resolve(${JSON.stringify(name)})`, '__bundleFile');
      const place = `__bundleJoin(__bundleDirname(${main}), ${JSON.stringify(relative(dirname(entry), args.path))})`;
      return { contents: `var __filename = ${place}, __dirname = __bundleDirname(__filename);\n${text}`, loader: 'js' };
    });
  },
};

/**
 * The process entries, dist/cli/server.js (`npm start`, the container) and dist/cli/cli.js
 * (the command), bundled with the modules they use, dependencies included, into one shared
 * file beside them: loading a few hundred modules one by one (resolving, reading and
 * compiling each) was the larger part of a start. What they run is the code tsc emitted,
 * unchanged; the library (dist/index.js, dist/cjs/) is not bundled.
 */
async function bundleEntries() {
  const esbuild = await import('esbuild').catch((err) => {
    if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new Error('esbuild, a devDependency, is not installed: run npm install (or npm ci)');
  });
  const result = await esbuild.build({
    entryPoints: ['server', 'cli'].map((name) => join(root, 'dist/cli', `${name}.js`)),
    outdir: join(root, 'dist/cli'),
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    chunkNames: 'bundle-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    external: BUNDLE_EXTERNAL,
    banner: { js: BUNDLE_BANNER },
    plugins: [installedPlaces],
    // Less text to parse at each start; names are kept, so stack traces still name functions.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
  if (result.errors.length) throw new Error('bundling failed');
}

export async function build({ cjs = true } = {}) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  // The two passes share nothing; side by side they take the time of one on two cores.
  await Promise.all([tsc('tsconfig.build.json'), cjs && tsc('tsconfig.cjs.json')]);
  cpSync(join(root, 'src/ui/static'), join(root, 'dist/ui/static'), { recursive: true });
  for (const file of plainCommonJs()) {
    for (const tree of cjs ? ['dist', 'dist/cjs'] : ['dist']) {
      const to = join(root, tree, relative('src', file));
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(join(root, file), to);
    }
  }
  await bundleEntries();
  // Without it, Node would read dist/cjs/*.js as ES modules (the package's "type" is "module").
  if (cjs) writeFileSync(join(root, 'dist/cjs/package.json'), '{ "type": "commonjs" }\n');
  // A partial build is never taken for a complete one.
  if (cjs) writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  helpIfAsked(import.meta.url);
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && !isStale()) process.exit(0);
  build({ cjs: !process.argv.includes('--esm-only') }).catch((err) => {
    process.stderr.write(`build: ${err.message}\n`);
    process.exit(1);
  });
}
