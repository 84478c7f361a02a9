// The container image's size: builds the image from the Dockerfile, with the build arguments
// the container test uses (scripts/container-test.sh), and measures it. Part of the benchmark
// (bench/run.mjs calls imageBench()), and runnable alone: `node bench/image.mjs`.
//
// Engine: CONTAINER_ENGINE, else docker when `docker info` answers, else podman. NODE_IMAGE
// sets the base image; with podman and no NODE_IMAGE, the script PODMAN_SETUP names (default
// ../shared/container/setup-podman.sh beside the repository), if present, prints a local one.
// KEEP_IMAGE=1 keeps the image (tag cloud-emulator:bench).
// Sizes are decimal megabytes (10^6 bytes) of the uncompressed image, as `docker images` and
// `podman images` show them; a registry stores and sends it compressed, smaller.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ROOT, markdownTable } from './lib.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const run = promisify(execFile);
const TARGET_MB = 100;
const MB = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

async function ok(cmd, args, timeout = 20_000) {
  try {
    await run(cmd, args, { timeout });
    return true;
  } catch {
    return false;
  }
}

async function pickEngine() {
  const forced = process.env.CONTAINER_ENGINE;
  if (forced) return (await ok(forced, ['--version'])) ? forced : undefined;
  if (await ok('docker', ['info'])) return 'docker';
  if (await ok('podman', ['--version'])) return 'podman';
  return undefined;
}

/** Which part of the Dockerfile a layer holds, by what created it (Podman's or Docker's wording). */
function layerName(createdBy) {
  if (/ in \/ *$|COPY \/rootfs\/? \//.test(createdBy)) return 'runtime (node, its libraries, /etc)';
  if (/node_modules/.test(createdBy)) return 'node_modules';
  if (/\bdist\b/.test(createdBy)) return 'dist';
  if (/fixtures/.test(createdBy)) return 'fixtures';
  return createdBy.replace(/^\/bin\/sh -c (#\(nop\) )?/, '').slice(0, 40);
}

/** The image's layers, bottom first, in bytes: `podman history --format json` is one array, Docker's `{{json .}}` one object a line. */
async function layers(engine, tag) {
  const args = engine === 'podman' ? ['history', '--format', 'json', tag] : ['history', '--no-trunc', '--human=false', '--format', '{{json .}}', tag];
  const out = (await run(engine, args)).stdout.trim();
  const entries = out.startsWith('[') ? JSON.parse(out) : out.split('\n').map((line) => JSON.parse(line));
  return entries
    .map((e) => ({ bytes: Number(e.size ?? e.Size), name: layerName(String(e.CreatedBy ?? e.createdBy ?? '')) }))
    .filter((layer) => layer.bytes >= 1e5)
    .reverse();
}

/**
 * Builds the image and returns table rows [measure, value, detail, target, met]; one row saying
 * it was not measured when no engine is there or the build fails.
 */
export async function imageBench({ log = (line) => process.stderr.write(`image: ${line}\n`) } = {}) {
  const engine = await pickEngine();
  if (!engine) return [['Image size', 'n/a', 'not measured: no container engine (docker or podman) here', `< ${TARGET_MB} MB`, '-']];
  let nodeImage = process.env.NODE_IMAGE;
  const setup = resolve(ROOT, process.env.PODMAN_SETUP ?? '../shared/container/setup-podman.sh');
  if (engine === 'podman' && !nodeImage && existsSync(setup)) {
    const { stdout } = await run('bash', [setup], { timeout: 600_000 });
    nodeImage = stdout.trim().split('\n').pop();
  }
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const work = mkdtempSync(join(tmpdir(), 'image-bench-'));
  const tag = engine === 'podman' ? 'localhost/cloud-emulator:bench' : 'cloud-emulator:bench';
  try {
    let dockerfile = join(ROOT, 'Dockerfile');
    const args = ['build', '-t', tag, '--build-arg', `VERSION=${version}`];
    if (nodeImage) args.push('--build-arg', `NODE_IMAGE=${nodeImage}`);
    if (engine === 'podman') {
      // Podman's default OCI format drops HEALTHCHECK; Podman 4 refuses --start-interval.
      args.push('--format', 'docker');
      const help = await run('podman', ['build', '--help']).then((r) => r.stdout, () => '');
      if (!help.includes('start-interval')) {
        dockerfile = join(work, 'Dockerfile');
        writeFileSync(dockerfile, readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/ --start-interval=\S*/g, ''));
      }
    }
    args.push('-f', dockerfile, ROOT);
    log(`${engine} build, base ${nodeImage ?? 'node:22-alpine (the Dockerfile default)'}`);
    try {
      await run(engine, args, { timeout: 900_000, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const tail = String(err.stderr || err.stdout || err.message).trim().split('\n').slice(-3).join(' / ');
      return [['Image size', 'n/a', `not measured: the ${engine} build failed: ${tail}`, `< ${TARGET_MB} MB`, '-']];
    }
    const size = Number((await run(engine, ['image', 'inspect', '--format', '{{.Size}}', tag])).stdout.trim());
    const parts = await layers(engine, tag);
    // The one file that bounds the size: read from inside the image, which has no shell.
    const nodeBytes = Number(
      (await run(engine, ['run', '--rm', '--entrypoint', 'node', tag, '-e', 'process.stdout.write(String(require("fs").statSync(process.execPath).size))'])).stdout,
    );
    const base = nodeImage ?? 'node:22-alpine';
    return [
      [
        'Image size',
        MB(size),
        `${engine} image inspect, base ${base}; layers: ${parts.map((l) => `${l.name} ${MB(l.bytes)}`).join(', ')}`,
        `< ${TARGET_MB} MB`,
        size < TARGET_MB * 1e6 ? 'yes' : 'NO',
      ],
      ['Node binary in the image', MB(nodeBytes), `${base}'s own, as it ships; ${MB(size - nodeBytes)} is everything else`, '-', '-'],
    ];
  } finally {
    if (process.env.KEEP_IMAGE !== '1') await run(engine, ['rmi', '-f', tag]).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = await imageBench();
  process.stdout.write(`${markdownTable(['image', 'value', 'detail', 'target', 'met'], rows)}\n`);
}
