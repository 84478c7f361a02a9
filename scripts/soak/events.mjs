// Part `events` of `npm run soak`: the event stream (GET /_emulator/events) pushed as an
// attacker did, with ADMIN_TOKEN unset (anyone may open streams and make sandboxes).
//
//   1. flood   SOAK_EVENT_FIRES (1,000) fires of an alert, each with a 5.7 KiB message (5.7 MiB
//              in all), sent 10 at a time, first with no stream open, then while
//              SOAK_EVENT_READERS (100) streams on the default world read everything (in a worker
//              thread); the health check is polled throughout. Figures: bytes each stream
//              carried (an alert event carries its fire, not the history before it), the health
//              check's p50 and p99 with the readers and without, streams dropped.
//   2. resume  a resume from Last-Event-ID 0 after the flood (far more to replay than a client
//              may hold) answers 200 with stream.reset first and stays open: the next fire
//              arrives on it.
//   3. caps    1,000 streams asked over 10 sandboxes (100 each): EVENTS_MAX_STREAMS_TOTAL less
//              EVENTS_RESERVED_STREAMS (900) open, the rest answer 503, and the default world's
//              own stream still opens.
//
// Environment: SOAK_EVENT_READERS (100), SOAK_EVENT_FIRES (1000), SOAK_EVENT_ROUNDS (3: each a
// flood with no reader, then one with the readers; the health figures are the rounds' medians).
import http from 'node:http';
import { Worker } from 'node:worker_threads';
import { HOST, cpuSeconds, median, num, percentile, request, rssMiB, sleep, startProcess } from '../../bench/lib.mjs';

const ALERT = '/concerto/mpulse/api/alerts/demo-alert';
const log = (message) => process.stderr.write(`${message}\n`);

/**
 * Opens a stream and reads it as fast as it comes: its status, bytes carried, the text of its
 * first frames (the first 4 KiB), and whether the server ended it.
 */
function openStream(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const stream = { status: 0, bytes: 0, head: '', ended: false, body: '', close: () => undefined, waiters: [] };
    const req = http.get({ host: HOST, port, path, headers, agent: false }, (res) => {
      stream.status = res.statusCode;
      res.on('data', (chunk) => {
        stream.bytes += chunk.length;
        if (stream.head.length < 4096) stream.head += chunk.toString('utf8').slice(0, 4096 - stream.head.length);
        if (stream.status !== 200) stream.body += chunk;
        for (const wake of stream.waiters.splice(0)) wake();
      });
      const end = () => {
        stream.ended = true;
        for (const wake of stream.waiters.splice(0)) wake();
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
      resolve(stream);
    });
    stream.close = () => req.destroy();
    req.on('error', (err) => (stream.status ? undefined : reject(err)));
  });
}

/**
 * `count` streams on `path`, read in a worker thread (its own event loop, so that reading
 * hundreds of MiB does not delay the health checks this thread times). Answers once all are
 * open: their statuses, and `stop()`, which waits until no stream grows for 600 ms, closes
 * them and answers the bytes each carried and how many the server ended.
 */
async function workerReaders(port, path, count) {
  const code = `
    const http = require('node:http');
    const { parentPort, workerData: { host, port, path, count } } = require('node:worker_threads');
    const streams = [];
    let opened = 0;
    for (let i = 0; i < count; i++) {
      const s = { status: 0, bytes: 0, ended: false };
      streams.push(s);
      s.req = http.get({ host, port, path, agent: false }, (res) => {
        s.status = res.statusCode;
        res.on('data', (c) => (s.bytes += c.length));
        const end = () => (s.ended = true);
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
        if (++opened === count) parentPort.postMessage({ opened: streams.map((x) => x.status) });
      });
      s.req.on('error', () => ((s.ended = true), ++opened === count && parentPort.postMessage({ opened: streams.map((x) => x.status) })));
    }
    parentPort.on('message', async () => {
      for (let last = -1, quiet = 0, tries = 0; quiet < 2 && tries < 200; tries++) {
        await new Promise((r) => setTimeout(r, 300));
        const now = streams.reduce((n, x) => n + x.bytes, 0);
        quiet = now === last ? quiet + 1 : 0;
        last = now;
      }
      const result = { bytes: streams.map((x) => x.bytes), ended: streams.filter((x) => x.ended).length };
      for (const x of streams) x.req.destroy();
      parentPort.postMessage(result);
    });
  `;
  const worker = new Worker(code, { eval: true, workerData: { host: HOST, port, path, count } });
  const next = () => new Promise((resolve, reject) => (worker.once('message', resolve), worker.once('error', reject)));
  const { opened } = count > 0 ? await next() : { opened: [] };
  return {
    statuses: opened,
    async stop() {
      const done = next();
      worker.postMessage('stop');
      const result = await done;
      await worker.terminate();
      return result;
    },
  };
}

/** Sends `fires` fires of `message`, 10 at a time, while the health check is polled: the answers' statuses, the time, every health wait. */
async function flood(port, fires, message) {
  const health = pollHealth(port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const statuses = new Map();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < fires) {
        next++;
        const res = await request(port, { method: 'POST', path: `${ALERT}/fire`, body: { message }, agent, timeoutMs: 30_000 }).catch((err) => ({ status: err.message }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  const ms = performance.now() - t0;
  return { statuses, ms, health };
}

/** Waits until `ok(stream)` holds, or `ms` passed; answers whether it held. */
async function until(stream, ok, ms) {
  const deadline = performance.now() + ms;
  while (!ok(stream)) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await new Promise((resolve) => {
      stream.waiters.push(resolve);
      setTimeout(resolve, Math.min(left, 50));
    });
  }
  return true;
}

/** Polls the health check until stopped: every wait, in ms. */
function pollHealth(port) {
  let running = true;
  const waits = [];
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      await request(port, { path: '/_emulator/health' }).catch(() => undefined);
      waits.push(performance.now() - t0);
      await sleep(5);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return waits.sort((a, b) => a - b);
    },
  };
}

/** Runs the part; `verdict.check(ok, kind, detail)` records a failure, as in the other soak parts. */
export async function eventsPart(verdict) {
  const check = (ok, kind, detail) => verdict.check(ok, kind, detail);
  const readers = Math.round(num('SOAK_EVENT_READERS', 100));
  const fires = Math.round(num('SOAK_EVENT_FIRES', 1000));
  const server = await startProcess({ env: { RATE_LIMIT_MAX: '1000000000', MAX_SANDBOXES: '20' } });
  const figures = {};
  const open = [];
  try {
    // 1. The flood: first with no reader (what the machine gives the health check now), then with the readers.
    log(`events: ${fires} fires of 5.7 KiB with no reader, then with ${readers} readers on the default world; then a resume from 0; then 1,000 streams over 10 sandboxes ...`);
    const message = 'x'.repeat(5700);
    const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    const ms = (n) => `${Math.round(n)} ms`;
    // Rounds alternate, no reader then readers, so that a machine busy with other work slows both alike.
    const rounds = Math.max(1, Math.round(num('SOAK_EVENT_ROUNDS', 3)));
    await flood(server.port, 100, message).then((warm) => warm.health.stop());
    figures.rssStart = rssMiB(server.pid);
    const alone = [];
    const watched = [];
    const carried = [];
    let ended = 0;
    let cpu = 0;
    for (let round = 0; round < rounds; round++) {
      const quiet = await flood(server.port, fires, message);
      const quietWaits = await quiet.health.stop();
      alone.push({ ms: quiet.ms, p50: percentile(quietWaits, 50), p99: percentile(quietWaits, 99), calls: quietWaits.length });
      const cpu0 = cpuSeconds(server.pid);
      const reading = await workerReaders(server.port, '/_emulator/events', readers);
      check(
        reading.statuses.every((status) => status === 200),
        'a reader of the default world was refused',
        reading.statuses.join(','),
      );
      const busy = await flood(server.port, fires, message);
      const result = await reading.stop();
      const waits = await busy.health.stop();
      cpu += cpuSeconds(server.pid) - cpu0;
      carried.push(...result.bytes);
      ended += result.ended;
      watched.push({ ms: busy.ms, p50: percentile(waits, 50), p99: percentile(waits, 99), max: waits[waits.length - 1], calls: waits.length });
      for (const run of [quiet, busy]) check(run.statuses.get(204) === fires, 'a fire did not answer 204', [...run.statuses].map(([k, n]) => `${k}: ${n}`).join(', '));
      log(
        `  round ${round + 1}: with no reader ${fires} fires in ${ms(quiet.ms)}, health p50 ${ms(alone[round].p50)}, p99 ${ms(alone[round].p99)} (${alone[round].calls} calls); ` +
          `with ${readers} readers in ${ms(busy.ms)}, health p50 ${ms(watched[round].p50)}, p99 ${ms(watched[round].p99)}, longest ${ms(watched[round].max)} (${watched[round].calls} calls)`,
      );
    }
    const bytes = carried.sort((a, b) => a - b);
    figures.bytesMin = bytes[0];
    figures.bytesMedian = bytes[bytes.length >> 1];
    figures.bytesMax = bytes[bytes.length - 1];
    figures.dropped = ended;
    figures.aloneP99 = median(alone.map((r) => r.p99));
    figures.healthP50 = median(watched.map((r) => r.p50));
    figures.healthP99 = median(watched.map((r) => r.p99));
    figures.floodCpuSeconds = cpu / rounds;
    figures.rssAfterFlood = rssMiB(server.pid);
    log(`  median of ${rounds} rounds: health p99 ${ms(figures.healthP99)} with ${readers} readers (p50 ${ms(figures.healthP50)}), ${ms(figures.aloneP99)} with none; server CPU ${figures.floodCpuSeconds.toFixed(1)} s a flood with the readers`);
    log(`  each stream carried ${mib(figures.bytesMin)} to ${mib(figures.bytesMax)} (median ${mib(figures.bytesMedian)}) for ${fires} fires of ${mib(fires * 5700)} (${((fires * 5700) / 1e6).toFixed(1)} MB) of messages; ${ended} streams ended; RSS ${Math.round(figures.rssStart)} -> ${Math.round(figures.rssAfterFlood)} MiB`);
    check(ended === 0, 'a reader that read at once was dropped', `${ended} of ${readers * rounds}`);
    // Each stream carries each fire once, with its own message only: a few hundred bytes over it.
    check(figures.bytesMax < fires * (5700 + 1024), 'a stream carried more than each fire once', mib(figures.bytesMax));
    check(figures.bytesMin > fires * 5700, 'a stream missed fires', mib(figures.bytesMin));
    // Against the same flood with no reader on the same machine: a busy machine slows both.
    check(figures.healthP99 < Math.max(250, 3 * figures.aloneP99), 'the health check p99 with the readers was over 250 ms and 3 times that with none', `${ms(figures.healthP99)} against ${ms(figures.aloneP99)}`);

    // 2. A resume with far more to replay than EVENTS_CLIENT_MAX_BYTES.
    const resumed = await openStream(server.port, '/_emulator/events?kind=alert', { 'last-event-id': '0' });
    open.push(resumed);
    check(resumed.status === 200, 'a resume from 0 was not answered 200', `${resumed.status}`);
    const reset = await until(resumed, (s) => s.ended || /\nevent: stream\.reset\n/.test(s.head), 10_000);
    check(reset && !resumed.ended, 'a resume from 0 got no stream.reset, or was closed', resumed.head.slice(0, 300));
    const before = resumed.bytes;
    await request(server.port, { method: 'POST', path: `${ALERT}/fire`, body: { message: 'after the resume' } });
    const live = await until(resumed, (s) => s.ended || s.bytes > before, 10_000);
    check(live && !resumed.ended, 'the resumed stream did not carry the next fire', `${resumed.bytes - before} bytes, ended ${resumed.ended}`);
    figures.resumeBytes = resumed.bytes;
    log(`  a resume from 0: ${resumed.status}, stream.reset first, ${mib(resumed.bytes)} replayed, open for the next fire`);
    for (const x of open.splice(0)) x.close();
    await sleep(200);

    // 3. 1,000 streams over 10 sandboxes.
    for (let k = 0; k < 10; k++) {
      const made = await request(server.port, { method: 'PUT', path: `/_emulator/sandboxes/ev${k}` });
      check(made.status === 201, `PUT /_emulator/sandboxes/ev${k} answered ${made.status}`, made.text.slice(0, 200));
    }
    const asked = [];
    for (let batch = 0; batch < 20; batch++) {
      const some = await Promise.all(Array.from({ length: 50 }, (_, j) => openStream(server.port, `/sandbox/ev${(batch * 50 + j) % 10}/_emulator/events`)));
      asked.push(...some);
    }
    open.push(...asked);
    const opened = asked.filter((s) => s.status === 200).length;
    const refused = asked.filter((s) => s.status === 503).length;
    figures.sandboxStreams = opened;
    const own = await openStream(server.port, '/_emulator/events');
    open.push(own);
    figures.defaultWorldStatus = own.status;
    log(`  1,000 streams asked over 10 sandboxes: ${opened} opened, ${refused} refused with 503; the default world's own stream then: ${own.status}`);
    check(opened === 900 && refused === 100, 'sandboxes did not get exactly EVENTS_MAX_STREAMS_TOTAL less EVENTS_RESERVED_STREAMS', `${opened} opened, ${refused} refused`);
    await until(asked.find((s) => s.status === 503) ?? own, (s) => s.ended, 5000);
    const message503 = asked.find((s) => s.status === 503)?.body ?? '';
    check(/kept for the default world/.test(message503), 'a refused sandbox stream did not say why', message503.slice(0, 300));
    check(own.status === 200, "the default world's own stream was refused", `${own.status}`);
    check(server.child.exitCode === null, 'server exited during the run', server.stderr());
  } finally {
    for (const s of open.splice(0)) s.close();
    await server.stop();
  }
  return figures;
}
