// The sandbox part of the benchmark (bench/run.mjs, BENCH_PARTS=sandboxes): what creating,
// deleting and holding sandboxes costs, and whether a read in a sandbox is as fast as the same
// read in the default world. Everything runs on the demo seed (the bundled fixtures), against one
// process of the built server.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { cannon, cpuSeconds, fmt, median, percentile, request, rssMiB, sleep, startProcess } from './lib.mjs';

const CLOUD = '/concerto/services/rest/CloudService/v1';
const GRID = `${CLOUD}/grid/101`;
const AUTH = { 'x-auth-token': 'demo-token' };
const INPROC_ENTRY = fileURLToPath(new URL('./sandbox-inproc.mjs', import.meta.url));
/** Sandboxes held at once by the memory measure. */
const HELD = 100;
/** The create/delete timings come in batches of this many creates, then as many deletes. */
const BATCH = 50;
/** Creates timed in-process, in batches of BATCH like over HTTP. */
const INPROC_CREATES = 1000;
/** How long the process is left alone before its RSS is read (heap settling). */
const SETTLE_MS = 3000;

/**
 * One request on a kept-alive connection, timed from the call to the end of the answer; fails
 * unless the answer has `status`.
 */
async function timed(port, agent, method, path, status) {
  const t0 = performance.now();
  const res = await request(port, { method, path, agent });
  const ms = performance.now() - t0;
  if (res.status !== status) throw new Error(`${method} ${path}: answered ${res.status}, expected ${status}: ${res.text.slice(0, 300)}`);
  return { ms, res };
}

/** Starts grid 101 in the world under `prefix` and moves that world's clock until it settles. */
async function startGrid(port, prefix) {
  const start = await request(port, { method: 'POST', path: `${prefix}${GRID}/action`, headers: AUTH, body: { action: 'start' } });
  if (start.status !== 202) throw new Error(`starting grid 101 in '${prefix || 'the default world'}': ${start.status} ${start.text.slice(0, 300)}`);
  const advance = await request(port, { method: 'POST', path: `${prefix}/_emulator/clock/advance`, body: { until: { kind: 'grid', id: 101 } } });
  if (advance.status !== 200) throw new Error(`advancing the clock of '${prefix || 'the default world'}': ${advance.status} ${advance.text.slice(0, 300)}`);
  const read = await request(port, { path: `${prefix}${GRID}`, headers: AUTH });
  const state = read.status === 200 ? JSON.parse(read.text).state : undefined;
  if (state !== 'CHECKED') throw new Error(`grid 101 in '${prefix || 'the default world'}' is ${state ?? read.status}, not CHECKED`);
  return read.text;
}

/** Creates and deletes over HTTP, in batches; each request timed, and the server's CPU per call. */
async function createDelete(server, agent, ops) {
  const names = Array.from({ length: BATCH }, (_, i) => `bench-${i}`);
  const creates = [];
  const deletes = [];
  let createCpu = 0;
  let deleteCpu = 0;
  // One unmeasured batch first, so the JIT has seen both routes.
  for (const measured of [false, ...Array.from({ length: Math.max(1, Math.round(ops / BATCH)) }, () => true)]) {
    const c0 = cpuSeconds(server.pid);
    for (const name of names) {
      const { ms } = await timed(server.port, agent, 'PUT', `/_emulator/sandboxes/${name}`, 201);
      if (measured) creates.push(ms);
    }
    const c1 = cpuSeconds(server.pid);
    for (const name of names) {
      const { ms } = await timed(server.port, agent, 'DELETE', `/_emulator/sandboxes/${name}`, 204);
      if (measured) deletes.push(ms);
    }
    const c2 = cpuSeconds(server.pid);
    if (measured) {
      createCpu += c1 - c0;
      deleteCpu += c2 - c1;
    }
  }
  const replaces = [];
  await timed(server.port, agent, 'PUT', '/_emulator/sandboxes/bench-replace', 201);
  for (let i = 0; i < Math.max(BATCH, Math.round(ops / 5)); i++) replaces.push((await timed(server.port, agent, 'PUT', '/_emulator/sandboxes/bench-replace', 200)).ms);
  await timed(server.port, agent, 'DELETE', '/_emulator/sandboxes/bench-replace', 204);
  return { creates, deletes, replaces, createCpuMs: (createCpu * 1000) / creates.length, deleteCpuMs: (deleteCpu * 1000) / deletes.length };
}

/** RSS before and after HELD sandboxes, each created and read once. */
async function heldMemory(server, agent) {
  // The code paths first (one sandbox created, read and deleted), so that the growth is data.
  await timed(server.port, agent, 'PUT', '/_emulator/sandboxes/warm', 201);
  const warm = await request(server.port, { path: `/sandbox/warm${GRID}`, headers: AUTH, agent });
  if (warm.status !== 200) throw new Error(`GET ${GRID} in sandbox warm: ${warm.status}`);
  await timed(server.port, agent, 'DELETE', '/_emulator/sandboxes/warm', 204);
  await sleep(SETTLE_MS);
  const before = rssMiB(server.pid);
  for (let i = 0; i < HELD; i++) {
    await timed(server.port, agent, 'PUT', `/_emulator/sandboxes/held-${i}`, 201);
    const read = await request(server.port, { path: `/sandbox/held-${i}${GRID}`, headers: AUTH, agent });
    if (read.status !== 200) throw new Error(`GET ${GRID} in sandbox held-${i}: ${read.status}`);
  }
  const list = JSON.parse((await request(server.port, { path: '/_emulator/sandboxes', agent })).text);
  if (list.sandboxes.length !== HELD) throw new Error(`${list.sandboxes.length} sandboxes listed, expected ${HELD}`);
  await sleep(SETTLE_MS);
  const after = rssMiB(server.pid);
  for (let i = 0; i < HELD; i++) await timed(server.port, agent, 'DELETE', `/_emulator/sandboxes/held-${i}`, 204);
  return { before, after };
}

/**
 * The same grid read in the default world and in sandbox w1, in alternating rounds (ABBA)
 * against the same process; the median req/s of each side and their ratio.
 */
async function readComparison(server, { duration, warmup, connections, rounds, log }) {
  const sides = { default: GRID, sandbox: `/sandbox/w1${GRID}` };
  const load = (side, seconds) =>
    cannon({ port: server.port, pid: server.pid, path: sides[side], headers: AUTH, duration: seconds, connections });
  await load('default', warmup);
  await load('sandbox', warmup);
  const runs = { default: [], sandbox: [] };
  const slice = Math.max(1, Math.round(duration / rounds));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['default', 'sandbox'] : ['sandbox', 'default'];
    for (const side of order) {
      const r = await load(side, slice);
      if (r.unexpected || r.errors) throw new Error(`grid read (${side}): unexpected statuses (${r.unexpected || 'none'}) or errors (${r.errors})`);
      runs[side].push(r);
    }
  }
  log(`  default world: ${runs.default.map((r) => fmt.int(r.rps)).join(', ')} req/s; sandbox: ${runs.sandbox.map((r) => fmt.int(r.rps)).join(', ')} req/s`);
  const summary = (rs) => ({
    rps: median(rs.map((r) => r.rps)),
    p99: median(rs.map((r) => r.p99)),
    cpuUs: rs.reduce((sum, r) => sum + r.cpuUs * r.count, 0) / Math.max(1, rs.reduce((sum, r) => sum + r.count, 0)),
  });
  // Each round's two runs are next to each other in time, so their ratio is the least touched
  // by a machine whose load changes from round to round.
  const paired = runs.sandbox.map((r, i) => r.rps / runs.default[i].rps);
  return { default: summary(runs.default), sandbox: summary(runs.sandbox), paired, slice, rounds };
}

/**
 * Runs the whole sandbox part and returns the rows of its table (measure, value, detail,
 * target, met).
 */
export async function sandboxBench({ env, duration, warmup, connections, rounds, ops, log }) {
  // MAX_SANDBOXES raised so that the held sandboxes and a batch in flight never meet it.
  const server = await startProcess({ env: { ...env, MAX_SANDBOXES: String(HELD + BATCH + 10) } });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let memory;
  let churn;
  let reads;
  let bytes;
  try {
    log(`sandboxes: RSS before and after ${HELD} sandboxes ...`);
    memory = await heldMemory(server, agent);
    log(`  ${fmt.mib(memory.before)} -> ${fmt.mib(memory.after)}`);
    log(`sandboxes: ${ops} creates and deletes over HTTP ...`);
    churn = await createDelete(server, agent, ops);
    log(`  create median ${fmt.ms(median(churn.creates))}, delete median ${fmt.ms(median(churn.deletes))}`);
    log('sandboxes: grid read, default world against sandbox w1 ...');
    await timed(server.port, agent, 'PUT', '/_emulator/sandboxes/w1', 201);
    const inDefault = await startGrid(server.port, '');
    const inSandbox = await startGrid(server.port, '/sandbox/w1');
    if (Buffer.byteLength(inDefault) !== Buffer.byteLength(inSandbox)) {
      throw new Error(`grid 101 reads ${Buffer.byteLength(inDefault)} bytes in the default world and ${Buffer.byteLength(inSandbox)} in the sandbox`);
    }
    bytes = Buffer.byteLength(inDefault);
    reads = await readComparison(server, { duration, warmup, connections, rounds, log });
  } finally {
    agent.destroy();
    await server.stop();
  }

  log('sandboxes: in-process creates ...');
  const inproc = JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', INPROC_ENTRY], {
      env: { PATH: process.env.PATH, ...env, BATCH: String(BATCH), BATCHES: String(Math.max(1, Math.round(INPROC_CREATES / BATCH))) },
      encoding: 'utf8',
    }),
  );

  const yes = (ok) => (ok ? 'yes' : 'NO');
  const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const stats = (values) => `median of ${values.length}, p95 ${fmt.ms(percentile([...values].sort((a, b) => a - b), 95))}, mean ${fmt.ms(mean(values))}`;
  const growth = memory.after - memory.before;
  const ratio = reads.sandbox.rps / reads.default.rps;
  const createMedian = median(churn.creates);
  const deleteMedian = median(churn.deletes);
  return [
    [
      'Create a sandbox (PUT, demo seed), over HTTP',
      fmt.ms(createMedian),
      `${stats(churn.creates)}; server CPU ${fmt.ms(churn.createCpuMs)} a create`,
      'median < 5 ms',
      yes(createMedian < 5),
    ],
    [
      'Create a sandbox, in-process (no HTTP)',
      fmt.ms(inproc.createMsEach),
      `mean: ${fmt.int(inproc.creates)} creates in batches of ${inproc.batch}, total time / count, collections included (slowest batch ${fmt.ms(inproc.slowestBatchMsEach)} each)`,
      '-',
      '-',
    ],
    ['Delete a sandbox (DELETE), over HTTP', fmt.ms(deleteMedian), `${stats(churn.deletes)}; server CPU ${fmt.ms(churn.deleteCpuMs)} a delete`, 'median < 1 ms', yes(deleteMedian < 1)],
    ['Replace a sandbox (PUT on an existing name)', fmt.ms(median(churn.replaces)), stats(churn.replaces), '-', '-'],
    [
      `RSS growth, ${HELD} sandboxes of the demo seed`,
      fmt.mib(growth),
      `${fmt.mib(memory.before)} -> ${fmt.mib(memory.after)}, each created and read once, VmRSS ${SETTLE_MS / 1000} s after; live heap in-process ${fmt.int(inproc.heapBytesPerSandbox / 1024)} KiB a sandbox`,
      '< 50 MB',
      yes(growth * 1024 * 1024 < 50e6),
    ],
    [
      `GET a grid (CHECKED, ${fmt.int(bytes)} B) in a sandbox / in the default world`,
      fmt.pct(ratio),
      `${fmt.int(reads.sandbox.rps)} vs ${fmt.int(reads.default.rps)} req/s, medians of ${reads.rounds} alternating rounds of ${reads.slice} s; ` +
        `ratio within a round: median ${fmt.pct(median(reads.paired))} (${fmt.pct(Math.min(...reads.paired))}-${fmt.pct(Math.max(...reads.paired))}); ` +
        `CPU/req ${fmt.us(reads.sandbox.cpuUs)} vs ${fmt.us(reads.default.cpuUs)}; p99 ${fmt.ms(reads.sandbox.p99)} vs ${fmt.ms(reads.default.p99)}`,
      '>= 95% of default req/s',
      yes(ratio >= 0.95),
    ],
  ];
}
