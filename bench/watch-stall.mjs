// The stall of a fixtures reload (WATCH): how long the server's event loop is held while a
// large fixtures folder (the large seed of bench/seeds.mjs: 1,000 started grids and
// BENCH_WATCH_ANNOTATIONS annotations) is read again after a change. Seen from outside, as
// bench/stall.mjs sees an import: a tight loop of GET /_emulator/health on one kept-alive
// connection, 1 ms apart, runs from the change until the reload is done (seed.loadedAt moves)
// and 300 ms after; the longest gap between two answers is the longest stall.
//
//   node bench/watch-stall.mjs         (after npm run build)    prints the table
//   BENCH_WATCH_ANNOTATIONS            annotations in the folder (default 200000)
//   BENCH_WATCH_ROUNDS                 reloads per server (default 5)
//   BENCH_WATCH_ENTRIES                comma-separated server entries to compare side by side
//                                      (default dist/cli/server.js); a copy of dist without
//                                      state-worker.js reads every folder on the main thread
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_ENTRY, markdownTable, median, num, request, sleep, startProcess } from './lib.mjs';
import { writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const ANNOTATIONS = num('BENCH_WATCH_ANNOTATIONS', 200_000);
const ROUNDS = num('BENCH_WATCH_ROUNDS', 5);
const ENTRIES = (process.env.BENCH_WATCH_ENTRIES ?? SERVER_ENTRY).split(',');
const TAIL_MS = 300;

const dir = mkdtempSync(join(tmpdir(), 'bench-watch-'));
writeSeed(dir, { annotations: ANNOTATIONS });
const file = join(dir, 'annotations.json');
const text = readFileSync(file, 'utf8');

/** One reload: the file written again (same entries, new modification time); the longest gap between health answers until it is loaded. */
async function reloadGap(port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const health = async () => JSON.parse((await request(port, { path: '/_emulator/health', agent, timeoutMs: 60_000 })).text);
  const before = (await health()).seed.loadedAt;
  // Written before the clock starts: the write holds this process's loop, not the server's.
  writeFileSync(file, text);
  const t0 = performance.now();
  let last = t0;
  let gap = 0;
  let doneAt = Infinity;
  while (performance.now() < doneAt + TAIL_MS) {
    const h = await health();
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    if (doneAt === Infinity && h.seed.loadedAt !== before) doneAt = now;
    if (now - t0 > 120_000) throw new Error('no reload within 120 s');
    await sleep(1);
  }
  agent.destroy();
  return { gap, took: doneAt - t0 };
}

const rows = [];
try {
  const servers = [];
  for (const entry of ENTRIES) servers.push({ entry, server: await startProcess({ entry, env: { FIXTURES_DIR: dir, WATCH: 'true' }, timeoutMs: 180_000 }), gaps: [], took: [] });
  // Side by side: each round reloads on every server in turn.
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of servers) {
      const { gap, took } = await reloadGap(s.server.port);
      s.gaps.push(gap);
      s.took.push(took);
    }
  }
  for (const s of servers) {
    await s.server.stop();
    rows.push([s.entry, median(s.gaps).toFixed(0), Math.max(...s.gaps).toFixed(0), median(s.took).toFixed(0)]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`fixtures reload of ${ANNOTATIONS} annotations and 1000 grids, ${ROUNDS} rounds\n`);
console.log(markdownTable(['server', 'longest gap, median (ms)', 'longest gap, max (ms)', 'reload, median (ms)'], rows));
