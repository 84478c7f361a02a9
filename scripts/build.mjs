// Compiles src/ twice, as ES modules into dist/ and as CommonJS into dist/cjs/ (for require()
// and test runners that cannot load ES modules), and copies what tsc does not: the dashboard's
// files and the one plain CommonJS module.
//   node scripts/build.mjs             build
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build
//   node scripts/build.mjs --esm-only  no CommonJS build (the container image runs the ES modules)
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export async function build({ cjs = true } = {}) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  // The two passes share nothing; side by side they take the time of one on two cores.
  await Promise.all([tsc('tsconfig.build.json'), cjs && tsc('tsconfig.cjs.json')]);
  cpSync(join(root, 'src/ui/static'), join(root, 'dist/ui/static'), { recursive: true });
  for (const tree of cjs ? ['dist', 'dist/cjs'] : ['dist']) {
    mkdirSync(join(root, tree, 'core'), { recursive: true });
    for (const file of ['package-root.cjs', 'package-root.d.cts']) copyFileSync(join(root, 'src/core', file), join(root, tree, 'core', file));
  }
  // Without it, Node would read dist/cjs/*.js as ES modules (the package's "type" is "module").
  if (cjs) writeFileSync(join(root, 'dist/cjs/package.json'), '{ "type": "commonjs" }\n');
  // A partial build is never taken for a complete one.
  if (cjs) writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && !isStale()) process.exit(0);
  build({ cjs: !process.argv.includes('--esm-only') }).catch((err) => {
    process.stderr.write(`build: ${err.message}\n`);
    process.exit(1);
  });
}
