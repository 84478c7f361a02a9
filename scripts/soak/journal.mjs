// journal: the request journal stays bounded in bytes, and reading it never holds the loop.
//
//   1. 1,000 POSTs of a 64 KiB JSON body of empty objects to an unknown path, 10,000 GETs
//      with 12 KB of headers into 10 sandboxes, then 3,000 log-in calls with 60 KiB bodies
//      (kept whole, secrets masked) spread over four sandboxes: resident memory after each.
//   2. Listing pages, counts with bodyJson and counts by 32 query names, while the health
//      check is polled: the longest the health check waited.
// ADMIN_TOKEN is set, as in the report that found the journal unbounded.
import http from 'node:http';
import { request, rssMiB, sleep, startProcess } from '../../bench/lib.mjs';

const ADMIN = 'soak-admin-token';
const ADMIN_HEADERS = { authorization: `Bearer ${ADMIN}` };
const REPO = '/concerto/services/rest/RepositoryService/v1';
const log = (message) => process.stderr.write(`${message}\n`);

/** Sends `total` requests made by `make(i)`, `concurrency` at a time, over keep-alive sockets. */
async function send(port, total, concurrency, make) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses = new Map();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const res = await request(port, { ...make(i), agent, timeoutMs: 30_000 }).catch((err) => ({ status: err.message }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  return [...statuses].map(([k, n]) => `${k}: ${n}`).join(', ');
}

/** Polls the health check until stopped; the longest answer, in ms. */
function pollHealth(port) {
  let running = true;
  let longest = 0;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      await request(port, { path: '/_emulator/health' }).catch(() => undefined);
      longest = Math.max(longest, performance.now() - t0);
      await sleep(5);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return longest;
    },
  };
}

/** Runs the part; `verdict.check(ok, kind, detail)` records a failure, as in the other soak parts. */
export async function journalPart(verdict) {
  const check = (ok, kind, detail) => verdict.check(ok, kind, detail);
  const server = await startProcess({ env: { ADMIN_TOKEN: ADMIN, RATE_LIMIT_MAX: '1000000000', MAX_SANDBOXES: '100' } });
  log('journal: 1,000 x 64 KiB JSON bodies to an unknown path, 10,000 GETs with 12 KB of headers into 10 sandboxes, 3,000 x 60 KiB log-in bodies over 4 sandboxes, then journal reads ...');
  const figures = {};
  try {
    const objects = `[${Array.from({ length: Math.floor((64 * 1024) / 3) - 1 }, () => '{}').join(',')}]`;
    // With ADMIN_TOKEN set, only a request with credentials makes a sandbox: the admin makes them
    // first, so that the requests below (without credentials) land in their journals.
    for (const name of [...Array.from({ length: 10 }, (_, k) => `hdr${k}`), ...Array.from({ length: 4 }, (_, k) => `big${k}`)]) {
      const made = await request(server.port, { method: 'PUT', path: `/_emulator/sandboxes/${name}`, headers: ADMIN_HEADERS });
      check(made.status === 201, `PUT /_emulator/sandboxes/${name} answered ${made.status}`, made.text.slice(0, 200));
    }
    figures.rssStart = rssMiB(server.pid);
    const unknown = await send(server.port, 1000, 10, () => ({ method: 'POST', path: '/nowhere/at/all', body: objects }));
    figures.rssAfterUnknown = rssMiB(server.pid);
    const filler = Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`x-filler-${k}`, 'h'.repeat(1000)]));
    const gets = await send(server.port, 10_000, 10, (i) => ({ path: `/sandbox/hdr${i % 10}${REPO}/Objects/grid?i=${i}`, headers: filler }));
    figures.rssAfterHeaders = rssMiB(server.pid);
    // Just within JOURNAL_BODY_LIMIT_BYTES, so the bodies are kept whole and a bodyJson count parses them.
    const pad = 'x'.repeat(60 * 1024);
    const logins = await send(server.port, 3000, 10, (i) => ({
      method: 'PUT',
      path: `/sandbox/big${i % 4}${REPO}/Tokens`,
      body: `{"userName":"u${i}","password":"secret${i}","pad":"${pad}"}`,
    }));
    figures.rssAfterBodies = rssMiB(server.pid);
    log(`  unknown path: ${unknown}; log-ins: ${logins}; header GETs: ${gets}`);

    const health = pollHealth(server.port);
    const slowest = { list: 0, count: 0, query: 0 };
    const timed = async (kind, options) => {
      const t0 = performance.now();
      const res = await request(server.port, { ...options, headers: { ...ADMIN_HEADERS, ...options.headers } });
      slowest[kind] = Math.max(slowest[kind], performance.now() - t0);
      check(res.status === 200, `journal ${kind} answered ${res.status}`, res.text.slice(0, 200));
      return JSON.parse(res.text);
    };
    const query = Object.fromEntries(Array.from({ length: 32 }, (_, k) => [`q${k}`, String(k)]));
    for (let round = 0; round < 5; round++) {
      for (const sandbox of ['big0', 'hdr0']) {
        let before;
        let pages = 0;
        do {
          const page = await timed('list', { path: `/sandbox/${sandbox}/_emulator/journal${before ? `?before=${before}` : ''}` });
          before = page.next;
          pages++;
        } while (before !== undefined && pages < 50);
        await timed('count', { method: 'POST', path: `/sandbox/${sandbox}/_emulator/journal/count`, body: { bodyJson: { userName: 'u1' } } });
        await timed('query', { method: 'POST', path: `/sandbox/${sandbox}/_emulator/journal/count`, body: { query } });
      }
      await timed('list', { path: '/_emulator/journal' });
    }
    figures.healthLongest = await health.stop();
    const secret = await request(server.port, { path: '/sandbox/big0/_emulator/journal?limit=5', headers: ADMIN_HEADERS });
    check(!/"password\\":\\"secret/.test(secret.text), 'a log-in password shows in the journal', secret.text.slice(0, 300));

    const mib = (n) => `${Math.round(n)} MiB`;
    log(`  RSS: ${mib(figures.rssStart)} at the start, ${mib(figures.rssAfterUnknown)} after the 1,000 unknown-path POSTs, ${mib(figures.rssAfterHeaders)} after the 10,000 header GETs, ${mib(figures.rssAfterBodies)} after the 3,000 log-in bodies`);
    log(`  slowest journal call: listing page ${Math.round(slowest.list)} ms, bodyJson count ${Math.round(slowest.count)} ms, 32-name query count ${Math.round(slowest.query)} ms; longest health wait during the reads ${Math.round(figures.healthLongest)} ms`);
    // JOURNAL_MAX_BYTES (64 MiB) bounds what the journals hold; the rest is the heap's slack.
    check(figures.rssAfterBodies - figures.rssStart < 300, 'resident memory grew by more than 300 MiB', mib(figures.rssAfterBodies - figures.rssStart));
    check(figures.healthLongest < 250, 'the health check waited more than 250 ms during journal reads', `${Math.round(figures.healthLongest)} ms`);

    // A log-in body just under 1 MiB (80,000 keys; BODY_LIMIT_BYTES is 1 MiB): the request against the bare parse of the same text,
    // side by side, five rounds (the round trip includes the loopback transfer).
    const keys = {};
    for (let i = 0; i < 80_000; i++) keys[`k${i}`] = 'v';
    const wide = JSON.stringify(keys);
    const parse = [];
    const put = [];
    for (let round = 0; round < 5; round++) {
      let t0 = performance.now();
      JSON.parse(wide);
      parse.push(performance.now() - t0);
      t0 = performance.now();
      const res = await request(server.port, { method: 'PUT', path: `${REPO}/Tokens`, body: wide, timeoutMs: 30_000 });
      put.push(performance.now() - t0);
      check(res.status === 400, 'a log-in body of 80,000 unknown keys was not refused with 400', `${res.status}`);
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    figures.wideParseMs = median(parse);
    figures.widePutMs = median(put);
    log(`  a 1 MiB log-in body of 80,000 keys: median ${Math.round(figures.widePutMs)} ms a request, ${Math.round(figures.wideParseMs)} ms its bare parse (${(figures.widePutMs / figures.wideParseMs).toFixed(2)}x)`);
    check(server.child.exitCode === null, 'server exited during the run', server.stderr());
  } finally {
    await server.stop();
  }
  return figures;
}
