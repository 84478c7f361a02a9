import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { FixtureError } from './core/fixtures.js';
import { loadFixtures } from './state.js';

/** The process entry: the only place that reads the environment and listens. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const fixtures = await loadFixtures(config.fixturesDir);
  const app = await buildApp({
    config,
    fixtures,
    logger: {
      level: config.logLevel,
      // Pretty lines for a person at a terminal; JSON lines for machines and containers.
      ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
    },
  });

  closeWithGrace({ delay: 5000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error');
    else app.log.info({ signal }, 'closing');
    await app.close();
  });

  await app.listen({ port: config.port, host: config.host });
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof FixtureError) {
    process.stderr.write(`cloud-emulator: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`cloud-emulator: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
