// The parity part of the benchmark: what the recording proxy (`cloud-emulator record`) adds to
// an exchange, and how long `verify` takes for 1,000 exchanges. One emulator runs on the demo
// seed in a child process; the recorder runs in this process in front of it. Each round sends
// one grid read (about 2 KB) straight to the emulator and one through the recorder, alternately,
// one at a time on kept-alive connections, after a warm-up of each; the medians are reported
// side by side, with their ratio and the milliseconds the recorder adds. Then the first 1,000
// exchanges of that recording are verified against the same emulator, timed from start to
// report (three runs, the median). Numbers are printed, never asserted.
//
//   node bench/parity.mjs          (after npm run build)   prints the table
//   BENCH_PARITY_EXCHANGES        exchanges timed each way (default 1000)
//   BENCH_PARITY_WARMUP           exchanges each way before timing (default 200)
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, fmt, markdownTable, median, num, request, startProcess } from './lib.mjs';
import { NO_LIMIT } from './cases.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

/** The demo seed's deployed grid: five cloud servers, about 2 KB of JSON. */
const GRID = '/concerto/services/rest/CloudService/v1/grid/102';
/** The goals: what the recorder may add to an exchange, and how long verify of 1,000 exchanges may take. */
const ADDED_GOAL_MS = 2;
const VERIFY_GOAL_MS = 10_000;
const VERIFIED = 1000;

async function timed(port, agent) {
  const t = performance.now();
  const res = await request(port, { path: GRID, headers: { 'x-auth-token': 'demo-token' }, agent });
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`${GRID} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return ms;
}

/** The rows of the parity part: the recorder's cost per exchange, and verify of 1,000 exchanges. */
export async function parityBench({ env = {}, exchanges = 1000, warmup = 200, log = () => {} } = {}) {
  const { startRecorder } = await import(join(ROOT, 'dist', 'cli', 'record.js'));
  const { IgnoreRules, verifyRecording, verified } = await import(join(ROOT, 'dist', 'cli', 'verify.js'));
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-parity-'));
  const server = await startProcess({ env: { ...env, FIXTURES_DIR: join(ROOT, 'fixtures') } });
  const out = join(work, 'recording.jsonl');
  const recorder = await startRecorder({ target: new URL(`http://127.0.0.1:${server.port}`), out, allowWrites: false });
  const recorderPort = Number(new URL(recorder.url).port);
  const direct = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const proxied = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let bytes = 0;
  try {
    for (let i = 0; i < warmup; i++) {
      await timed(server.port, direct);
      await timed(recorderPort, proxied);
    }
    const straight = [];
    const through = [];
    for (let i = 0; i < exchanges; i++) {
      straight.push(await timed(server.port, direct));
      through.push(await timed(recorderPort, proxied));
    }
    await recorder.close();
    bytes = Buffer.byteLength((await request(server.port, { path: GRID, headers: { 'x-auth-token': 'demo-token' } })).text);
    const a = median(straight);
    const b = median(through);
    log(`recorder: ${fmt.ms(a)} straight, ${fmt.ms(b)} through it`);
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    if (lines.length < VERIFIED) throw new Error(`the recording holds ${lines.length} exchanges, fewer than ${VERIFIED}`);
    const thousand = join(work, 'thousand.jsonl');
    writeFileSync(thousand, `${lines.slice(0, VERIFIED).join('\n')}\n`);
    const url = `http://127.0.0.1:${server.port}`;
    // What moves with the clock of a deployed grid: its statistics count time.
    const ignoreFile = join(work, 'ignore.json');
    writeFileSync(ignoreFile, JSON.stringify({ ignore: ['$.statistics'] }));
    const ignore = await IgnoreRules.load(ignoreFile);
    const runs = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      const report = await verifyRecording(thousand, { url, token: 'demo-token', ignore });
      runs.push(performance.now() - t);
      if (!verified(report)) {
        const paths = report.exchanges.flatMap((e) => e.differences.filter((d) => !d.ignored).map((d) => d.path));
        throw new Error(`verify of the bench recording found differences: ${[...new Set(paths)].slice(0, 5).join(', ')}`);
      }
    }
    const v = median(runs);
    log(`verify of ${VERIFIED} exchanges: ${fmt.ms(v)}`);
    return [
      [
        `Recording proxy: added time per exchange (grid read, ${fmt.int(bytes)} B)`,
        `+${fmt.ms(b - a)}`,
        `median ${fmt.ms(b)} through the recorder against ${fmt.ms(a)} straight to the same emulator (${fmt.x(b / a)}); ${exchanges} exchanges each way, alternating, after ${warmup} each`,
        `< ${ADDED_GOAL_MS} ms added`,
        b - a < ADDED_GOAL_MS ? 'yes' : 'NO',
      ],
      [
        `verify of ${VERIFIED.toLocaleString('en-US')} exchanges (grid reads, against a running emulator)`,
        `${(v / 1000).toFixed(2)} s`,
        `median of 3 runs (min ${(Math.min(...runs) / 1000).toFixed(2)} s, max ${(Math.max(...runs) / 1000).toFixed(2)} s), from the start to the report, each exchange compared by JSON path`,
        `< ${VERIFY_GOAL_MS / 1000} s`,
        v < VERIFY_GOAL_MS ? 'yes' : 'NO',
      ],
    ];
  } finally {
    await recorder.close().catch(() => undefined);
    direct.destroy();
    proxied.destroy();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await parityBench({
    env: { RATE_LIMIT_MAX: NO_LIMIT },
    exchanges: Math.round(num('BENCH_PARITY_EXCHANGES', 1000)),
    warmup: Math.round(num('BENCH_PARITY_WARMUP', 200)),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${markdownTable(['measure', 'value', 'detail', 'goal', 'met'], rows)}\n`);
}
