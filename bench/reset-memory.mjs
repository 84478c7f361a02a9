// Memory and time of resets and sandboxes on the large seed, all in one server process, so
// that "after load" and "after N resets" are read from the same process: RSS 3 s after it is
// healthy, then N resets (each timed), then RSS again after 3 s idle; then N more resets, each
// followed by a grid read (which makes that grid's start of the seed), and RSS again; then sandboxes created
// from the seed and deleted, timed, with the RSS they hold. `node bench/reset-memory.mjs` runs
// it alone (after `npm run build`) and prints a markdown table; `resetMemoryBench` returns the
// table rows for a bigger report. Settings (environment):
//   BENCH_RESETS          resets measured (default 100)
//   BENCH_FORKS           sandboxes created from the large seed, held at once, then deleted (default 20)
//   BENCH_SERVER          the server entry to run (default dist/cli/server.js)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, markdownTable, median, num, request, rssMiB, sleep, startProcess } from './lib.mjs';
import { BENCH_TOKEN, FIRST_GRID_ID, LARGE_SEED, writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const LARGE = LARGE_SEED;
/** How long the process is left alone before its RSS is read (lazy loads, heap settling). */
const SETTLE_MS = 3000;
/** "Within 10%": the RSS after the resets may exceed the RSS after load by this ratio. */
const TARGET_RATIO = 1.1;
const GRID_PATH = `/concerto/services/rest/CloudService/v1/grid/${FIRST_GRID_ID}`;
const AUTH = { 'x-auth-token': BENCH_TOKEN };

/** Peak resident set size of a process so far, in MiB (VmHWM, Linux). */
function peakRssMiB(pid) {
  const kb = Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** One request on a kept-alive connection, timed; fails unless it answers `status`. */
async function timed(port, agent, method, path, status, headers = {}) {
  const t0 = performance.now();
  const res = await request(port, { method, path, agent, headers, timeoutMs: 60_000 });
  const ms = performance.now() - t0;
  if (res.status !== status) throw new Error(`${method} ${path}: answered ${res.status}, expected ${status}: ${res.text.slice(0, 300)}`);
  return ms;
}

/**
 * The measures, as rows [measure, value, detail, target, met]. `seedDir` is a large seed
 * folder (written to a temporary folder when not given).
 */
export async function resetMemoryBench({ resets = 100, forks = 20, seedDir, env = {}, entry, log = () => {} } = {}) {
  const work = seedDir ? undefined : mkdtempSync(join(tmpdir(), 'cloud-emulator-reset-memory-'));
  const dir = seedDir ?? writeSeed(join(work, 'large-seed'), LARGE);
  const server = await startProcess({
    ...(entry ? { entry } : {}),
    env: { FIXTURES_DIR: dir, RATE_LIMIT_MAX: String(1_000_000_000), MAX_SANDBOXES: String(Math.max(forks, 1)), ...env },
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await sleep(SETTLE_MS);
    const afterLoad = rssMiB(server.pid);
    log(`RSS after load: ${fmt.mib(afterLoad)}`);

    const loadPeak = peakRssMiB(server.pid);
    const resetTimes = [];
    let duringResets = 0;
    for (let i = 0; i < resets; i++) {
      resetTimes.push(await timed(server.port, agent, 'POST', '/_emulator/reset', 200));
      duringResets = Math.max(duringResets, rssMiB(server.pid));
    }
    await sleep(SETTLE_MS);
    const afterResets = rssMiB(server.pid);
    log(`reset: median ${fmt.ms(median(resetTimes))}; RSS after ${resets} resets: ${fmt.mib(afterResets)}`);

    // The same again, each reset followed by a read of a grid: the read copies the seed's
    // records and makes that grid's start (its servers, schedule and journal), which a reset
    // alone leaves for the first read; the other grids' starts wait for their own first reads.
    const readTimes = [];
    let duringReads = 0;
    for (let i = 0; i < resets; i++) {
      await timed(server.port, agent, 'POST', '/_emulator/reset', 200);
      readTimes.push(await timed(server.port, agent, 'GET', GRID_PATH, 200, AUTH));
      duringReads = Math.max(duringReads, rssMiB(server.pid));
    }
    await sleep(SETTLE_MS);
    const afterReads = rssMiB(server.pid);
    log(`first grid read after a reset: median ${fmt.ms(median(readTimes))}; RSS after ${resets} more resets, each read: ${fmt.mib(afterReads)}`);

    const rows = [
      ['RSS after loading the large seed', fmt.mib(afterLoad), `VmRSS ${SETTLE_MS / 1000} s after healthy; peak while loading (VmHWM) ${fmt.mib(loadPeak)}`, '-', '-'],
      [
        `RSS after ${resets} resets, large seed`,
        fmt.mib(afterResets),
        `same process, ${SETTLE_MS / 1000} s after the last reset: ${fmt.pct(afterResets / afterLoad)} of after load; highest after any reset ${fmt.mib(duringResets)}`,
        `<= ${fmt.pct(TARGET_RATIO)} of after load`,
        afterResets <= afterLoad * TARGET_RATIO ? 'yes' : 'NO',
      ],
      ['POST /_emulator/reset, large seed', fmt.ms(median(resetTimes)), `median of ${resets} (max ${fmt.ms(Math.max(...resetTimes))})`, '-', '-'],
      [
        `RSS after ${resets} more resets, each followed by a grid read`,
        fmt.mib(afterReads),
        `same process, ${SETTLE_MS / 1000} s after the last: ${fmt.pct(afterReads / afterLoad)} of after load; highest after any ${fmt.mib(duringReads)}`,
        `<= ${fmt.pct(TARGET_RATIO)} of after load`,
        afterReads <= afterLoad * TARGET_RATIO ? 'yes' : 'NO',
      ],
      ['First GET of a grid after a reset, large seed', fmt.ms(median(readTimes)), `median of ${resets} (max ${fmt.ms(Math.max(...readTimes))}); makes that grid's start of the seed`, '-', '-'],
    ];

    if (forks > 0) {
      const creates = [];
      for (let i = 0; i < forks; i++) creates.push(await timed(server.port, agent, 'PUT', `/_emulator/sandboxes/large-${i}`, 201));
      await sleep(SETTLE_MS);
      const held = rssMiB(server.pid);
      const deletes = [];
      for (let i = 0; i < forks; i++) deletes.push(await timed(server.port, agent, 'DELETE', `/_emulator/sandboxes/large-${i}`, 204));
      log(`sandbox create: median ${fmt.ms(median(creates))}; RSS with ${forks} held: ${fmt.mib(held)}`);
      rows.push(
        ['PUT /_emulator/sandboxes/<name> (from the large seed)', fmt.ms(median(creates)), `median of ${forks} (max ${fmt.ms(Math.max(...creates))})`, '-', '-'],
        ['DELETE /_emulator/sandboxes/<name> (large seed)', fmt.ms(median(deletes)), `median of ${forks}`, '-', '-'],
        [
          `RSS per sandbox held, large seed`,
          fmt.mib((held - afterResets) / forks),
          `(RSS with ${forks} held, ${fmt.mib(held)}, less RSS after the resets) / ${forks}`,
          '-',
          '-',
        ],
      );
    }
    return rows;
  } finally {
    agent.destroy();
    await server.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await resetMemoryBench({
    resets: Math.round(num('BENCH_RESETS', 100)),
    forks: Math.round(num('BENCH_FORKS', 20)),
    log: (message) => process.stderr.write(`${message}\n`),
  });
  process.stdout.write(`${markdownTable(['measure', 'value', 'detail', 'target', 'met'], rows)}\n`);
}
