// The benchmark: `npm run bench` (builds first). Prints markdown tables and writes them to
// bench/results/latest.md. Never part of `npm test`: numbers depend on the machine.
//
// Every throughput case runs against the built server (node dist/cli/server.js) in a child process
// on loopback, alternately with a baseline: a bare Fastify server in the same Node version
// answering the very same JSON body (bench/baseline.mjs). Settings (environment):
//   BENCH_DURATION     seconds of measured load per side and case (default 10)
//   BENCH_ROUNDS       the measured time is split into this many alternating rounds (default 5)
//   BENCH_WARMUP       seconds of unmeasured load per side before each case (default 2)
//   BENCH_CONNECTIONS  concurrent connections of the load generator (default 10)
//   BENCH_STARTS       start-ups measured per seed, alternating with the bare baseline's, median reported (default 10)
//   BENCH_RESETS       resets measured, median reported (default 100)
//   BENCH_ONLY         comma-separated case ids to run (default: all)
//   BENCH_PARTS        comma-separated parts to run: startup, throughput, hooks, reset, stall, image, sandboxes, events, query, parity, timeline (default: all)
//   BENCH_TIMELINE_SEEKS  seeks of the demo seed's one-hour timeline timed, median reported (default 40)
//   BENCH_QUERY_ROUNDS cold Query API answers timed per range, median reported (default 15)
//   BENCH_PARITY_EXCHANGES  exchanges timed each way through the recording proxy and straight (default 1000)
//   BENCH_HOOKS        comma-separated rows of the hooks table to run, by hook name (default: all)
//   BENCH_SANDBOX_OPS  sandbox creates (and as many deletes) timed over HTTP (default 500)
//   BENCH_SANDBOX_ROUNDS  alternating rounds of the sandbox/default-world grid read (default 5)
//   BENCH_SERVER       the server entry to run (default dist/cli/server.js)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BASELINE_ENTRY,
  ROOT,
  cannon,
  combine,
  fmt,
  machine,
  markdownTable,
  median,
  num,
  request,
  rssMiB,
  sleep,
  startProcess,
} from './lib.mjs';
import { imageBench } from './image.mjs';
import { resetMemoryBench } from './reset-memory.mjs';
import { sandboxBench } from './sandboxes.mjs';
import { stallBench } from './stall.mjs';
import { eventsBench } from './events.mjs';
import { queryBench } from './query.mjs';
import { parityBench } from './parity.mjs';
import { timelineBench } from './timeline.mjs';
import { alternateStarts, bareSide } from './startup.mjs';
import { LARGE_SEED, writeSeed } from './seeds.mjs';
import { CASES, NO_LIMIT } from './cases.mjs';
import { hooksBench } from './hooks.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const DURATION = num('BENCH_DURATION', 10);
const ROUNDS = Math.max(1, Math.round(num('BENCH_ROUNDS', 5)));
const WARMUP = num('BENCH_WARMUP', 2);
const CONNECTIONS = Math.round(num('BENCH_CONNECTIONS', 10));
const STARTS = Math.round(num('BENCH_STARTS', 10));
const RESETS = Math.round(num('BENCH_RESETS', 100));
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const SANDBOX_OPS = Math.round(num('BENCH_SANDBOX_OPS', 500));
const SANDBOX_ROUNDS = Math.max(1, Math.round(num('BENCH_SANDBOX_ROUNDS', 5)));
const ALL_PARTS = ['startup', 'throughput', 'hooks', 'reset', 'stall', 'image', 'sandboxes', 'events', 'query', 'parity', 'timeline'];
const PARTS = new Set(process.env.BENCH_PARTS ? process.env.BENCH_PARTS.split(',').map((s) => s.trim()) : ALL_PARTS);
for (const part of PARTS) {
  if (!ALL_PARTS.includes(part)) throw new Error(`BENCH_PARTS: unknown part '${part}' (known: ${ALL_PARTS.join(', ')})`);
}

const LARGE = LARGE_SEED;
const ONLY_CASES = CASES.filter((c) => !ONLY || ONLY.has(c.id));
for (const id of ONLY ?? []) {
  if (!CASES.some((c) => c.id === id)) throw new Error(`BENCH_ONLY: unknown case '${id}' (known: ${CASES.map((c) => c.id).join(', ')})`);
}

function log(message) {
  process.stderr.write(`${message}\n`);
}

async function measureCase(server, caseSpec, work) {
  const status = caseSpec.status ?? 200;
  const path = (await caseSpec.prepare?.(server.port)) ?? caseSpec.path;
  const spec = { ...caseSpec, path };
  const probe = await request(server.port, { method: spec.method ?? 'GET', path: spec.path, headers: spec.headers ?? {}, body: spec.body });
  if (probe.status !== status) throw new Error(`${spec.id}: the emulator answered ${probe.status}, expected ${status}: ${probe.text.slice(0, 300)}`);
  if (spec.check) {
    const verdict = spec.check(JSON.parse(probe.text));
    if (verdict !== true) throw new Error(`${spec.id}: ${verdict}`);
  }
  const bodyFile = join(work, `${spec.id}.json`);
  writeFileSync(bodyFile, status === 204 ? 'null' : probe.text);
  const baseline = await startProcess({ entry: BASELINE_ENTRY, env: { BODY_FILE: bodyFile, STATUS: String(status) } });
  try {
    const sizeCheck = await request(baseline.port, { method: spec.method ?? 'GET', path: spec.path, headers: spec.headers ?? {}, body: spec.body });
    if (Buffer.byteLength(sizeCheck.text) !== Buffer.byteLength(probe.text)) {
      throw new Error(`${spec.id}: baseline body is ${Buffer.byteLength(sizeCheck.text)} bytes, the emulator's ${Buffer.byteLength(probe.text)}`);
    }
    const load = (port, duration) =>
      cannon({ port, pid: port === server.port ? server.pid : baseline.pid, method: spec.method ?? 'GET', path: spec.path, headers: spec.headers ?? {}, body: spec.body, duration, connections: CONNECTIONS, expectStatus: status });
    // A case judged against another case's CPU a request (a newer interface's read against the
    // grid read) has that case measured on the same server in the same rounds, next to it in
    // time: measured apart, whatever ran between (the writes of a POST case, a busier machine)
    // would weigh on one side only.
    const reference = caseSpec.target?.kind === 'cpuOf' ? await referenceOf(server, caseSpec.target.of) : undefined;
    const sides = reference ? ['baseline', 'emulator', 'reference'] : ['baseline', 'emulator'];
    const loadSide = (side, duration) => (side === 'reference' ? reference.load(duration) : load(side === 'emulator' ? server.port : baseline.port, duration));
    for (const side of sides) await loadSide(side, WARMUP);
    const runs = { emulator: [], baseline: [], reference: [] };
    const slice = Math.max(1, Math.round(DURATION / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      // ABBA order, so that a machine getting busier or quieter during a case favours neither.
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) runs[side].push(await loadSide(side, slice));
    }
    const emulator = combine(runs.emulator);
    const base = combine(runs.baseline);
    const ref = reference ? combine(runs.reference) : undefined;
    for (const [side, r] of [['emulator', emulator], ['baseline', base], ...(ref ? [[`reference (${reference.id})`, ref]] : [])]) {
      if (r.unexpected || r.errors) throw new Error(`${spec.id}: ${side} answered unexpected statuses (${r.unexpected || 'none'}) or errors (${r.errors})`);
    }
    // Each round's runs are next to each other in time: their ratio is the fair one, and
    // the median of the rounds' ratios is what is reported.
    const rounds = runs.emulator.map((e, i) => ({
      rps: e.rps / runs.baseline[i].rps,
      cpu: runs.baseline[i].cpuUs / e.cpuUs,
      ...(reference ? { ofReference: e.cpuUs / runs.reference[i].cpuUs } : {}),
    }));
    const ratio = {
      rps: median(rounds.map((r) => r.rps)),
      cpu: median(rounds.map((r) => r.cpu)),
      ...(reference ? { ofReference: median(rounds.map((r) => r.ofReference)) } : {}),
    };
    return { spec, bytes: Buffer.byteLength(probe.text), emulator, baseline: base, reference: ref, ratio, rounds };
  } finally {
    await baseline.stop();
  }
}

/**
 * The case `id` as a reference side on `server`: its answer checked as its case checks it,
 * and a load function for the rounds.
 */
async function referenceOf(server, id) {
  const spec = CASES.find((c) => c.id === id);
  if (!spec) throw new Error(`reference case '${id}' is not a case of bench/cases.mjs`);
  const path = (await spec.prepare?.(server.port)) ?? spec.path;
  const status = spec.status ?? 200;
  const probe = await request(server.port, { method: spec.method ?? 'GET', path, headers: spec.headers ?? {}, body: spec.body });
  if (probe.status !== status) throw new Error(`reference ${id}: the emulator answered ${probe.status}, expected ${status}`);
  const verdict = spec.check ? spec.check(JSON.parse(probe.text)) : true;
  if (verdict !== true) throw new Error(`reference ${id}: ${verdict}`);
  return {
    id,
    load: (duration) =>
      cannon({ port: server.port, pid: server.pid, method: spec.method ?? 'GET', path, headers: spec.headers ?? {}, body: spec.body, duration, connections: CONNECTIONS, expectStatus: status }),
  };
}


function verdictOf(result) {
  const { target } = result.spec;
  if (!target) return { text: '-', met: '-' };
  const checks = {
    cpuOf: () => result.ratio.ofReference !== undefined && result.ratio.ofReference <= (target.max ?? 1),
    ratio: () => result.ratio.rps >= target.min,
    cpu: () => result.ratio.cpu >= target.min,
    p99: () => result.emulator.p99 < target.max,
  };
  const met = checks[target.kind]();
  return { text: target.text, met: met ? 'yes' : 'NO' };
}

/**
 * Start-ups of every side, interleaved (bench/startup.mjs), so that a machine that gets busier
 * during the part favours none; per side the median, and the median of the ratios of each
 * round's start to the first side's in the same round.
 */
async function startups(sides) {
  const results = await alternateStarts(sides, STARTS);
  const times = results.map((runs) => runs.map((r) => r.startMs));
  return sides.map((side, k) => {
    log(`  ${side.label}: ${times[k].map((t) => Math.round(t)).join(', ')} ms`);
    const ratio = median(times[k].map((t, i) => t / times[0][i]));
    return { median: median(times[k]), min: Math.min(...times[k]), max: Math.max(...times[k]), ratio, cpu: median(results[k].map((r) => r.cpuMs)) };
  });
}

/** RSS once the process has been idle for a moment (lazy module loads, heap settling). */
async function idleRss(proc, settleMs = 3000) {
  await sleep(settleMs);
  return rssMiB(proc.pid);
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-bench-'));
  try {
    const largeDir = join(work, 'large-seed');
    // The POST cases create annotations as fast as they can, for many seconds: the bounds of what
    // requests may add to a world (ANNOTATIONS_WORLD_MAX, tens of thousands) are raised as the rate limit is.
    const unbounded = { ANNOTATIONS_WORLD_MAX: NO_LIMIT, ANNOTATIONS_WORLD_MAX_BYTES: NO_LIMIT, ANNOTATIONS_MAX_BYTES: NO_LIMIT };
    const serverEnv = { FIXTURES_DIR: largeDir, RATE_LIMIT_MAX: NO_LIMIT, ...unbounded };
    if (PARTS.has('startup') || PARTS.has('throughput') || PARTS.has('hooks') || PARTS.has('reset')) {
      const t = performance.now();
      writeSeed(largeDir, LARGE);
      log(`large seed written (${LARGE.annotations} annotations, ${LARGE.grids} grids) in ${Math.round(performance.now() - t)} ms`);
    }
    const yes = (ok) => (ok ? 'yes' : 'NO');
    /** The rows of the goals table: measure, value, detail, goal, met. */
    const goalRows = [];
    const otherRows = [];

    // --- Start-up and memory -------------------------------------------------------------
    if (PARTS.has('startup')) {
      log('start-up (spawn to first healthy answer), interleaved:');
      const [bare, demoStart, largeStart] = await startups([
        bareSide(work),
        { label: 'demo seed', start: { env: {} } },
        { label: 'large seed', start: { env: serverEnv } },
      ]);
      const spread = (r) => `median of ${STARTS} (min ${fmt.ms(r.min)}, max ${fmt.ms(r.max)})`;
      goalRows.push(
        [
          'Process start to first healthy answer, demo seed, against bare Fastify',
          fmt.x(demoStart.ratio),
          `${fmt.ms(demoStart.median)} against ${fmt.ms(bare.median)}; median of ${STARTS} interleaved pairs' ratios`,
          '<= 2x',
          yes(demoStart.ratio <= 2),
        ],
        [
          `Start with ${LARGE.annotations.toLocaleString('en-US')} annotations and ${fmt.int(LARGE.grids)} grids`,
          fmt.ms(largeStart.median),
          `${spread(largeStart)}; ${fmt.x(largeStart.ratio)} bare Fastify's (median of the interleaved pairs' ratios); CPU to healthy ${fmt.ms(largeStart.cpu)} against ${fmt.ms(bare.cpu)}`,
          '< 350 ms',
          yes(largeStart.median < 350),
        ],
      );
      const demo = await startProcess({ env: {} });
      const demoRss = await idleRss(demo);
      await demo.stop();
      otherRows.push(
        ['Start to healthy, demo seed', fmt.ms(demoStart.median), spread(demoStart), '-', '-'],
        ['Start to healthy, bare Fastify (reference)', fmt.ms(bare.median), spread(bare), '-', '-'],
        ['RSS idle, demo seed', fmt.mib(demoRss), 'VmRSS 3 s after healthy', '< 100 MB', yes(demoRss < 100)],
      );
    }

    // --- Throughput ------------------------------------------------------------------------
    const results = [];
    if (PARTS.has('throughput')) {
      const server = await startProcess({ env: serverEnv });
      try {
        for (const spec of ONLY_CASES) {
          log(`case ${spec.id} ...`);
          const result = await measureCase(server, spec, work);
          log(`  emulator ${fmt.int(result.emulator.rps)} req/s, baseline ${fmt.int(result.baseline.rps)} req/s; per CPU-s ${fmt.pct(result.ratio.cpu)}`);
          results.push(result);
          const v = verdictOf(result);
          if (result.spec.target?.kind === 'cpu') {
            goalRows.push([
              `${result.spec.title}: requests per server CPU-second, share of bare Fastify's`,
              fmt.pct(result.ratio.cpu),
              `${fmt.us(result.emulator.cpuUs)} against ${fmt.us(result.baseline.cpuUs)} CPU a request; req/s ${fmt.pct(result.ratio.rps)} of the baseline's; median of ${ROUNDS} rounds`,
              v.text.replace(' of baseline req per CPU-s', ''),
              v.met,
            ]);
          }
          if (result.spec.target?.kind === 'cpuOf') {
            goalRows.push([
              `${result.spec.title}: server CPU a request, against GET a grid`,
              fmt.x(result.ratio.ofReference),
              `${fmt.us(result.emulator.cpuUs)} against ${fmt.us(result.reference.cpuUs)} for a grid read in the same rounds (median of the rounds' ratios); ${fmt.pct(result.ratio.cpu)} of a bare Fastify's req per CPU-s on the same ${fmt.int(result.bytes)}-byte body`,
              result.spec.target.text,
              v.met,
            ]);
          }
        }
      } finally {
        await server.stop();
      }
    }

    // --- The hooks every request passes, used and unused ------------------------------------
    const hookRows = PARTS.has('hooks')
      ? (log('hooks, used and unused ...'), await hooksBench({ env: serverEnv, work, duration: DURATION, rounds: ROUNDS, warmup: WARMUP, connections: CONNECTIONS, log }))
      : [];

    // --- Reset on the large seed -----------------------------------------------------------
    if (PARTS.has('reset')) {
      // One process: its RSS once idle after the load, then after the resets (idle again).
      const [afterLoad, afterResets, ...rest] = await resetMemoryBench({ resets: RESETS, seedDir: largeDir, env: serverEnv, log: (line) => log(`  ${line}`) });
      goalRows.push(afterResets);
      otherRows.push(afterLoad, ...rest);
    }

    // --- Event-loop stalls with a large state (200,000 annotations) --------------------------
    if (PARTS.has('stall')) {
      log('event-loop stalls (state-file write, export, import) ...');
      const rows = await stallBench({ env: { RATE_LIMIT_MAX: NO_LIMIT }, log: (line) => log(`  ${line}`) });
      // Every stall is a goal: the state-file write, the export and the imports, seen from outside
      // (health answers) and by the server's own event-loop monitor.
      const goal = (r) => r[0].startsWith('Longest stall') || r[0].startsWith("Server's event-loop delay");
      goalRows.push(...rows.filter(goal));
      otherRows.push(...rows.filter((r) => !goal(r)));
    }

    // --- The event stream (bench/events.mjs) -------------------------------------------------
    if (PARTS.has('events')) {
      log('event stream (open streams, an advance to 10 listeners, reads while listening) ...');
      goalRows.push(...(await eventsBench({ env: { RATE_LIMIT_MAX: NO_LIMIT }, log: (line) => log(`  ${line}`) })));
    }

    // --- The Query API's cold answers (bench/query.mjs) --------------------------------------
    if (PARTS.has('query')) {
      log('Query API, cold answers of long ranges (a reset before each) ...');
      goalRows.push(...(await queryBench({ env: { RATE_LIMIT_MAX: NO_LIMIT }, rounds: Math.round(num('BENCH_QUERY_ROUNDS', 15)), log: (line) => log(`  ${line}`) })));
    }

    // --- Parity: the recording proxy's cost per exchange, verify of 1,000 (bench/parity.mjs) --
    if (PARTS.has('parity')) {
      log('parity (recording proxy against straight, verify of 1,000 exchanges) ...');
      goalRows.push(...(await parityBench({ env: { RATE_LIMIT_MAX: NO_LIMIT }, exchanges: Math.round(num('BENCH_PARITY_EXCHANGES', 1000)), log: (line) => log(`  ${line}`) })));
    }

    // --- Seeks of the demo seed's timeline (bench/timeline.mjs) ------------------------------
    if (PARTS.has('timeline')) {
      log("timeline seeks of the demo seed's one-hour story ...");
      goalRows.push(...(await timelineBench({ log: (line) => log(`  ${line}`) })));
    }

    // --- The container image ----------------------------------------------------------------
    if (PARTS.has('image')) {
      log('container image ...');
      const [size, ...rest] = await imageBench({ log: (line) => log(`  ${line}`) });
      goalRows.push(size);
      otherRows.push(...rest);
    }

    // --- Sandboxes, on the demo seed ---------------------------------------------------------
    const sandboxRows = PARTS.has('sandboxes')
      ? await sandboxBench({
          env: { RATE_LIMIT_MAX: NO_LIMIT },
          duration: DURATION,
          warmup: WARMUP,
          connections: CONNECTIONS,
          rounds: SANDBOX_ROUNDS,
          ops: SANDBOX_OPS,
          log,
        })
      : [];

    // --- Report --------------------------------------------------------------------------
    const m = machine();
    let commit = 'unknown';
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      // Not a checkout.
    }
    const tables = [];
    if (goalRows.length > 0) tables.push(markdownTable(['measure', 'value', 'detail', 'goal', 'met'], goalRows));
    if (results.length > 0) {
      tables.push(
        markdownTable(
          ['case', 'body', 'req/s', 'p50', 'p99', 'CPU/req', 'baseline req/s', 'baseline p50', 'baseline p99', 'baseline CPU/req', 'req/s ratio', 'req/CPU-s ratio', 'target', 'met'],
          results.map((r) => {
            const v = verdictOf(r);
            return [
              r.spec.title,
              `${fmt.int(r.bytes)} B`,
              fmt.int(r.emulator.rps),
              fmt.ms(r.emulator.p50),
              fmt.ms(r.emulator.p99),
              fmt.us(r.emulator.cpuUs),
              fmt.int(r.baseline.rps),
              fmt.ms(r.baseline.p50),
              fmt.ms(r.baseline.p99),
              fmt.us(r.baseline.cpuUs),
              fmt.pct(r.ratio.rps),
              fmt.pct(r.ratio.cpu),
              v.text,
              v.met,
            ];
          }),
        ),
      );
    }
    if (hookRows.length > 0) {
      tables.push(
        markdownTable(
          ['hook', 'case', 'used against unused', 'CPU/req unused', 'CPU/req used', 'cost when used', 'p50 unused', 'p50 used', 'p50 used/unused'],
          hookRows.map((r) => [
            r.hook,
            r.spec.title,
            r.what,
            fmt.us(r.cpu[0]),
            fmt.us(r.cpu[1]),
            `${r.cost >= 0 ? '+' : ''}${Math.round(r.cost * 100)}%`,
            fmt.ms(r.p50[0]),
            fmt.ms(r.p50[1]),
            fmt.x(r.p50Ratio),
          ]),
        ),
      );
    }
    if (otherRows.length > 0) tables.push(markdownTable(['measure', 'value', 'detail', 'target', 'met'], otherRows));
    if (sandboxRows.length > 0) tables.push(markdownTable(['sandboxes (demo seed)', 'value', 'detail', 'target', 'met'], sandboxRows));
    const header = [
      `Machine: ${m.cpu}, ${m.cores} cores (nproc), ${m.memory}, ${m.platform}, Node ${m.node}. Commit ${commit}.`,
      ...(PARTS.has('throughput')
        ? [`Load: autocannon, ${CONNECTIONS} connections, ${DURATION} s measured per side and case in ${ROUNDS} alternating rounds after ${WARMUP} s of warm-up (a case judged against the grid read: the grid read on the same server in the same rounds, a third side); server and load generator share the machine.`]
        : []),
      ...(PARTS.has('hooks')
        ? [`Hooks: each row two variants of one case on the large seed, ${DURATION} s per variant in ${ROUNDS} alternating rounds after ${WARMUP} s of warm-up; cost: the median over the rounds of the used variant's server CPU a request over the unused one's, minus 1.`]
        : []),
      ...(PARTS.has('throughput') || PARTS.has('startup') || PARTS.has('hooks') || PARTS.has('reset')
        ? [`Large seed: ${LARGE.annotations.toLocaleString('en-US')} annotations over ${LARGE.domains} domains, ${LARGE.grids.toLocaleString('en-US')} grids started on load (1,000 cloud servers).`]
        : []),
      ...(PARTS.has('sandboxes')
        ? [
            `Sandboxes: demo seed (bundled fixtures); creates and deletes one at a time on one kept-alive connection; the grid read: autocannon, ${CONNECTIONS} connections, ${DURATION} s per side in ${SANDBOX_ROUNDS} alternating rounds after ${WARMUP} s of warm-up, both sides against one server process.`,
          ]
        : []),
      ...(PARTS.size < ALL_PARTS.length ? [`Parts run: ${[...PARTS].join(', ')}.`] : []),
    ].join('\n');
    const report = `${header}\n\n${tables.join('\n\n')}\n`;
    process.stdout.write(`\n${report}`);
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), report);
    log('written to bench/results/latest.md');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
  process.exit(1);
});
