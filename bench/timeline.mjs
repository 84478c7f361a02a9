// The timeline part of the benchmark: seeks of the bundled demo seed's one-hour timeline
// (fixtures/timeline.json), in this process (the built emulator embedded, no sockets):
//   (a) the median time a seek takes, to offsets spread over the hour, backwards and forwards;
//   (b) the longest block of the event loop while the seeks run, measured directly (a 1 ms
//       interval timer's longest gap).
// Numbers are printed, never asserted.
//
//   node bench/timeline.mjs       (after npm run build)   prints the table
//   BENCH_TIMELINE_SEEKS          seeks measured (default 40)
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ROOT, fmt, loopGapWatch, markdownTable, median, num, sleep } from './lib.mjs';
import { helpIfAsked } from './help.mjs';

helpIfAsked(import.meta.url);

const HOUR = 3_600_000;

/** The longest gap of a 1 ms interval timer over `ms` with nothing else running. */
async function longestIdleGap(ms) {
  const watch = loopGapWatch();
  await sleep(ms);
  return watch.stop();
}

/** The rows of the goals table: seek median, longest block. */
export async function timelineBench({ seeks = Math.round(num('BENCH_TIMELINE_SEEKS', 40)), log = () => undefined } = {}) {
  const { startEmulator, ManualClock } = await import(join(ROOT, 'dist/index.js'));
  const emu = await startEmulator({ clock: new ManualClock(), port: 0, logLevel: 'silent' });
  try {
    const { app } = emu;
    const view = (await app.inject({ url: '/_emulator/timeline' })).json();
    if (view.lengthMs < HOUR || view.steps.length === 0) throw new Error(`the demo seed's timeline is ${view.lengthMs} ms long: expected one hour`);
    // The routes compile their schemas on first use: not a seek's cost.
    await app.inject({ method: 'POST', url: '/_emulator/timeline/seek', payload: { to: HOUR } });
    await sleep(50);
    const watch = loopGapWatch();
    const times = [];
    const started = performance.now();
    for (let i = 0; i < seeks; i++) {
      // Spread over the hour, alternately near its end and near its start: as many backwards as forwards.
      const to = Math.round(((i % 2 === 0 ? seeks - i : i) / seeks) * HOUR);
      const t0 = performance.now();
      const res = await app.inject({ method: 'POST', url: '/_emulator/timeline/seek', payload: { to } });
      times.push(performance.now() - t0);
      if (res.statusCode !== 200) throw new Error(`seek to ${to}: ${res.statusCode} ${res.body}`);
      // A turn between seeks, so that the gap measured is a seek's own.
      await sleep(2);
    }
    const longest = watch.stop();
    const seeking = performance.now() - started;
    // The same timer with nothing running, as long: what the machine itself (other processes, GC) adds.
    const idle = await longestIdleGap(seeking);
    const m = median(times);
    log(`${seeks} seeks of the demo seed's ${view.steps.length}-step one-hour timeline: median ${fmt.ms(m)}, longest block ${fmt.ms(longest)} (idle ${fmt.ms(idle)})`);
    return [
      [
        'Seek of the demo seed\'s one-hour timeline (embedded)',
        fmt.ms(m),
        `median of ${seeks} seeks spread over the hour, backwards and forwards (min ${fmt.ms(Math.min(...times))}, max ${fmt.ms(Math.max(...times))}); ${view.steps.length} steps`,
        '< 100 ms',
        m < 100 ? 'yes' : 'NO',
      ],
      [
        'Longest block of the event loop during those seeks',
        fmt.ms(longest),
        `longest gap of a 1 ms interval timer while the seeks ran; ${fmt.ms(idle)} with nothing running for as long (the machine's own gaps)`,
        '< 50 ms',
        longest < 50 ? 'yes' : 'NO',
      ],
    ];
  } finally {
    await emu.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await timelineBench({ log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${markdownTable(['measure', 'value', 'detail', 'goal', 'met'], rows)}\n`);
}
