import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files `npm run test:quick` leaves out: each is slow for a reason that is its point (a spawned
 * server, a worker thread, real socket timeouts, a corpus or thousands of generated requests,
 * a browser, a container), and `npm test` runs every one of them.
 */
export const SLOW = [
  'test/cli/shutdown.test.ts', // spawns the built server and sends it SIGTERM
  'test/cli/process.test.ts', // spawns the built command under npx and under parents that go away
  'test/mcp/stdio.test.ts', // spawns the built command's MCP server over stdio
  'test/package/client-types.test.ts', // compiles a project against the built package's declarations, every library file checked
  'test/world/state-worker.test.ts', // starts worker threads on the TypeScript sources
  'test/http/timeouts.test.ts', // waits for real socket timeouts
  'test/http/path-spellings.test.ts', // the path-spelling corpus over a real socket
  'test/repository/guard-bypass.test.ts', // generated spellings over a real socket
  'test/http/hostile.test.ts', // thousands of generated hostile requests
  'test/core/defaults.test.ts', // random breakage of the demo seed and of an export
  'test/http/stored-or-refused.test.ts', // every field of every body, each on a reset world (state imports included)
  'test/image/image-files.test.ts', // lists the files a container image would get
  'test/docs/scripts.test.ts', // runs every documented script file's --help
  'test/ui/browser/**', // Chromium
  'test/http/cors.browser.test.ts', // Chromium
  'test/testcontainers/**', // a container engine
];

/**
 * Files that change what a module holds for the whole process (a vi.mock, the state worker's
 * settings): each runs in a fresh module graph of its own. Every other file shares its
 * worker's loaded modules with the files before it, which saves loading Fastify and the app
 * again for each file, about half of the suite's time.
 */
const ISOLATED = ['test/http/compile-on-first-use.test.ts', 'test/world/state-worker.test.ts'];

export default defineConfig(({ mode }) => {
  const exclude = [...configDefaults.exclude, ...(mode === 'quick' ? SLOW : [])];
  return {
    test: {
      environment: 'node',
      setupFiles: ['test/helpers/conformance-setup.ts'],
      // A timeout only catches a hang: no test asserts on speed (benchmarks do). The suite
      // must pass while other processes keep both cores busy, where the property tests and
      // the hostile corpora run three to four times slower than on a quiet machine.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // Two workers for two cores: a default of one per core but one would leave a core idle.
      maxWorkers: 2,
      projects: [
        { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...exclude, ...ISOLATED], isolate: false } },
        { extends: true, test: { name: 'isolated', include: ISOLATED, exclude, isolate: true } },
      ],
    },
  };
});
