// The cost of each hook every request passes through, with the feature it serves used and
// unused, side by side: for each row two variants of the same case (two server processes that
// differ in one setting, or one process asked two ways), driven in alternating rounds (ABBA),
// and the median over the rounds of the ratio of their server CPU a request. Part `hooks` of
// bench/run.mjs.
import { join } from 'node:path';
import { cannon, median, request, startProcess } from './lib.mjs';
import { CASES } from './cases.mjs';
import { QUIET_ALERT_UID } from './seeds.mjs';

const caseOf = (id) => CASES.find((c) => c.id === id);

/**
 * The rows: `unused` and `used` each name the server settings (env) and how it is asked
 * (a path prefix, another path, extra headers); `setup` runs on the server of the used variant once it is up.
 */
const HOOKS = [
  { hook: 'request id', case: 'grid-read', unused: {}, used: { headers: { 'x-request-id': 'bench-request-1' } }, what: 'the caller sends X-Request-Id (echoed) or not (the id is made)' },
  { hook: 'CORS', case: 'grid-read', unused: {}, used: { headers: { origin: 'https://app.example.com' } }, what: 'an Origin header (the CORS headers are added) or none' },
  { hook: 'worlds and sandboxes', case: 'grid-read', unused: {}, used: { prefix: '/sandbox/bench' }, what: 'the same read in the sandbox `bench` or in the default world' },
  {
    hook: 'faults',
    case: 'grid-read',
    unused: {},
    used: {
      setup: async (port) => {
        const added = await request(port, { method: 'POST', path: '/_emulator/faults', body: JSON.stringify({ path: '/nowhere/*', action: { status: 503 } }) });
        if (added.status !== 201 && added.status !== 200) throw new Error(`adding a fault rule answered ${added.status}: ${added.text.slice(0, 200)}`);
      },
    },
    what: 'one fault rule (for another path) judged on every request, or none',
  },
  { hook: 'journal', case: 'grid-read', unused: { env: { JOURNAL_SIZE: '0' } }, used: {}, what: 'JOURNAL_SIZE 1,000 (the default: every request recorded) or 0' },
  { hook: 'guard (token)', case: 'alert-fire', unused: {}, used: { env: { ALERTS_REQUIRE_TOKEN: 'true' }, headers: { 'x-auth-token': 'bench-token' } }, what: 'ALERTS_REQUIRE_TOKEN: the session looked up on every fire, or not' },
  {
    hook: 'stored deliveries',
    case: 'alert-fire',
    // One process asked two ways: the seed's alert with a webhook channel, and one without channels.
    unused: { path: `/concerto/mpulse/api/alerts/${QUIET_ALERT_UID}/fire` },
    used: {},
    what: 'a fire of an alert with a channel (its delivery made and stored in the outbox, the default) or of one without channels (no delivery)',
  },
  {
    hook: 'deliveries',
    case: 'alert-fire',
    unused: {},
    // The seed's webhook goes to hooks.example.com, which this list leaves out: each attempt
    // is made and refused (no receiver needed, nothing leaves the machine).
    used: { env: { DELIVERY_ALLOW_HOSTS: '127.0.0.1' } },
    what: "DELIVERY_ALLOW_HOSTS set: each fire's webhook delivery is attempted (and refused by the allow-list), or only stored (the default)",
  },
  { hook: 'persistence', case: 'annotation-create', unused: { env: { STATE_FLUSH_INTERVAL_MS: '0' } }, used: { env: { STATE_FILE: 'STATE_FILE', STATE_FLUSH_INTERVAL_MS: '0' } }, what: 'STATE_FILE set, written on close only (a write marks its world changed) or not' },
  { hook: 'deadlines', case: 'grid-read', unused: {}, used: { env: { REQUEST_TIMEOUT_MS: '1000' } }, what: 'REQUEST_TIMEOUT_MS 1 s (deadlines checked every 100 ms) or 30 s (every second)' },
];

/**
 * Runs the hooks table: one row a hook. `env` is the settings of every server (the large
 * seed), `work` a folder for state files.
 */
export async function hooksBench({ env, work, duration, rounds, warmup, connections, log }) {
  const rows = [];
  // BENCH_HOOKS: only these rows (by hook name).
  const only = process.env.BENCH_HOOKS ? new Set(process.env.BENCH_HOOKS.split(',').map((h) => h.trim())) : undefined;
  for (const [n, row] of HOOKS.entries()) {
    if (only && !only.has(row.hook)) continue;
    const spec = caseOf(row.case);
    const status = spec.status ?? 200;
    const variants = [row.unused, row.used];
    const envOf = (v) => Object.fromEntries(Object.entries({ ...env, ...v.env }).map(([k, value]) => [k, value === 'STATE_FILE' ? join(work, `hooks-${n}.json`) : value]));
    // One process when the two variants differ only in how they ask.
    const shared = !row.unused.env && !row.used.env && !row.used.setup;
    const first = await startProcess({ env: envOf(row.unused) });
    const second = shared ? first : await startProcess({ env: envOf(row.used) });
    try {
      await row.used.setup?.(second.port);
      const servers = [first, second];
      const asked = [];
      for (const [i, v] of variants.entries()) {
        const path = (v.prefix ?? '') + (v.path ?? (await spec.prepare?.(servers[i].port)) ?? spec.path);
        const headers = { ...(spec.headers ?? {}), ...(v.headers ?? {}) };
        const probe = await request(servers[i].port, { method: spec.method ?? 'GET', path, headers, body: spec.body });
        if (probe.status !== status) throw new Error(`hooks, ${row.hook}: ${i ? 'used' : 'unused'} answered ${probe.status}: ${probe.text.slice(0, 200)}`);
        asked.push({ path, headers });
      }
      const load = (i, seconds) =>
        cannon({ port: servers[i].port, pid: servers[i].pid, method: spec.method ?? 'GET', ...asked[i], body: spec.body, duration: seconds, connections, expectStatus: status });
      await load(0, warmup);
      await load(1, warmup);
      const runs = [[], []];
      const slice = Math.max(1, Math.round(duration / rounds));
      for (let r = 0; r < rounds; r++) {
        for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) runs[i].push(await load(i, slice));
      }
      for (const side of runs.flat()) if (side.unexpected || side.errors) throw new Error(`hooks, ${row.hook}: unexpected answers (${side.unexpected || side.errors})`);
      const cpu = runs.map((side) => median(side.map((r) => r.cpuUs)));
      const p50 = runs.map((side) => median(side.map((r) => r.p50)));
      const cost = median(runs[1].map((r, i) => r.cpuUs / runs[0][i].cpuUs)) - 1;
      const p50Ratio = median(runs[1].map((r, i) => r.p50 / runs[0][i].p50));
      log(
        `  ${row.hook}: unused ${cpu[0].toFixed(1)} µs, used ${cpu[1].toFixed(1)} µs a request (${cost >= 0 ? '+' : ''}${(cost * 100).toFixed(1)}%); ` +
          `p50 unused ${p50[0].toFixed(3)} ms, used ${p50[1].toFixed(3)} ms (ratio ${p50Ratio.toFixed(3)})`,
      );
      rows.push({ ...row, spec, cpu, cost, p50, p50Ratio });
    } finally {
      await first.stop();
      if (!shared) await second.stop();
    }
  }
  return rows;
}
