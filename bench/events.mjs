// The event-stream part of the benchmark (GET /_emulator/events), against the built server in
// a child process, with 250 grids of one server each started at load (four transitions each:
// 1,000 in all):
//   (a) the memory 100 open streams on one world take (the server's RSS before and after);
//   (b) the longest stall of the server's event loop while an advance over those 1,000
//       transitions is written to 10 listening streams, seen from outside as the longest gap
//       between answers of a tight loop of health requests (as bench/stall.mjs does);
//   (c) grid reads per second with 10 streams open against none, alternately;
//   (d) the same advance as (b) in this process (the built emulator embedded, 10 streams that
//       take what they are given at once), its longest block of the event loop measured
//       directly: what (b) measures with no sockets and no other process in the way.
// Numbers are printed, never asserted.
//
//   node bench/events.mjs         (after npm run build)   prints the table
//   BENCH_EVENTS_DURATION         seconds of load per side and round of (c) (default 3)
//   BENCH_EVENTS_ROUNDS           alternating rounds of (c) (default 2)
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { HOST, ROOT, cannon, fmt, loopGapWatch, markdownTable, num, request, rssMiB, sleep, startProcess } from './lib.mjs';
import { BENCH_TOKEN, FIRST_GRID_ID, writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const GRIDS = 250;
const STREAMS = 100;
const LISTENERS = 10;
const MARK = Buffer.from('\nevent: ');

/** Opens an event stream and reads it (counting events) until `close()`. */
function openStream(port, query = '') {
  let events = 0;
  let res;
  const req = http.get({ host: HOST, port, path: `/_emulator/events${query}`, agent: false }, (r) => {
    res = r;
    // Counted on the bytes, cheaply: a frame is `id: <n>\nevent: <type>\n...`. The last bytes
    // of each chunk are kept, so that a marker cut in two is still counted once.
    let tail = Buffer.alloc(0);
    r.on('data', (chunk) => {
      const data = Buffer.concat([tail, chunk]);
      for (let at = data.indexOf(MARK); at >= 0; at = data.indexOf(MARK, at + MARK.length)) events++;
      tail = data.subarray(Math.max(0, data.length - (MARK.length - 1)));
    });
    r.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  const opened = new Promise((resolve) => req.on('response', resolve));
  return { opened, events: () => events, close: () => (res ? res.destroy() : req.destroy()) };
}

/**
 * LISTENERS streams read by a process of their own, so that reading them does not delay this
 * one's probe: resolves once all are open; `done` resolves to the fewest events one received
 * once each has `expected` (or after 30 s).
 */
function listenElsewhere(port, expected) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--listen', String(port), String(expected)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let readyResolve;
  const ready = new Promise((resolve) => (readyResolve = resolve));
  child.stdout.on('data', (c) => {
    out += c;
    if (out.includes('ready')) readyResolve();
  });
  const done = new Promise((resolve) => child.on('exit', () => resolve(Number(/received (\d+)/.exec(out)?.[1] ?? NaN))));
  return { ready, done };
}

/** The longest gap between answers of health requests, 1 ms apart, while `operation` runs (and 300 ms after). */
async function longestGap(port, operation) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await request(port, { path: '/_emulator/health', agent });
  let last = performance.now();
  let longest = 0;
  let done = false;
  let doneAt = Infinity;
  const op = operation().finally(() => {
    done = true;
    doneAt = performance.now();
  });
  op.catch(() => undefined);
  while (!done || performance.now() < doneAt + 300) {
    await request(port, { path: '/_emulator/health', agent });
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    await sleep(1);
  }
  agent.destroy();
  await op;
  return longest;
}

/** (d): the advance of (b) inside this process, with in-memory streams. */
async function inProcessStall(dir) {
  const { startEmulator, ManualClock } = await import(join(ROOT, 'dist/index.js'));
  const { EventStream } = await import(join(ROOT, 'dist/world/events-stream.js'));
  const emu = await startEmulator({ clock: new ManualClock(), fixtures: dir, port: 0, logLevel: 'silent' });
  try {
    const { app } = emu;
    const { world } = app;
    for (let i = 0; i < GRIDS; i++) {
      await app.inject({ method: 'POST', url: `/concerto/services/rest/CloudService/v1/grid/${FIRST_GRID_ID + i}/action`, headers: { 'x-auth-token': BENCH_TOKEN }, payload: { action: 'start' } });
    }
    let bytes = 0;
    for (let i = 0; i < LISTENERS; i++) {
      const out = new Writable({ write: (chunk, _encoding, done) => ((bytes += chunk.length), done()) });
      const stream = new EventStream(out, {}, 1 << 30, () => world.events.unsubscribe(stream));
      world.events.subscribe(stream);
    }
    // The advance route compiles its schemas on first use: not the events' cost.
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 0 } });
    await sleep(50);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const watch = loopGapWatch();
    delay.enable();
    const t0 = performance.now();
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 3_600_000 } });
    while (world.events.scheduled > 0) await new Promise((resolve) => setImmediate(resolve));
    const total = performance.now() - t0;
    await sleep(20);
    const longest = watch.stop();
    delay.disable();
    return { longest, total, bytes, events: world.events.lastId };
  } finally {
    await emu.close();
  }
}

export async function eventsBench({ env = {}, duration = num('BENCH_EVENTS_DURATION', 3), rounds = num('BENCH_EVENTS_ROUNDS', 2), log = () => undefined } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'emulator-events-bench-'));
  writeSeed(dir, { grids: GRIDS, startedGrids: 0, annotations: 0, domains: 1 });
  const server = await startProcess({ env: { ...env, FIXTURES_DIR: dir } });
  const { port, pid } = server;
  const json = { 'content-type': 'application/json' };
  const post = (path, body, method = 'POST') => request(port, { method, path, headers: json, body: JSON.stringify(body) });
  const rows = [];
  try {
    await post('/_emulator/clock', { frozen: true }, 'PUT');

    // (a) 100 open streams.
    await sleep(1000);
    const before = rssMiB(pid);
    const streams = Array.from({ length: STREAMS }, () => openStream(port));
    await Promise.all(streams.map((s) => s.opened));
    await sleep(1000);
    const after = rssMiB(pid);
    streams.forEach((s) => s.close());
    log(`${STREAMS} streams: RSS ${fmt.mib(before)} -> ${fmt.mib(after)}`);
    rows.push([`RSS of ${STREAMS} open event streams on one world`, fmt.mib(after - before), `${fmt.mib(before)} before, ${fmt.mib(after)} after`, '< 10 MB', after - before < 10 ? 'yes' : 'NO']);
    await sleep(500);

    // (b) an advance over 1,000 transitions, 10 listeners.
    const auth = { 'x-auth-token': BENCH_TOKEN, ...json };
    for (let i = 0; i < GRIDS; i++) {
      await request(port, { method: 'POST', path: `/concerto/services/rest/CloudService/v1/grid/${FIRST_GRID_ID + i}/action`, headers: auth, body: '{"action":"start"}' });
    }
    const listeners = listenElsewhere(port, GRIDS * 4);
    await listeners.ready;
    const expected = GRIDS * 4;
    // The probe's own process delay is reported too, so that a gap it caused is not taken for the server's.
    const own = monitorEventLoopDelay({ resolution: 5 });
    own.enable();
    let received = 0;
    const gap = await longestGap(port, async () => {
      await post('/_emulator/clock/advance', { ms: 3_600_000 });
      received = await listeners.done;
    });
    own.disable();
    log(`advance over ${expected} transitions to ${LISTENERS} streams: longest gap ${fmt.ms(gap)}, each stream got ${received}`);
    rows.push([
      `Longest stall: an advance over ${fmt.int(expected)} transitions, ${LISTENERS} streams listening`,
      fmt.ms(gap),
      `each stream received ${fmt.int(received)} transitions; longest gap between health answers, 1 ms apart (this process's own longest delay ${fmt.ms(own.max / 1e6)})`,
      '< 50 ms',
      gap < 50 ? 'yes' : 'NO',
    ]);

    // (c) grid reads with 10 listeners against none, alternately.
    const read = { port, pid, path: `/concerto/services/rest/CloudService/v1/grid/${FIRST_GRID_ID}`, headers: { 'x-auth-token': BENCH_TOKEN }, duration, connections: 10 };
    const none = [];
    const ten = [];
    await cannon({ ...read, duration: 1 });
    for (let r = 0; r < rounds; r++) {
      none.push((await cannon(read)).rps);
      const open = Array.from({ length: LISTENERS }, () => openStream(port));
      await Promise.all(open.map((s) => s.opened));
      ten.push((await cannon(read)).rps);
      open.forEach((s) => s.close());
      await sleep(200);
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(ten) / mean(none);
    log(`grid reads: ${fmt.int(mean(none))} req/s with no stream, ${fmt.int(mean(ten))} with ${LISTENERS}`);
    rows.push([
      `Grid reads with ${LISTENERS} streams open, against none`,
      fmt.pct(ratio),
      `${fmt.int(mean(ten))} against ${fmt.int(mean(none))} req/s; ${rounds} alternating rounds of ${duration} s`,
      '>= 95%',
      ratio >= 0.95 ? 'yes' : 'NO',
    ]);
  } finally {
    await server.stop();
  }
  try {
    // (d) the same advance, embedded.
    const d = await inProcessStall(dir);
    log(`embedded: ${d.events} events to ${LISTENERS} streams in ${fmt.ms(d.total)}, longest block ${fmt.ms(d.longest)}`);
    rows.push([
      `Longest block of the event loop, the same advance embedded (no sockets)`,
      fmt.ms(d.longest),
      `${fmt.int(d.events)} events to ${LISTENERS} streams (${fmt.mib(d.bytes / 1048576)}) written in ${fmt.ms(d.total)}, in slices`,
      '< 50 ms',
      d.longest < 50 ? 'yes' : 'NO',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--listen') {
  // The listening side of (b): LISTENERS streams of transitions until each has `expected`.
  const [port, expected] = [Number(process.argv[3]), Number(process.argv[4])];
  const streams = Array.from({ length: LISTENERS }, () => openStream(port, '?types=transition'));
  await Promise.all(streams.map((s) => s.opened));
  process.stdout.write('ready\n');
  const deadline = performance.now() + 30_000;
  while (streams.some((s) => s.events() < expected) && performance.now() < deadline) await sleep(5);
  process.stdout.write(`received ${Math.min(...streams.map((s) => s.events()))}\n`);
  streams.forEach((s) => s.close());
  process.exit(0);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await eventsBench({ log: (line) => console.error(line) });
  console.log(markdownTable(['measure', 'value', 'detail', 'goal', 'met'], rows));
}
