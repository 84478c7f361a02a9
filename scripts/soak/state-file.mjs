// The state file and state imports under `npm run soak` (part `state`):
//
//   - 20 sandboxes nobody changed (made by a health GET each): the state file's size and the
//     server's idle CPU before and after. A sandbox nobody changed is a reference to its seed,
//     and nothing is written (or hashed) while nothing changes: the file grows by a few
//     kilobytes and idle CPU stays near zero.
//   - concurrent imports into two sandboxes: the small one's latency alone, and sent while a
//     large one into another sandbox is being read. Each world's imports have a line of their
//     own, so the small one does not wait for the large one.
//
// Environment: SOAK_STATE_ANNOTATIONS (30000: the seed's size), SOAK_STATE_IDLE_SECONDS (5).
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, num, request, sleep, startProcess } from '../../bench/lib.mjs';
import { writeSeed } from '../../bench/seeds.mjs';

const ANNOTATIONS = Math.round(num('SOAK_STATE_ANNOTATIONS', 30_000));
const IDLE_SECONDS = num('SOAK_STATE_IDLE_SECONDS', 5);
const FLUSH_MS = 200;

const log = (message) => process.stderr.write(`${message}\n`);
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

/** CPU used by the process over `seconds` with no request, as a share of one core. */
async function idleCpu(pid, seconds) {
  const before = cpuSeconds(pid);
  await sleep(seconds * 1000);
  return (cpuSeconds(pid) - before) / seconds;
}

/** Milliseconds a PUT of `body` takes. */
async function timedPut(port, path, body) {
  const t0 = performance.now();
  const res = await request(port, { method: 'PUT', path, body, timeoutMs: 120_000 });
  return { status: res.status, ms: performance.now() - t0, at: performance.now() };
}

export async function stateFile() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-soak-state-'));
  const failures = [];
  const check = (ok, message) => {
    if (!ok) failures.push(message);
  };
  const fixtures = join(work, 'fixtures');
  mkdirSync(fixtures);
  writeSeed(fixtures, { grids: 20, startedGrids: 0, annotations: ANNOTATIONS, domains: 10 });
  const file = join(work, 'state.json');
  log(`state: a seed of ${ANNOTATIONS} annotations, STATE_FILE flushed every ${FLUSH_MS} ms ...`);
  const server = await startProcess({ env: { FIXTURES_DIR: fixtures, STATE_FILE: file, STATE_FLUSH_INTERVAL_MS: String(FLUSH_MS), RATE_LIMIT_MAX: '1000000000' } });
  try {
    // Part 1: untouched sandboxes.
    await sleep(3 * FLUSH_MS);
    const sizeBefore = statSync(file).size;
    const cpuBefore = await idleCpu(server.pid, IDLE_SECONDS);
    for (let i = 0; i < 20; i++) {
      const res = await request(server.port, { path: `/sandbox/soak${i}/_emulator/health` });
      check(res.status === 200, `health of sandbox soak${i} answered ${res.status}`);
    }
    await sleep(5 * FLUSH_MS);
    const sizeAfter = statSync(file).size;
    const cpuAfter = await idleCpu(server.pid, IDLE_SECONDS);
    log(`  state file: ${mib(sizeBefore)} alone, ${mib(sizeAfter)} with 20 untouched sandboxes (+${sizeAfter - sizeBefore} bytes)`);
    log(`  idle CPU: ${(cpuBefore * 100).toFixed(1)}% of a core before, ${(cpuAfter * 100).toFixed(1)}% after`);
    check(sizeAfter - sizeBefore < 20 * 1024, `20 untouched sandboxes grew the state file by ${sizeAfter - sizeBefore} bytes`);
    check(cpuAfter < 0.05, `idle CPU with 20 untouched sandboxes: ${(cpuAfter * 100).toFixed(1)}% of a core`);

    // Part 2: imports into two sandboxes. The large body is the seed's export; the small one
    // the same state with a few hundred annotations.
    const exported = (await request(server.port, { path: '/_emulator/state', timeoutMs: 120_000 })).text;
    const state = JSON.parse(exported);
    const large = Buffer.from(exported);
    const small = Buffer.from(JSON.stringify({ ...state, annotations: state.annotations.slice(0, Math.min(2500, state.annotations.length)) }));
    await timedPut(server.port, '/_emulator/sandboxes/small', small); // warm-up: the worker's first start
    const alone = await timedPut(server.port, '/_emulator/sandboxes/small', small);
    const bigPut = timedPut(server.port, '/_emulator/sandboxes/large', large);
    await sleep(50);
    const behind = await timedPut(server.port, '/_emulator/sandboxes/small', small);
    const big = await bigPut;
    log(`  imports: small (${mib(small.length)}) ${alone.ms.toFixed(0)} ms alone, ${behind.ms.toFixed(0)} ms sent during a large one (${mib(large.length)}, ${big.ms.toFixed(0)} ms)`);
    check(alone.status === 200 && behind.status === 200 && big.status === 201, `import statuses: ${alone.status}, ${behind.status}, ${big.status}`);
    check(behind.at < big.at, 'the small import waited for the large one in another sandbox');
    check(server.child.exitCode === null, 'the server exited');
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length === 0) log('state: OK');
  else log(`state: FAILED\n${failures.map((f) => `  ${f}`).join('\n')}`);
  return failures.length === 0;
}
