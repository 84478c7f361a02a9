// A CPU profile of the built server under the load of one benchmark case (npm run build first).
// Writes the large seed, starts dist/cli/server.js with `node --cpu-prof`, drives the case with
// autocannon as bench/run.mjs does, stops the server (which writes the profile) and prints the
// functions with the most samples of their own, grouped by function and place, and the share
// of the profile each takes. Open the .cpuprofile file in Chrome DevTools (Performance, load
// profile) or any viewer of the format for the whole tree.
//
//   node bench/profile.mjs grid-read                (a case id of bench/cases.mjs)
//
// Environment:
//   PROFILE_DURATION     seconds of profiled load (default 5), after 2 s of warm-up
//   PROFILE_DIR          where the .cpuprofile file is written (default: a new temporary folder)
//   PROFILE_TOP          rows printed (default 30)
//   PROFILE_INTERVAL     microseconds between samples (default 200)
//   PROFILE_BASELINE     1: profile the bare baseline (bench/baseline.mjs) answering the body the
//                        emulator answered, under the same load, to compare the two
//   BENCH_CONNECTIONS    connections of the load generator (default 10)
//   BENCH_SERVER         the server entry (default dist/cli/server.js)
//   any other setting of the server (say JOURNAL_SIZE=0) is passed on to it
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BASELINE_ENTRY, ROOT, cannon, num, request, startProcess } from './lib.mjs';
import { LARGE_SEED, writeSeed } from './seeds.mjs';
import { CASES, NO_LIMIT } from './cases.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const id = process.argv[2];
const spec = CASES.find((c) => c.id === id);
if (!spec) {
  process.stderr.write(`usage: node bench/profile.mjs <case>, one of: ${CASES.map((c) => c.id).join(', ')}\n`);
  process.exit(2);
}
const DURATION = num('PROFILE_DURATION', 5);
const TOP = Math.round(num('PROFILE_TOP', 30));
const CONNECTIONS = Math.round(num('BENCH_CONNECTIONS', 10));

const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-profile-'));
const dir = process.env.PROFILE_DIR ?? work;
const seed = writeSeed(join(work, 'seed'), LARGE_SEED);
const baseline = process.env.PROFILE_BASELINE === '1';
const profiled = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', String(Math.round(num('PROFILE_INTERVAL', 200)))];
const emulator = await startProcess({
  env: { ...process.env, FIXTURES_DIR: seed, RATE_LIMIT_MAX: NO_LIMIT, LOG_LEVEL: 'silent' },
  nodeArgs: baseline ? [] : profiled,
});
const status = spec.status ?? 200;
const path = (await spec.prepare?.(emulator.port)) ?? spec.path;
const probe = await request(emulator.port, { method: spec.method ?? 'GET', path, headers: spec.headers ?? {}, body: spec.body });
if (probe.status !== status) throw new Error(`${id}: answered ${probe.status}: ${probe.text.slice(0, 300)}`);
let server = emulator;
if (baseline) {
  await emulator.stop();
  const bodyFile = join(work, 'body.json');
  writeFileSync(bodyFile, status === 204 ? 'null' : probe.text);
  server = await startProcess({ entry: BASELINE_ENTRY, env: { BODY_FILE: bodyFile, STATUS: String(status) }, nodeArgs: profiled });
}
const load = (duration) =>
  cannon({ port: server.port, pid: server.pid, method: spec.method ?? 'GET', path, headers: spec.headers ?? {}, body: spec.body, duration, connections: CONNECTIONS, expectStatus: status });
await load(2);
// V8 stamps samples in microseconds of the monotonic clock that hrtime reads too: the
// samples outside the profiled load (start-up, warm-up, shutdown) are left out.
const from = Number(process.hrtime.bigint() / 1000n);
const run = await load(DURATION);
const to = Number(process.hrtime.bigint() / 1000n);
await server.stop();

// The seed and the baseline's body go; the profile stays.
rmSync(seed, { recursive: true, force: true });
rmSync(join(work, 'body.json'), { force: true });
const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort().at(-1);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i];
  if (at < from || at > to) continue;
  total++;
  const { callFrame: f } = byNode.get(profile.samples[i]);
  // The time a sample stands for is the gap to the next one.
  const us = profile.timeDeltas[i + 1] ?? 0;
  const where = f.url ? `${relative(ROOT, f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  const entry = self.get(key) ?? { n: 0, us: 0 };
  entry.n++;
  entry.us += us;
  self.set(key, entry);
}
process.stdout.write(`${id}${baseline ? ' (bare baseline)' : ''}: ${Math.round(run.rps)} req/s, ${Math.round(run.cpuUs)} µs server CPU a request, ${total} samples in the profiled load\nprofile: ${file}\n\n`);
process.stdout.write('share of samples, µs a request (of the time sampled), function and place:\n');
for (const [key, { n, us }] of [...self].sort((a, b) => b[1].n - a[1].n).slice(0, TOP)) {
  process.stdout.write(`${((n / total) * 100).toFixed(1).padStart(5)}%  ${(us / run.count).toFixed(2).padStart(6)} µs  ${key}\n`);
}
