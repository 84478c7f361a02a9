// What a write of STATE_FILE costs in memory: one process (the built package, in-process, no
// HTTP) on the bench's generated seed (bench/seeds.mjs: ANNOTATIONS annotations, 20 grids),
// the default world changed and SANDBOXES sandboxes beside it (CHANGED of them changed, so
// written whole; the others references to the seed), writes the file; printed: the file's
// size, the RSS before the write, the peak RSS during it (VmHWM, reset just before the write),
// and the peak of the JS heap in use (sampled every millisecond while the write yields), for
// the first write after the start and for a second one. Run `node --expose-gc
// bench/state-file-memory.mjs` after `npm run build`. Settings (environment):
//   SANDBOXES     sandboxes (default 20)
//   CHANGED       of them changed, each then written whole (default 0)
//   ANNOTATIONS   annotations in the seed (default 30000: a file of about 9 MiB)
//   ALERTS        alerts in the seed, each with a full history (1000 fires) (default 0)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, loadConfig, loadFixtures } from '../dist/index.js';
import { helpIfAsked } from './help.mjs';
import { BENCH_TOKEN, FIRST_GRID_ID, writeSeed } from './seeds.mjs';

helpIfAsked(import.meta.url);

const SANDBOXES = Number(process.env.SANDBOXES ?? 20);
const CHANGED = Number(process.env.CHANGED ?? 0);
const ANNOTATIONS = Number(process.env.ANNOTATIONS ?? 30_000);
const ALERTS = Number(process.env.ALERTS ?? 0);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const MiB = 1024 * 1024;
const rss = () => process.memoryUsage().rss;
/** Peak RSS of this process since the last reset, bytes (VmHWM, Linux). */
const peakRss = () => Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
/** Resets VmHWM to the current RSS (Linux 4.0 on); false where it cannot be. */
function resetPeak() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'state-file-memory-'));
const file = join(dir, 'state.json');
try {
  const fixturesDir = join(dir, 'fixtures');
  writeSeed(fixturesDir, { grids: 20, startedGrids: 0, annotations: ANNOTATIONS, domains: 10 });
  const history = Array.from({ length: 1000 }, (_, i) => ({ action: 'fire', at: 1_700_000_000_000 + i * 60_000, message: `Checkout error rate above 5% on shop.example.com, fire ${i}: ${'x'.repeat(200)}`, subject: '[mPulse] alert' }));
  writeFileSync(
    join(fixturesDir, 'alerts.json'),
    JSON.stringify({ alerts: Array.from({ length: ALERTS }, (_, i) => ({ uid: `alert-${i}`, name: `Alert ${i}`, enabled: true, channels: [], state: 'firing', history })) }),
  );
  const config = loadConfig({}, { logLevel: 'silent', fixturesDir, stateFile: file, stateFlushIntervalMs: 0, maxSandboxes: SANDBOXES, sandboxIdleTimeoutMs: 0 });
  const app = await buildApp({ config, fixtures: await loadFixtures(fixturesDir) });
  await app.ready();
  const headers = { 'x-auth-token': BENCH_TOKEN };
  // A change that leaves the annotations alone (a grid started), as most changes do.
  const change = async (prefix, grid) => {
    const res = await app.inject({ method: 'POST', url: `${prefix}/concerto/services/rest/CloudService/v1/grid/${grid}/action`, headers, payload: { action: 'start' } });
    if (res.statusCode !== 202) throw new Error(`start grid ${grid} in ${prefix || 'the default world'}: ${res.statusCode} ${res.body}`);
  };
  for (let i = 0; i < SANDBOXES; i++) {
    const res = await app.inject({ url: `/sandbox/s${i}/_emulator/health` });
    if (res.statusCode !== 200) throw new Error(`sandbox s${i}: ${res.statusCode}`);
    if (i < CHANGED) await change(`/sandbox/s${i}`, FIRST_GRID_ID);
  }

  /** One write after a change of the default world, measured. */
  async function measured(grid) {
    await change('', grid);
    globalThis.gc();
    globalThis.gc();
    const before = rss();
    const heapBefore = process.memoryUsage().heapUsed;
    const peakKnown = resetPeak();
    let heapPeak = heapBefore;
    let rssPeak = before;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      heapPeak = Math.max(heapPeak, m.heapUsed);
      rssPeak = Math.max(rssPeak, m.rss);
    }, 1);
    const t0 = performance.now();
    await app.statePersistence.flush();
    const ms = performance.now() - t0;
    clearInterval(sampler);
    const peak = peakKnown ? peakRss() : rssPeak;
    return {
      writeMs: Math.round(ms),
      rssBeforeMiB: +(before / MiB).toFixed(1),
      rssPeakAboveMiB: +((peak - before) / MiB).toFixed(1),
      heapPeakAboveMiB: +((heapPeak - heapBefore) / MiB).toFixed(1),
      peakFrom: peakKnown ? 'VmHWM' : 'sampled',
    };
  }
  const first = await measured(FIRST_GRID_ID + 1);
  const second = await measured(FIRST_GRID_ID + 2);
  const size = statSync(file).size;
  const sandboxes = Object.values(JSON.parse(readFileSync(file, 'utf8')).sandboxes ?? {});
  console.log(
    JSON.stringify({
      fileMiB: +(size / MiB).toFixed(1),
      sandboxes: sandboxes.length,
      writtenWhole: sandboxes.filter((s) => s.state).length,
      first,
      second,
    }),
  );
  await app.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
