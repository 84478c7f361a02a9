// The Query API's cold part of the benchmark: the first answer of a fresh world to a long
// range, which nothing cached can help. Each round resets the world (POST /_emulator/reset:
// a new store, no block and no table of the old one is read again) and times one summary of
// the last 30 days, then resets again and times one of the last 93 days (the longest range
// the API allows), as a client sees them (request to answer, loopback, 300 ms after the
// reset). With more than one server entry the rounds alternate between them, side by side.
// Numbers are printed, never asserted.
//
//   node bench/query.mjs          (after npm run build)   prints the table
//   BENCH_QUERY_ROUNDS            rounds (default 15); the median is reported
//   BENCH_QUERY_AGAINST           another server entry to alternate with (e.g. an older build)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENTRY, fmt, markdownTable, median, num, request, sleep, startProcess } from './lib.mjs';
import { BENCH_TOKEN, LARGE_SEED, writeSeed } from './seeds.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const SUMMARY = '/concerto/mpulse/api/v2/BENCH-APP-0/summary?format=json';
const RANGES = [
  { id: '30', title: 'cold 30-day summary', query: '&date-comparator=Last30Days' },
  { id: '93', title: 'cold 93-day summary', query: `&date-comparator=Last&trailing-seconds=${93 * 86_400}` },
];
/** The goal of a cold answer of any range: within 50 ms, the longest request the emulator lets hold its event loop. */
const GOAL_MS = 50;

async function reset(port) {
  const res = await request(port, { method: 'POST', path: '/_emulator/reset' });
  if (res.status >= 300) throw new Error(`reset answered ${res.status}: ${res.text.slice(0, 200)}`);
}

/** One first query of a fresh world: its time from request to answer, in ms. */
async function coldQuery(port, range) {
  await reset(port);
  // The old world's collection (100,000 annotations) is not the query's to pay.
  await sleep(300);
  const t = performance.now();
  const res = await request(port, { path: `${SUMMARY}${range.query}`, headers: { 'x-auth-token': BENCH_TOKEN } });
  const ms = performance.now() - t;
  if (res.status !== 200 || !(Number(JSON.parse(res.text).n) > 0)) throw new Error(`${range.title} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return ms;
}

/**
 * The rows of the cold Query API answers: per range, the median over `rounds` of the first
 * summary after a reset, on the large seed. `entries` (label and server entry) alternate
 * round by round; the first one's rows are the goals.
 */
export async function queryBench({ env = {}, rounds = 15, entries = [{ label: 'this build', entry: SERVER_ENTRY }], log = () => {} } = {}) {
  const work = mkdtempSync(join(tmpdir(), 'cloud-emulator-query-'));
  const servers = [];
  try {
    const seedDir = join(work, 'large-seed');
    writeSeed(seedDir, LARGE_SEED);
    for (const { entry } of entries) servers.push(await startProcess({ entry, env: { ...env, FIXTURES_DIR: seedDir } }));
    const times = entries.map(() => RANGES.map(() => []));
    for (let r = 0; r < rounds; r++) {
      for (let s = 0; s < servers.length; s++) {
        for (let i = 0; i < RANGES.length; i++) times[s][i].push(await coldQuery(servers[s].port, RANGES[i]));
      }
    }
    const rows = [];
    RANGES.forEach((range, i) => {
      const medians = entries.map((_, s) => median(times[s][i]));
      const others = entries.slice(1).map((e, s) => `; ${e.label} ${fmt.ms(medians[s + 1])} in the same rounds (${(medians[s + 1] / medians[0]).toFixed(1)}x)`).join('');
      const sorted = [...times[0][i]].sort((a, b) => a - b);
      log(`${range.title}: ${entries.map((e, s) => `${e.label} ${fmt.ms(medians[s])}`).join(', ')}`);
      rows.push([
        `Query API ${range.title}: first answer of a fresh world (reset), large seed`,
        fmt.ms(medians[0]),
        `median of ${rounds} (min ${fmt.ms(sorted[0])}, max ${fmt.ms(sorted.at(-1))}), request to answer${others}`,
        `< ${GOAL_MS} ms`,
        medians[0] < GOAL_MS ? 'yes' : 'NO',
      ]);
    });
    return rows;
  } finally {
    for (const server of servers) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const against = process.env.BENCH_QUERY_AGAINST;
  const entries = [{ label: 'this build', entry: SERVER_ENTRY }, ...(against ? [{ label: 'the other build', entry: against }] : [])];
  const rows = await queryBench({ rounds: Math.round(num('BENCH_QUERY_ROUNDS', 15)), entries, log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${markdownTable(['measure', 'value', 'detail', 'goal', 'met'], rows)}\n`);
}
