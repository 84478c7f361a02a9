// Parts `fires` and `fill` of `npm run soak`: what requests add stays within the byte bounds of
// the process, so resident memory stays flat under a flood, and the state file stays written.
//
//   fires  without a token (the alerts need none by default), with STATE_FILE set: alert fires
//          with a message of 1 MB (each refused with 400 by ALERT_TEXT_MAX_BYTES), then fires
//          of the longest message allowed (8 KiB), spread over 100 new sandboxes, until the
//          history bounds answer 507. Resident memory before and after; health stays 200.
//   fill   with the demo seed's token, 100 sandboxes filled with repository objects of 1 MB
//          and annotations of 1 MB, until REPOSITORY_PROCESS_MAX_BYTES and ANNOTATIONS_MAX_BYTES
//          answer 507. Resident memory before and after.
//
// Each sends its flood twice. The first wave fills what the bounds allow; the second finds them
// reached, and must leave resident memory flat: it grows by less than 15% (at least 32 MiB) over
// the first wave's end (what is left is the heap's slack: nothing is collected on purpose). The
// request journal is off (JOURNAL_SIZE=0): it has bounds and a soak part of its own (journal),
// and while it fills to JOURNAL_MAX_BYTES it would hide whether these bounds hold. From the start (the sandboxes made), resident memory must grow by less than
// SOAK_BOUNDS_MARGIN_MIB (default 640 MiB: what the bounds let be kept, the journal's bodies,
// JOURNAL_MAX_BYTES, and the heap's slack). No request may fail otherwise, and the server must
// stay up. Before these bounds both parts ran the server out of heap within seconds.
//
// Environment: SOAK_BOUNDS_FIRES (default 6000 a wave), SOAK_BOUNDS_PUTS (300 of each kind a
// wave), SOAK_BOUNDS_MARGIN_MIB (640).
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { num, request, rssMiB, startProcess } from '../../bench/lib.mjs';

const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const ALERTS = '/concerto/mpulse/api/alerts';
/** The demo seed's alerts and token. */
const ALERT_UIDS = ['5f0c7a2e-9d41-4b7a-8c3e-1a2b3c4d5e6f', 'b3e1d6f4-2c8a-4e0f-9a7b-6d5c4b3a2f10'];
const DEMO = { 'x-auth-token': 'demo-token' };
const SANDBOXES = 100;

/** Sends `total` requests made by `make(i)`, `concurrency` at a time; answers the count of each status. */
async function send(port, total, concurrency, make) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const res = await request(port, { ...make(i), agent, timeoutMs: 60_000 }).catch((err) => ({ status: err.message, text: '' }));
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return statuses;
}

const text = (statuses) => Object.entries(statuses).map(([k, n]) => `${k}: ${n}`).join(', ');
const mib = (n) => `${Math.round(n)} MiB`;

/** Every sandbox made and used once, so that what they cost themselves is in the figure before. */
async function makeSandboxes(port, headers = {}) {
  await send(port, SANDBOXES, 10, (i) => ({ path: `/sandbox/b${i}${ANNOTATIONS}`, headers }));
}

export async function bounds(verdictOf, { log = (m) => process.stderr.write(`${m}\n`), parts = new Set(['fires', 'fill']) } = {}) {
  const fires = Math.round(num('SOAK_BOUNDS_FIRES', 6000));
  const puts = Math.round(num('SOAK_BOUNDS_PUTS', 300));
  const margin = num('SOAK_BOUNDS_MARGIN_MIB', 640);
  /** The second wave's growth over the first's end must stay within this: flat. */
  const flat = (first) => Math.max(first * 0.15, 32);
  const results = [];

  if (parts.has('fires')) {
    const verdict = verdictOf();
    const dir = mkdtempSync(join(tmpdir(), 'soak-bounds-'));
    const server = await startProcess({ env: { STATE_FILE: join(dir, 'state.json'), STATE_FLUSH_INTERVAL_MS: '1000', RATE_LIMIT_MAX: '1000000000', SANDBOX_IDLE_TIMEOUT_MS: '0', JOURNAL_SIZE: '0' } });
    try {
      log(`fires: 200 fires of a 1 MB message, then ${fires} fires of 8 KiB over ${SANDBOXES} new sandboxes, without a token, STATE_FILE set ...`);
      // Health, an unknown path: a sandbox made by a request without credentials (SANDBOXES=auto, no ADMIN_TOKEN).
      await send(server.port, SANDBOXES, 10, (i) => ({ path: `/sandbox/b${i}/_emulator/health` }));
      const before = rssMiB(server.pid);
      const huge = JSON.stringify({ message: 'x'.repeat(1_000_000) });
      const message = JSON.stringify({ message: 'x'.repeat(8192) });
      const waves = [];
      for (let wave = 0; wave < 2; wave++) {
        const big = await send(server.port, 200, 10, (i) => ({ method: 'POST', path: `/sandbox/b${i % SANDBOXES}${ALERTS}/${ALERT_UIDS[i % 2]}/fire`, body: huge }));
        const t0 = performance.now();
        const flood = await send(server.port, fires, 10, (i) => ({ method: 'POST', path: `/sandbox/b${i % SANDBOXES}${ALERTS}/${ALERT_UIDS[i % 2]}/fire`, body: message }));
        const seconds = (performance.now() - t0) / 1000;
        // A write of the state file after the flood.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const rss = rssMiB(server.pid);
        log(`  wave ${wave + 1}: 1 MB fires: ${text(big)}; 8 KiB fires: ${text(flood)} in ${seconds.toFixed(1)} s; RSS ${mib(rss)}`);
        verdict.check(big[400] === 200, 'a 1 MB fire was not refused with 400', text(big));
        verdict.check(Object.keys(flood).every((k) => k === '204' || k === '507'), 'a fire answered other than 204 or 507', text(flood));
        verdict.check((flood[507] ?? 0) > 0, 'no fire reached a bound (raise SOAK_BOUNDS_FIRES)', text(flood));
        waves.push({ big, flood, seconds, rss });
      }
      const [first, second] = waves;
      const health = await request(server.port, { path: '/_emulator/health' });
      log(`  RSS: ${mib(before)} before, ${mib(first.rss)} after wave 1 (+${mib(first.rss - before)}), ${mib(second.rss)} after wave 2 (+${mib(second.rss - first.rss)}); health ${health.status}`);
      verdict.check(health.status === 200, 'health is not 200 after the flood (the state file?)', health.text.slice(0, 300));
      verdict.check(second.rss - first.rss < flat(first.rss), `resident memory grew by ${mib(second.rss - first.rss)} in wave 2, with the bounds reached`, `${mib(first.rss)} -> ${mib(second.rss)}`);
      verdict.check(second.rss - before < margin, `resident memory grew by ${mib(second.rss - before)}, more than ${margin} MiB`, `${mib(before)} -> ${mib(second.rss)}`);
      verdict.check(server.child.exitCode === null, 'the server exited', server.stderr());
      results.push({ part: 'fires', before, waves });
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    verdict.report('fires');
  }

  if (parts.has('fill')) {
    const verdict = verdictOf();
    const server = await startProcess({ env: { SANDBOX_IDLE_TIMEOUT_MS: '0', JOURNAL_SIZE: '0' } });
    try {
      log(`fill: with the demo token, ${puts} repository objects and ${puts} annotations of 1 MB over ${SANDBOXES} sandboxes ...`);
      await makeSandboxes(server.port, DEMO);
      const before = rssMiB(server.pid);
      const body = 'x'.repeat(1_000_000);
      const waves = [];
      for (let wave = 0; wave < 2; wave++) {
        const objects = await send(server.port, puts, 6, (i) => ({
          method: 'PUT',
          path: `/sandbox/b${i % SANDBOXES}${REPO}/Objects`,
          headers: DEMO,
          body: JSON.stringify({ type: 'boomerang', name: `big-${wave}-${i}`, body }),
        }));
        const annotations = await send(server.port, puts, 6, (i) => ({
          method: 'POST',
          path: `/sandbox/b${i % SANDBOXES}${ANNOTATIONS}`,
          headers: DEMO,
          body: JSON.stringify({ title: 'Filler', start: 1_700_000_000_000, text: body }),
        }));
        const rss = rssMiB(server.pid);
        log(`  wave ${wave + 1}: repository objects: ${text(objects)}; annotations: ${text(annotations)}; RSS ${mib(rss)}`);
        for (const [what, statuses] of [['an object', objects], ['an annotation', annotations]]) {
          verdict.check(Object.keys(statuses).every((k) => k === '200' || k === '507'), `${what} answered other than 200 or 507`, text(statuses));
          verdict.check((statuses[507] ?? 0) > 0, `no ${what.slice(what.indexOf(' ') + 1)} reached a bound (raise SOAK_BOUNDS_PUTS)`, text(statuses));
        }
        waves.push({ objects, annotations, rss });
      }
      const [first, second] = waves;
      log(`  RSS: ${mib(before)} before, ${mib(first.rss)} after wave 1 (+${mib(first.rss - before)}), ${mib(second.rss)} after wave 2 (+${mib(second.rss - first.rss)})`);
      verdict.check(second.rss - first.rss < flat(first.rss), `resident memory grew by ${mib(second.rss - first.rss)} in wave 2, with the bounds reached`, `${mib(first.rss)} -> ${mib(second.rss)}`);
      verdict.check(second.rss - before < margin, `resident memory grew by ${mib(second.rss - before)}, more than ${margin} MiB`, `${mib(before)} -> ${mib(second.rss)}`);
      verdict.check(server.child.exitCode === null, 'the server exited', server.stderr());
      results.push({ part: 'fill', before, waves });
    } finally {
      await server.stop();
    }
    verdict.report('fill');
  }
  return results;
}
