import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type ConfigKey } from '../config.js';
import { FixtureError } from '../core/fixtures.js';
import { launch, type RunningEmulator } from '../index.js';
import { PATHS } from '../http/paths.js';
import { watchParent } from './parent-watch.js';

/**
 * How long the final state write may take once every connection is closed. A file system
 * that hangs (a lost network mount) must not keep the process forever; a write that takes
 * this long has failed for any purpose.
 */
const FINAL_WRITE_LIMIT_MS = 30_000;

/** How soon a connection whose last request ended during the shutdown grace is closed. */
const IDLE_REAP_INTERVAL_MS = 50;

/** A shutdown that ends without the state on disk (the write failed or never finished). */
export class ShutdownError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShutdownError';
  }
}

/**
 * Closes the app for a process about to exit: stops accepting connections, gives requests
 * in flight up to `graceMs` to finish, then closes the connections still open (a request
 * held by a fault latency, a client that never reads), so that the app's close hooks (the
 * final state-file write among them) always run. Rejects with a ShutdownError when the
 * state file could not be written, so that the process can exit non-zero.
 */
export async function closeForExit(app: FastifyInstance, graceMs: number, finalWriteLimitMs = FINAL_WRITE_LIMIT_MS): Promise<void> {
  const closed = app.close();
  // Closing reaps the connections idle at that moment only: one whose request ends during
  // the grace would stay open (kept alive) until the grace is over.
  const reaper = setInterval(() => app.server.closeIdleConnections(), IDLE_REAP_INTERVAL_MS);
  const outcome = (promise: Promise<unknown>) => promise.then(() => 'closed' as const);
  let timer: NodeJS.Timeout | undefined;
  const after = (ms: number) => new Promise<'late'>((resolve) => (timer = setTimeout(resolve, ms, 'late')));
  try {
    if ((await Promise.race([outcome(closed), after(graceMs)])) === 'late') {
      app.log.warn({ graceMs }, 'requests still in flight after the grace: closing their connections');
      app.server.closeAllConnections();
      clearTimeout(timer);
      if ((await Promise.race([outcome(closed), after(finalWriteLimitMs)])) === 'late') {
        throw new ShutdownError(`closing did not finish within ${finalWriteLimitMs} ms after the connections were closed: the state file may not be written`);
      }
    }
  } finally {
    clearTimeout(timer);
    clearInterval(reaper);
  }
  const persistence = app.statePersistence?.status();
  if (persistence && !persistence.ok) throw new ShutdownError(`the state file was not written at shutdown: ${persistence.error}`);
}

/**
 * Runs the emulator as a process: settings from the command line (`overrides`) win over the
 * environment; SIGTERM/SIGINT close it gracefully (see closeForExit) and the process exits 0,
 * or 1 when the state file could not be written.
 */
export async function serve(
  overrides: Partial<Record<ConfigKey, unknown>>,
  env: Record<string, string | undefined>,
): Promise<RunningEmulator> {
  const config = loadConfig(env, overrides);
  const emu = await launch(config, {
    // Silent means no logger at all: a pino logger at level silent still makes a child
    // logger for every request.
    logger:
      config.logLevel === 'silent'
        ? false
        : {
            level: config.logLevel,
            // Pretty lines for a person at a terminal; JSON lines for machines and containers.
            ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
          },
  });
  const { app } = emu;
  // No delay of its own: closeForExit bounds the shutdown and, unlike a timeout that exits
  // at once, still writes the state file. A second signal exits at once with code 1.
  const closing = closeWithGrace({ delay: null, logger: app.log }, async ({ signal, err, manual }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else if (!manual) app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'closing');
    // A rejection is logged by close-with-grace, and the process exits 1.
    await closeForExit(app, config.shutdownGraceMs);
    app.log.info('closed');
  });
  // npx, npm start or a test's setup that is stopped or dies would otherwise leave the
  // server running, handed to init, on its port (see docs/running.md#stopping).
  if (config.exitWithParent) {
    watchParent((parent) => {
      app.log.warn({ parent, graceMs: config.shutdownGraceMs }, 'the process that started this one is gone (EXIT_WITH_PARENT): closing');
      void closing.close();
    });
  }
  app.log.info(readyFields(emu.url), 'cloud-emulator ready');
  return emu;
}

/** What the start's log line shows: where the server, its API reference and its dashboard are. */
export function readyFields(url: string): { url: string; docs: string; dashboard: string } {
  return { url, docs: `${url}${PATHS.docs}`, dashboard: `${url}${PATHS.ui}` };
}

/**
 * Startup failures a user can fix (bad settings, bad fixtures, a port in use): just the
 * message, no stack, exit code 2. Anything else is a bug worth its stack trace.
 */
export function userFacingStartupError(err: unknown): string | undefined {
  if (err instanceof ConfigError || err instanceof FixtureError) return err.message;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') return `cannot listen: ${(err as Error).message}`;
  return undefined;
}

export function exitOnStartupError(err: unknown): never {
  const message = userFacingStartupError(err);
  process.stderr.write(`cloud-emulator: ${message ?? (err as Error).stack ?? String(err)}\n`);
  process.exit(message ? 2 : 1);
}
