// The stall part of the benchmark: how long the server's event loop is held by the big state
// operations, with a large state (200,000 annotations, 1,000 started grids) in one process of the
// built server: (a) a periodic write of the state file (STATE_FILE), (b) the export
// (GET /_emulator/state), (c) an import (PUT /_emulator/state) and (d) a sandbox made from a
// posted state (PUT /_emulator/sandboxes/<name>), both with the export as the body.
//
// Seen from outside, with no help from the server: a tight loop of tiny requests
// (GET /_emulator/health on one kept-alive connection, the next 1 ms after each answer) runs
// during each operation; the longest gap between two answers is the longest stall. This
// process's own event-loop delay is reported too, so that a gap it caused is not taken for one
// of the server's.
//
//   node bench/stall.mjs            (after npm run build)   prints the table
//   BENCH_STALL_ANNOTATIONS         annotations in the seed (default 200000)
//   BENCH_STALL_INTERVAL_MS         STATE_FLUSH_INTERVAL_MS of the server (default 4000)
//   BENCH_STALL_PARTS               comma-separated: write (a, a'), import (b, c, d), requests (e, f, g) (default all)
//
// The requests part measures single requests an attacker can send, on a seed of its own (a
// server with the loop monitor): (e) GET of a repository type holding ~15 MiB of objects,
// (f) the first read of a two-day run's results (clip-element), (g) one journal count by a
// query parameter over a full journal of 8 KB URLs of tiny parameters.
//   BENCH_STALL_NODE_ARGS           more node options for the servers of (b, c, d) and (e, f, g), e.g. --cpu-prof
// Each request of (e, f, g) is sent and its answer read by a process of its own, so that the
// probe's gaps are not those of its own event loop receiving the answer.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HOST, fmt, markdownTable, num, percentile, request, sleep, startProcess } from './lib.mjs';
import { ANNOTATION_BASE, ANNOTATION_STEP_MS, BENCH_TOKEN, BENCH_USER, grid, writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
/** The goal: no stall longer than this. */
const TARGET_MS = 50;
/** Probing goes on this long after an operation ends, so that a stall at its very end is seen. */
const TAIL_MS = 300;

/**
 * Probes the server until `until()` resolves (plus TAIL_MS): one health request at a time on a
 * kept-alive connection, 1 ms apart. Answers the gaps between answers and the last health body.
 */
async function probeDuring(port, until, server) {
  // The server's own loop monitor (bench/loop-monitor.mjs) starts afresh.
  if (server) await serverLoopMax(server);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // One answer before the operation starts: a stall at its very start is a gap after this one.
  let last = await request(port, { path: '/_emulator/health', agent });
  const times = [performance.now()];
  let done = false;
  let doneAt = Infinity;
  const op = until().finally(() => {
    done = true;
    doneAt = performance.now();
  });
  // The outcome is awaited below; a failure must not go unhandled while the probe runs.
  op.catch(() => undefined);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  try {
    while (!done || performance.now() < doneAt + TAIL_MS) {
      const res = await request(port, { path: '/_emulator/health', agent, timeoutMs: 60_000 });
      times.push(performance.now());
      last = res;
      await sleep(1);
    }
  } finally {
    loop.disable();
    agent.destroy();
  }
  const serverLoop = server ? await serverLoopMax(server) : NaN;
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  const sorted = [...gaps].sort((a, b) => a - b);
  return {
    result: await op,
    longest: sorted.at(-1) ?? NaN,
    p99: percentile(sorted, 99),
    over: gaps.filter((g) => g > TARGET_MS).length,
    answers: times.length,
    ownDelayMs: loop.max / 1e6,
    serverLoopMs: serverLoop,
    health: last && JSON.parse(last.text),
  };
}

const LOOP_MONITOR = fileURLToPath(new URL('./loop-monitor.mjs', import.meta.url));

/**
 * The longest delay of the server's event loop since the last call, as its own monitor saw it
 * (perf_hooks' monitorEventLoopDelay, loaded with --import): asked for with SIGWINCH, read from
 * its stderr.
 */
async function serverLoopMax(server) {
  const lines = () => server.stderr().match(/loop-delay-max-ms [\d.]+/g) ?? [];
  const before = lines().length;
  const last = lines().at(-1);
  process.kill(server.pid, 'SIGWINCH');
  const deadline = performance.now() + 60_000;
  // stderr keeps its last 4,000 characters: a new line shows as a new count or a new last line.
  while (lines().length === before && lines().at(-1) === last) {
    if (performance.now() > deadline) throw new Error('the server did not report its loop delay');
    await sleep(5);
  }
  return Number(lines().at(-1).split(' ')[1]);
}

/** One request whose body is only counted (or kept, with `keep`); resolves with status, bytes, time. */
function fetchBody(port, { method = 'GET', path, body, headers = {}, keep = false }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: HOST, port, method, path, agent: false, headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) } },
      (res) => {
        let bytes = 0;
        let chunks = 0;
        const kept = [];
        res.on('data', (c) => {
          bytes += c.length;
          chunks++;
          if (keep) kept.push(c);
        });
        // The pieces are joined later (body()), so that this process does no big work while it probes.
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes, chunks, ms: performance.now() - t0, body: () => Buffer.concat(kept) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * fetchBody in a process of its own: its answer (17 MB for (e)) is read there, so that the
 * probe's own event loop, and the gaps it measures, are not slowed by receiving it. The body
 * is written to a file, read after the probe when asked for.
 */
function fetchBodyInChild(port, { method = 'GET', path, body, headers = {} }, work) {
  const file = join(work, `body-${process.hrtime.bigint()}`);
  const script = `
    const http = require('node:http'); const fs = require('node:fs');
    const [host, port, method, path, headers, body, file] = JSON.parse(process.argv[1]);
    const out = fs.createWriteStream(file); const t0 = performance.now();
    const req = http.request({ host, port: Number(port), method, path, agent: false, headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) } }, (res) => {
      let bytes = 0; let chunks = 0;
      res.on('data', (c) => { bytes += c.length; chunks++; out.write(c); });
      res.on('end', () => out.end(() => process.stdout.write(JSON.stringify({ status: res.statusCode, headers: res.headers, bytes, chunks, ms: performance.now() - t0 }))));
    });
    req.on('error', (err) => { process.stderr.write(String(err)); process.exit(1); });
    req.end(body ?? undefined);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, JSON.stringify([HOST, port, method, path, headers, body ? body.toString('utf8') : null, file])], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the fetching process failed (${code}): ${err}`));
      resolve({ ...JSON.parse(out), body: () => readFileSync(file) });
    });
  });
}

const expect = (res, status, what) => {
  if (res.status !== status) throw new Error(`${what}: answered ${res.status}, expected ${status}: ${res.body().subarray(0, 300)}`);
  return res;
};

/**
 * Runs the stall part and returns the rows of its table (measure, value, detail, target, met).
 * `annotations` and `intervalMs` default to BENCH_STALL_ANNOTATIONS and BENCH_STALL_INTERVAL_MS.
 */
export async function stallBench({
  env = {},
  annotations = num('BENCH_STALL_ANNOTATIONS', 200_000),
  intervalMs = num('BENCH_STALL_INTERVAL_MS', 4000),
  parts = (process.env.BENCH_STALL_PARTS || 'write,import,requests').split(',').map((p) => p.trim()),
  entry,
  log = () => undefined,
} = {}) {
  for (const part of parts) if (!['write', 'import', 'requests'].includes(part)) throw new Error(`BENCH_STALL_PARTS: unknown part '${part}' (known: write, import, requests)`);
  const entryOf = entry ? { entry } : {};
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-stall-'));
  const stateFile = join(work, 'state', 'state.json');
  const rows = [];
  const yes = (ok) => (ok ? 'yes' : 'NO');
  const stallRow = (what, probe, extra) => [
    `Longest stall: ${what}`,
    fmt.ms(probe.longest),
    `longest gap between ${fmt.int(probe.answers)} health answers (1 ms apart); p99 gap ${fmt.ms(probe.p99)}, ${probe.over} gaps > ${TARGET_MS} ms; ${extra}; ` +
      `${Number.isFinite(probe.serverLoopMs) ? `server's own loop delay max ${fmt.ms(probe.serverLoopMs)} (monitorEventLoopDelay); ` : ''}probe's own loop delay max ${fmt.ms(probe.ownDelayMs)}`,
    `< ${TARGET_MS} ms`,
    yes(probe.longest < TARGET_MS),
  ];
  /** The server's own measure, where it was taken: the longest delay its event loop saw. */
  const loopRow = (what, probe) => [
    `Server's event-loop delay: ${what}`,
    fmt.ms(probe.serverLoopMs),
    `max of perf_hooks monitorEventLoopDelay in the server process (bench/loop-monitor.mjs) from before the request to ${TAIL_MS} ms after its answer`,
    `< ${TARGET_MS} ms`,
    yes(probe.serverLoopMs < TARGET_MS),
  ];
  const baseEnv = { RATE_LIMIT_MAX: String(1_000_000_000), ...env };
  const health = async (port) => JSON.parse((await request(port, { path: '/_emulator/health', timeoutMs: 60_000 })).text);
  let mark = 0;
  /** A change of the state (one more annotation), so that the next write has something to write. */
  const change = async (port) => {
    const res = await request(port, {
      method: 'POST',
      path: ANNOTATIONS,
      headers: { 'x-auth-token': BENCH_TOKEN },
      body: { title: 'Deploy', text: 'a change for the next write', start: ANNOTATION_BASE + (annotations + 10 + mark++) * ANNOTATION_STEP_MS, domainIds: [9001] },
    });
    if (res.status !== 200) throw new Error(`creating an annotation: ${res.status} ${res.text.slice(0, 300)}`);
  };
  try {
    const seedDir = join(work, 'seed');
    writeSeed(seedDir, { annotations });
    mkdirSync(join(work, 'state'));

    // --- The state file: one server with STATE_FILE, written every intervalMs --------------
    if (parts.includes('write')) {
      log(`stall: seed of ${fmt.int(annotations)} annotations written; starting the server with STATE_FILE ...`);
      const writer = await startProcess({
        ...entryOf,
        env: { ...baseEnv, FIXTURES_DIR: seedDir, STATE_FILE: stateFile, STATE_FLUSH_INTERVAL_MS: String(intervalMs) },
        timeoutMs: 180_000,
      });
      let final;
      try {
        const writtenAt0 = Date.parse((await health(writer.port)).persistence.lastWrittenAt);

        // (a) A periodic write: a change, then probing until the write that carries it is done.
        log('stall: (a) a periodic state-file write ...');
        await change(writer.port);
        const deadline = performance.now() + 3 * intervalMs + 60_000;
        const write = await probeDuring(writer.port, async () => {
          for (;;) {
            const { persistence } = await health(writer.port);
            if (!persistence?.ok) throw new Error(`the state file cannot be written: ${persistence?.error}`);
            const at = Date.parse(persistence.lastWrittenAt);
            if (at > writtenAt0) return at;
            if (performance.now() > deadline) throw new Error('no periodic write seen');
            await sleep(20);
          }
        });
        // The interval's ticks began when the start-up write ended; the write began on the last
        // tick before it ended (it takes less than an interval).
        const writeMs = (write.result - writtenAt0) % intervalMs;
        const fileBytes = statSync(stateFile).size;
        log(`  longest stall ${fmt.ms(write.longest)}, write ${fmt.ms(writeMs)} (${fmt.int(fileBytes)} B)`);
        rows.push(stallRow('periodic state-file write', write, `the file: ${fmt.int(fileBytes)} B`));
        rows.push([
          'State-file write, total time',
          fmt.ms(writeMs),
          `from the interval's tick to lastWrittenAt of the health answer (1 ms resolution), ${fmt.int(fileBytes)} B`,
          '-',
          '-',
        ]);

        // (a') A tick with nothing changed: the state is still worked out and compared.
        log("stall: (a') a periodic tick with nothing changed ...");
        const idle = await probeDuring(writer.port, () => sleep(intervalMs + 200));
        log(`  longest stall ${fmt.ms(idle.longest)}`);
        rows.push(stallRow('periodic tick, nothing changed', idle, `a whole interval (${fmt.int(intervalMs)} ms) probed`));
        // The final write has something to write.
        await change(writer.port);
      } finally {
        const t0 = performance.now();
        const exit = await writer.stop();
        final = { ms: performance.now() - t0, exit };
      }
      const saved = JSON.parse(readFileSync(stateFile, 'utf8'));
      log(`  shutdown ${fmt.ms(final.ms)}`);
      rows.push([
        'Shutdown (SIGTERM) to exit, final write included',
        fmt.ms(final.ms),
        `exit ${final.exit.code ?? final.exit.signal}; the file holds ${fmt.int(saved.annotations.length)} annotations (${annotations} + 2 added)`,
        '-',
        '-',
      ]);
    }

    if (parts.includes('requests')) rows.push(...(await requestStalls({ entryOf, baseEnv, work, stallRow, loopRow, log })));

    // --- Export and import: a server without STATE_FILE, so that no write runs meanwhile ----
    if (!parts.includes('import')) return rows;
    log('stall: starting the server without STATE_FILE ...');
    const server = await startProcess({ ...entryOf, nodeArgs: ['--import', LOOP_MONITOR, ...(process.env.BENCH_STALL_NODE_ARGS ?? '').split(' ').filter(Boolean)], env: { ...baseEnv, FIXTURES_DIR: seedDir }, timeoutMs: 180_000 });
    try {
      // (b) The export.
      log('stall: (b) GET /_emulator/state ...');
      const exp = await probeDuring(server.port, () => fetchBody(server.port, { path: '/_emulator/state', keep: true }), server);
      expect(exp.result, 200, 'GET /_emulator/state');
      const exported = exp.result.body();
      const exportedCount = JSON.parse(exported.toString('utf8')).annotations.length;
      if (exportedCount !== annotations) throw new Error(`the export holds ${exportedCount} annotations, expected ${annotations}`);
      log(`  longest stall ${fmt.ms(exp.longest)} (server's loop ${fmt.ms(exp.serverLoopMs)}), export ${fmt.ms(exp.result.ms)} (${fmt.int(exp.result.bytes)} B)`);
      const framing = exp.result.headers['content-length'] !== undefined ? 'content-length' : 'chunked';
      rows.push(stallRow('GET /_emulator/state', exp, `${fmt.int(exp.result.bytes)} B in ${fmt.int(exp.result.chunks)} reads, ${framing}`));
      rows.push(loopRow('GET /_emulator/state', exp));
      rows.push(['GET /_emulator/state, total time', fmt.ms(exp.result.ms), `request sent to last byte read, ${fmt.int(exp.result.bytes)} B`, '-', '-']);

      // (c) The import of that export, and (d) a sandbox made from it.
      log('stall: (c) PUT /_emulator/state with the export ...');
      const imp = await probeDuring(server.port, () => fetchBody(server.port, { method: 'PUT', path: '/_emulator/state', body: exported, keep: true }), server);
      expect(imp.result, 200, 'PUT /_emulator/state');
      log(`  longest stall ${fmt.ms(imp.longest)} (server's loop ${fmt.ms(imp.serverLoopMs)}), import ${fmt.ms(imp.result.ms)}`);
      rows.push(stallRow('PUT /_emulator/state', imp, `body ${fmt.int(exported.length)} B (the export)`));
      rows.push(loopRow('PUT /_emulator/state', imp));
      rows.push(['PUT /_emulator/state, total time', fmt.ms(imp.result.ms), 'request sent to answer read', '-', '-']);

      log('stall: (d) PUT /_emulator/sandboxes/big with the export ...');
      const sbx = await probeDuring(server.port, () => fetchBody(server.port, { method: 'PUT', path: '/_emulator/sandboxes/big', body: exported, keep: true }), server);
      expect(sbx.result, 201, 'PUT /_emulator/sandboxes/big');
      log(`  longest stall ${fmt.ms(sbx.longest)} (server's loop ${fmt.ms(sbx.serverLoopMs)}), sandbox ${fmt.ms(sbx.result.ms)}`);
      rows.push(stallRow('PUT /_emulator/sandboxes/<name> with a state', sbx, `body ${fmt.int(exported.length)} B (the export)`));
      rows.push(loopRow('PUT /_emulator/sandboxes/<name> with a state', sbx));
      rows.push(['PUT /_emulator/sandboxes/<name> with a state, total time', fmt.ms(sbx.result.ms), 'request sent to answer read', '-', '-']);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

const REPO = '/concerto/services/rest/RepositoryService/v1';
const INSTANCES = '/concerto/services/rest/composition/instances/v1';
const RESULTS = '/concerto/services/rest/Results/v1';
const DAY_MS = 86_400_000;
/** Licences of about 1,500 bytes each, 10,000 of them: close to REPOSITORY_MAX_BYTES (16 MiB). */
const LICENCES = 10_000;
/** Journal entries of `/nowhere?a&a&...&b=1`, about 8 KB each: 4,000 tiny parameters. */
const JOURNAL_PARAMS = 4000;

/** The seed of the requests part: a user, a started grid, a full licence type, a two-day composition. */
function writeRequestSeed(dir) {
  mkdirSync(dir);
  const write = (name, data) => writeFileSync(join(dir, name), JSON.stringify(data));
  write('users.json', {
    users: [{ userName: BENCH_USER, password: 'bench', tenant: 'Default' }],
    tokens: [{ token: BENCH_TOKEN, userName: BENCH_USER, neverExpires: true }],
  });
  write('grids.json', { grids: [grid(100_001, { servers: 4, startedAgoMs: 3_600_000 })] });
  write('objects.json', {
    objects: Array.from({ length: LICENCES }, (_, i) => ({
      id: 50_000 + i,
      type: 'license',
      name: `Licence ${i}`,
      description: `licence number ${i}`,
      attributes: [{ name: 'key', value: `LIC-${i}` }, { name: 'serverHours', value: String(i % 5000) }],
      body: `<License><Key>LIC-${i}</Key><Notes>${'n'.repeat(1250)}</Notes></License>`,
    })),
  });
  // Four tracks of ten transactions and pages: 40 series, 2,880 minutes.
  write('compositions.json', {
    compositions: [
      {
        id: 402,
        path: '/Bench/Two Days',
        durationMs: 2 * DAY_MS,
        tracks: Array.from({ length: 4 }, (_, t) => ({
          name: `Track ${t}`,
          clip: `Clip ${t}`,
          virtualUsers: 500,
          loadServers: 1,
          rampUpMs: 600_000,
          thinkTimeMs: 3000,
          collections: Array.from({ length: 10 }, (_, c) => ({ name: `Step ${c}`, type: c % 2 ? 'page' : 'transaction', medianMs: 200 + 50 * c, sigma: 0.6, errorRate: 0.01, messages: 3 })),
        })),
      },
    ],
  });
}

/** (e), (f), (g): single requests that once held the event loop, each probed on one server. */
async function requestStalls({ entryOf, baseEnv, work, stallRow, loopRow, log }) {
  const rows = [];
  const seedDir = join(work, 'requests-seed');
  writeRequestSeed(seedDir);
  log('stall: starting the server of the requests part ...');
  const server = await startProcess({ ...entryOf, nodeArgs: ['--import', LOOP_MONITOR, ...(process.env.BENCH_STALL_NODE_ARGS ?? '').split(' ').filter(Boolean)], env: { ...baseEnv, FIXTURES_DIR: seedDir, JOURNAL_SIZE: '1000' }, timeoutMs: 180_000 });
  const token = { 'x-auth-token': BENCH_TOKEN };
  const measure = async (what, path, options, check) => {
    const probe = await probeDuring(server.port, () => fetchBodyInChild(server.port, { path, ...options }, work), server);
    expect(probe.result, 200, what);
    const detail = check(JSON.parse(probe.result.body().toString('utf8')), probe.result);
    log(`  ${what}: longest stall ${fmt.ms(probe.longest)} (server's loop ${fmt.ms(probe.serverLoopMs)}), ${fmt.ms(probe.result.ms)} in all; ${detail}`);
    rows.push(stallRow(what, probe, detail));
    rows.push(loopRow(what, probe));
    rows.push([`${what}, total time`, fmt.ms(probe.result.ms), 'request sent to last byte read', '-', '-']);
  };
  try {
    // (e) A repository type of ~15 MiB.
    log('stall: (e) GET a full repository type ...');
    await measure('GET Objects/license, 10,000 objects', `${REPO}/Objects/license`, { headers: token }, (body, res) => {
      if (body.objects.length !== LICENCES) throw new Error(`the list holds ${body.objects.length} objects, expected ${LICENCES}`);
      return `${fmt.int(res.bytes)} B, ${res.headers['content-length'] !== undefined ? 'content-length' : 'chunked'}`;
    });

    // (f) The first read of a two-day run, played and then two days on.
    log('stall: (f) the first read of a two-day run ...');
    const play = await request(server.port, { method: 'POST', path: `${INSTANCES}?command=play`, headers: token, body: { compositionName: '/Bench/Two Days' } });
    if (play.status !== 200) throw new Error(`play: ${play.status} ${play.text.slice(0, 300)}`);
    const advance = await request(server.port, { method: 'POST', path: '/_emulator/clock/advance', body: { ms: 2 * DAY_MS + 600_000 }, timeoutMs: 60_000 });
    if (advance.status !== 200) throw new Error(`advance: ${advance.status} ${advance.text.slice(0, 300)}`);
    const { resultid } = JSON.parse((await request(server.port, { path: `${INSTANCES}/${encodeURIComponent(JSON.parse(play.text).instanceID)}`, headers: token })).text);
    await measure('first GET Results/<id>/clip-element of a two-day run', `${RESULTS}/${resultid}/clip-element`, { headers: token }, (body) => {
      return `${fmt.int(body.elementTypes[0].metrics.count)} messages, 40 series, 2,880 minutes`;
    });

    // (g) A journal of 1,000 long URLs of tiny parameters, then one count by a parameter.
    log('stall: (g) one journal count by a query parameter ...');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const url = `/nowhere?${'a&'.repeat(JOURNAL_PARAMS)}b=1`;
    for (let i = 0; i < 1000; i++) await request(server.port, { path: url, agent });
    agent.destroy();
    await measure('POST /_emulator/journal/count {"query":{"b":"1"}}, 1,000 URLs of 8 KB', '/_emulator/journal/count', { method: 'POST', body: Buffer.from('{"query":{"b":"1"}}') }, (body) => {
      return `count ${body.count}${body.next !== undefined ? `, next ${body.next}` : ', no next'} (one call)`;
    });
  } finally {
    await server.stop();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const log = (m) => process.stderr.write(`${m}\n`);
  stallBench({ log })
    .then((rows) => process.stdout.write(`\n${markdownTable(['stall (large state)', 'value', 'detail', 'target', 'met'], rows)}\n`))
    .catch((err) => {
      process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
      process.exit(1);
    });
}
