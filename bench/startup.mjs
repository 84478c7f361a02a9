// Start-up, side by side: spawns the built emulator (dist/cli/server.js, the bundled demo
// seed) and the bare Fastify baseline (bench/baseline.mjs) in turn, N times each, and prints
// the median time from spawn to the first 200 of GET /_emulator/health, and their ratio.
// Alternating the two means a busy moment of the machine hits both alike.
//
//   node bench/startup.mjs              (npm run build first: it runs dist/)
//
// Environment:
//   STARTUP_RUNS       start-ups of each side (default 15)
//   STARTUP_LOG_LEVEL  LOG_LEVEL of the emulator (default silent, as bench/run.mjs starts it);
//                      'info' is the setting's own default, JSON lines on a pipe
//   STARTUP_CLI        1: also start the emulator through the command (dist/cli/cli.js, which
//                      serves when given no command)
//   STARTUP_FIRST      1: also time the first GET of the pages a start does not prepare
//                      (OpenAPI document, API reference, dashboard) on a fresh process
//   STARTUP_LARGE      1: also start every emulator side with the large seed (bench/seeds.mjs:
//                      100,000 annotations, 1,000 grids started on load)
//   STARTUP_OTHER      comma-separated paths of other server entries to start alongside,
//                      e.g. another build's dist/cli/server.js, for a before/after table
//
// bench/run.mjs can import alternateStarts() for the same measure in its table.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASELINE_ENTRY, SERVER_ENTRY, cpuSeconds, fmt, markdownTable, median, num, request, startProcess } from './lib.mjs';
import { LARGE_SEED, writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const RUNS = Math.round(num('STARTUP_RUNS', 15));
const LOG_LEVEL = process.env.STARTUP_LOG_LEVEL || 'silent';
const CLI_ENTRY = fileURLToPath(new URL('../dist/cli/cli.js', import.meta.url));

const FIRST_PATHS = ['/_emulator/openapi.json', '/_emulator/docs', '/_emulator/docs/static/swagger-ui-bundle.js', '/_emulator/ui/', '/_emulator/ui/app.js'];

const log = (line) => process.stderr.write(`${line}\n`);

/** Spawn to healthy, then stopped; the time to healthy and the CPU time it took. */
async function once(side) {
  const proc = await startProcess(side.start);
  try {
    // The CPU time the process took to get there (/proc, 10 ms ticks): unlike the time to
    // healthy, it hardly depends on what else the machine runs.
    const cpuMs = cpuSeconds(proc.pid) * 1000;
    return { startMs: proc.startMs, cpuMs, first: side.first ? await firstRequests(proc.port) : undefined };
  } finally {
    await proc.stop();
  }
}

/** The time of the first GET of each page on a process that has answered health only. */
async function firstRequests(port) {
  const out = {};
  for (const path of FIRST_PATHS) {
    const t = performance.now();
    const res = await request(port, { path });
    out[path] = performance.now() - t;
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  return out;
}

/**
 * Starts each side in turn, `runs` times (after one uncounted warm-up start of each, for the
 * file system cache), and returns, per side, every run's { startMs, cpuMs, first }. A side is
 * { start: startProcess options, first: also time FIRST_PATHS }.
 */
export async function alternateStarts(sides, runs) {
  const results = sides.map(() => []);
  for (const side of sides) await once(side);
  for (let i = 0; i < runs; i++) {
    for (const [k, side] of sides.entries()) results[k].push(await once(side));
  }
  return results;
}

/** A bare Fastify side: the baseline answering health with a fixed body written to `dir`. */
export function bareSide(dir) {
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, '{"status":"ok"}');
  return { label: 'bare Fastify (bench/baseline.mjs)', start: { entry: BASELINE_ENTRY, env: { BODY_FILE: bodyFile } }, baseline: true };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-startup-'));
  try {
    const sides = [
      { label: 'emulator (dist/cli/server.js)', start: { entry: SERVER_ENTRY, env: { LOG_LEVEL } }, first: process.env.STARTUP_FIRST === '1' },
      bareSide(work),
      ...(process.env.STARTUP_CLI === '1'
        ? [{ label: 'emulator (dist/cli/cli.js serve)', start: { entry: CLI_ENTRY, env: { LOG_LEVEL } } }]
        : []),
      ...(process.env.STARTUP_OTHER ?? '')
        .split(',')
        .filter(Boolean)
        .map((entry) => ({ label: entry, start: { entry, env: { LOG_LEVEL } }, first: process.env.STARTUP_FIRST === '1' })),
    ];
    if (process.env.STARTUP_LARGE === '1') {
      // The same emulator sides again, each with the benchmark's large seed.
      const large = writeSeed(join(work, 'large-seed'), LARGE_SEED);
      const emulators = sides.filter((side) => !side.baseline);
      for (const side of emulators) sides.push({ label: `${side.label}, large seed`, start: { ...side.start, env: { ...side.start.env, FIXTURES_DIR: large } } });
    }
    const results = await alternateStarts(sides, RUNS);
    const baseRuns = results[sides.findIndex((s) => s.baseline)];
    const base = median(baseRuns.map((r) => r.startMs));
    const baseCpu = median(baseRuns.map((r) => r.cpuMs));
    const rows = sides.map((side, k) => {
      const times = results[k].map((r) => r.startMs);
      const m = median(times);
      const cpu = median(results[k].map((r) => r.cpuMs));
      return [side.label, fmt.ms(m), fmt.ms(Math.min(...times)), fmt.ms(Math.max(...times)), `${(m / base).toFixed(2)}x`, fmt.ms(cpu), `${(cpu / baseCpu).toFixed(2)}x`];
    });
    log(`LOG_LEVEL=${LOG_LEVEL}, ${RUNS} start-ups of each, alternating`);
    console.log(markdownTable(['Start to healthy', 'median', 'min', 'max', 'vs bare', 'CPU to healthy (median)', 'CPU vs bare'], rows));
    const timed = sides.map((side, k) => ({ side, firsts: results[k].map((r) => r.first).filter(Boolean) })).filter((t) => t.firsts.length);
    if (timed.length) {
      console.log('');
      console.log(
        markdownTable(
          ['First request after start (median)', ...timed.map((t) => t.side.label)],
          FIRST_PATHS.map((p) => [`GET ${p}`, ...timed.map((t) => fmt.ms(median(t.firsts.map((f) => f[p]))))]),
        ),
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
