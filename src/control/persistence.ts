import { dirname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { FixtureError } from '../core/fixtures.js';
import type { Sandboxes } from '../world/sandboxes.js';
import { StateFileWriter, type OpenedStateFile } from '../world/persistence.js';
import { stateFileText } from '../world/export-stream.js';
import type { World } from '../interfaces.js';

export interface PersistenceOptions {
  /** The state file, already opened (and read) before the worlds were built; none without STATE_FILE. */
  opened?: OpenedStateFile;
  main: World;
  sandboxes: Sandboxes;
  /** STATE_FLUSH_INTERVAL_MS: 0 writes on close only. */
  flushIntervalMs: number;
}

/**
 * Optional persistence (STATE_FILE) of the default world and every sandbox: written once at
 * start (so an unwritable place stops the start), every STATE_FLUSH_INTERVAL_MS, and when the
 * app closes. Reset still returns to the fixture seed: the file is where the state goes, not
 * a new seed. A write that fails later is logged and shown by the health check
 * (app.statePersistence); the next write tries again.
 */
export async function installPersistence(app: FastifyInstance, { opened, main, sandboxes, flushIntervalMs }: PersistenceOptions): Promise<void> {
  app.decorate('statePersistence', null);
  if (!opened) return;
  const { file, removed, persisted } = opened;
  if (removed.length) app.log.info({ stateFile: file, removed }, 'removed temporary files left by an interrupted write');
  if (persisted) app.log.info({ stateFile: file, sandboxes: persisted.sandboxes.length }, 'state loaded from the state file');

  // Every world's snapshot is taken in one synchronous step, so the file holds one moment of
  // all of them; the text is then produced in slices, between which requests are served.
  const writer = new StateFileWriter(file, () =>
    stateFileText(
      main.snapshot(),
      sandboxes.entries().map(({ name, world, createdAt, lastUsedAt }) => ({ name, createdAt, lastUsedAt, state: world.snapshot() })),
    ),
  );
  try {
    await writer.flush();
  } catch (err) {
    throw new FixtureError(`state file ${file}: cannot be written in ${dirname(file)}: ${(err as Error).message}`);
  }
  writer.log = app.log;
  app.statePersistence = writer;

  let timer: NodeJS.Timeout | undefined;
  if (flushIntervalMs > 0) {
    timer = setInterval(() => {
      // A write of a large state can take longer than the interval: while one is under way,
      // the tick is skipped rather than queued (the next write takes the state of its start).
      if (writer.busy) return;
      // The writer logs and records the failure; the next tick tries again.
      writer.flush().catch(() => undefined);
    }, flushIntervalMs);
    // The interval alone must not keep the process alive.
    timer.unref();
  }
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    // A failure is logged by the writer and shown by its status, which a process exit reads.
    await writer.flush({ final: true }).catch(() => undefined);
  });
}
