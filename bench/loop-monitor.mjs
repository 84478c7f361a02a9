// Loaded into a benchmarked server process (node --import), never into the emulator itself:
// watches the server's own event loop with perf_hooks' monitorEventLoopDelay, and on each
// SIGWINCH (a signal the server leaves alone, and ignored by default) writes the longest delay
// since the last one to stderr, as
// `loop-delay-max-ms <ms>`, and starts afresh. bench/stall.mjs reads it around each operation.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 2 });
delay.enable();
process.on('SIGWINCH', () => {
  process.stderr.write(`loop-delay-max-ms ${(delay.max / 1e6).toFixed(1)}\n`);
  delay.reset();
});
