import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfig, type ConfigKey } from '../config.js';
import { FixtureError } from '../core/fixtures.js';
import { startEmulator, type RunningEmulator } from '../index.js';

/** Longest a shutdown may take before the process gives up on in-flight work. */
const SHUTDOWN_GRACE_MS = 5000;

/**
 * Runs the emulator as a process: settings from the command line (`overrides`) win over the
 * environment; SIGTERM/SIGINT close it gracefully (in-flight requests finish, the state file
 * is flushed by the app's close hooks) and the process exits 0.
 */
export async function serve(
  overrides: Partial<Record<ConfigKey, unknown>>,
  env: Record<string, string | undefined>,
): Promise<RunningEmulator> {
  const config = loadConfig(env, overrides);
  const emu = await startEmulator({
    ...config,
    fixtures: config.fixturesDir,
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
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger: app.log }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else app.log.info({ signal }, 'closing');
    await app.close();
    app.log.info('closed');
  });
  app.log.info({ url: emu.url, docs: `${emu.url}/_emulator/docs` }, 'cloud-emulator ready');
  return emu;
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
