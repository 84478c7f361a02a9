import { dirname } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CONTROL_PREFIX } from './hooks.js';
import { FixtureError } from '../core/fixtures.js';
import type { Sandboxes } from '../world/sandboxes.js';
import { StateFileWriter, type OpenedStateFile } from '../world/persistence.js';
import { stateFileText, type SeedReference } from '../world/export-stream.js';
import type { World } from '../interfaces.js';
import { routePattern } from '../http/route-context.js';
import type { World as AnyWorld } from '../world/world.js';
import type { ClockAnchor } from '../core/clock.js';
import { storageLedgerOf } from '../core/storage.js';

export interface PersistenceOptions {
  /** The state file, already opened (and read) before the worlds were built; none without STATE_FILE. */
  opened?: OpenedStateFile;
  main: World;
  sandboxes: Sandboxes;
  /** STATE_FLUSH_INTERVAL_MS: 0 writes on close only. */
  flushIntervalMs: number;
  /** STATE_FILE_MAX_BYTES. */
  maxBytes?: number;
  /** STATE_FILE_WORLD_MAX_BYTES. */
  worldMaxBytes?: number;
}

/** A number for each world object, so that a sandbox replaced by another of the same name counts as a change. */
const worldIds = new WeakMap<AnyWorld, number>();
let nextWorldId = 0;
function idOf(world: AnyWorld): number {
  let id = worldIds.get(world);
  if (id === undefined) worldIds.set(world, (id = ++nextWorldId));
  return id;
}

/** Requests that only read: every other one may change the world it is served by. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Optional persistence (STATE_FILE) of the default world and every sandbox: written once at
 * start (so an unwritable place stops the start), every STATE_FLUSH_INTERVAL_MS, and when the
 * app closes. Reset still returns to the fixture seed: the file is where the state goes, not
 * a new seed. A write that fails later is logged and shown by the health check
 * (app.statePersistence); the next write tries again.
 */
export async function installPersistence(
  app: FastifyInstance,
  { opened, main, sandboxes, flushIntervalMs, maxBytes = Number.POSITIVE_INFINITY, worldMaxBytes = Number.POSITIVE_INFINITY }: PersistenceOptions,
): Promise<void> {
  app.decorate('statePersistence', null);
  if (!opened) return;
  const { file, removed, persisted } = opened;
  if (removed.length) app.log.info({ stateFile: file, removed }, 'removed temporary files left by an interrupted write');
  if (persisted) app.log.info({ stateFile: file, sandboxes: persisted.sandboxes.length }, 'state loaded from the state file');
  if (opened.dropped.length) {
    app.log.warn({ stateFile: file, dropped: opened.dropped }, 'sandboxes of the state file left out (STATE_FILE_SANDBOXES=drop): the next write removes them from the file');
  }

  // What a sandbox nobody changed is written as: a reference to the state the next start has
  // anyway. The fixtures always; the default world's state (as the file then holds it) only
  // while the default world is still what this start loaded.
  const started = persisted?.state;
  const referenceOf = (world: AnyWorld): SeedReference | undefined => {
    const from = world.untouchedFrom();
    if (from === undefined) return undefined;
    if (from === world.seedState) return 'fixtures';
    if (started !== undefined && from === started && main.untouchedFrom() === started) return 'default';
    return undefined;
  };
  // Every world's snapshot is taken in one synchronous step, so the file holds one moment of
  // all of them; the text is then produced in slices, between which requests are served, and
  // written to the file as it comes.
  // Each world's clock goes with it, with the real time of the write (`realAt`): a restart
  // sets every clock where it was and lets it run on by the time the process was down.
  const writer = new StateFileWriter(file, {
    snapshot: () => {
      const realAt = main.clock.real();
      const withReal = <S extends { clock?: ClockAnchor }>(snapshot: S): S =>
        snapshot.clock ? { ...snapshot, clock: { ...snapshot.clock, realAt } } : snapshot;
      return stateFileText(
        withReal(main.snapshot()),
        sandboxes.entries().map(({ name, world, createdAt, lastUsedAt }) => {
          const seed = referenceOf(world);
          return { name, createdAt, lastUsedAt, state: seed ? withReal({ seed, clock: world.anchor() }) : withReal(world.snapshot()) };
        }),
        worldMaxBytes,
      );
    },
    // Which worlds there are and how often each changed: nothing else makes the file change
    // (a sandbox's lastUsedAt alone does not: it is written with the next change).
    version: () => [{ name: '', world: main }, ...sandboxes.entries()].map(({ name, world }) => `${name}:${idOf(world)}:${world.changes}`).join('/'),
    maxBytes,
  });
  try {
    await writer.flush();
  } catch (err) {
    throw new FixtureError(`state file ${file}: cannot be written in ${dirname(file)}: ${(err as Error).message}`);
  }
  writer.log = app.log;
  app.statePersistence = writer;
  await refuseWhatTheFileCannotHold({ main, sandboxes, maxBytes, worldMaxBytes });
  // A request that may change its world marks it touched before its handler runs (a reset or
  // an import in the handler then makes it what it was built from), and counts a change once
  // answered (a handler that waits, for a fault's latency or an import, changes it late; a
  // refused one too: a write too many is harmless). Reads do neither, so an idle or read-only
  // process never writes.
  // Managing sandboxes changes which sandboxes there are (the version sees that), not the
  // default world that serves those requests.
  const changes = (request: FastifyRequest) => !READS.has(request.method) && !routePattern(request)?.startsWith(`${CONTROL_PREFIX}/sandboxes`);
  app.addHook('preHandler', (request, _reply, done) => {
    if (changes(request)) (request as { world?: World }).world?.touch();
    done();
  });
  // Counted when the answer is sent (onSend), as the journal records it, rather than once the
  // socket has taken it (onResponse): any onResponse hook makes Fastify follow every
  // response's finish and error events, on every request of the process.
  app.addHook('onSend', (request, _reply, _payload, done) => {
    if (changes(request)) (request as { world?: World }).world?.countChange();
    done();
  });

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

/**
 * The state file's bounds, checked before a request keeps anything rather than when the file
 * is written: a flood of alert fires, annotations or repository objects is refused (507,
 * naming the bound) while it would take a world's text past STATE_FILE_WORLD_MAX_BYTES or the
 * file past STATE_FILE_MAX_BYTES, so the file goes on being written, instead of every later
 * change being given up. The estimate of a world: the default world's text as measured once
 * here (a sandbox starts from the same seed), plus the bytes requests added to it since it was
 * loaded (core/storage.ts); of the file, that of every world a change was made to. A state
 * imported whole is not estimated: an import past the bounds is still given up by the write.
 */
async function refuseWhatTheFileCannotHold(options: { main: World; sandboxes: Sandboxes; maxBytes: number; worldMaxBytes: number }): Promise<void> {
  const { main, sandboxes, maxBytes, worldMaxBytes } = options;
  if (!Number.isFinite(maxBytes) && !Number.isFinite(worldMaxBytes)) return;
  // In slices, as a write, counted and not kept: the default world's text alone, and with a
  // copy of it as a sandbox, whose lines are indented deeper. The larger of the two is what a
  // world that starts from it takes.
  const count = async (text: AsyncIterable<string>) => {
    let bytes = 0;
    for await (const piece of text) bytes += Buffer.byteLength(piece);
    return bytes;
  };
  const alone = await count(stateFileText(main.snapshot(), []));
  const withCopy = await count(stateFileText(main.snapshot(), [{ name: 'copy', createdAt: 0, lastUsedAt: 0, state: main.snapshot() }]));
  const base = Math.max(alone, withCopy - alone);
  storageLedgerOf(main.config).guard = (key, growth, totals) => {
    const worlds: AnyWorld[] = [main, ...sandboxes.entries().map((e) => e.world)];
    // Not registered (yet): the new sandbox a request creates, adopted once the request is answered.
    const world = worlds.find((w) => w.clock === key);
    const name = world === main ? 'the default world' : world ? `sandbox '${world.name}'` : 'a new sandbox';
    const estimate = base + totals.world;
    if (estimate > worldMaxBytes) {
      return `keeping ${growth} bytes more would take ${name} past STATE_FILE_WORLD_MAX_BYTES (${worldMaxBytes} bytes) in the state file (about ${estimate} bytes: ${base} of its seed, ${totals.world} added by requests), and its changes could no longer be persisted; delete some, reset the world, or raise STATE_FILE_WORLD_MAX_BYTES`;
    }
    // Every world a change was made to is written whole; the others as a reference of a few bytes.
    let written = world ? 0 : 1;
    for (const w of worlds) if (w === main || w === world || w.untouchedFrom() === undefined) written++;
    const file = written * base + totals.all;
    if (file > maxBytes) {
      return `keeping ${growth} bytes more would take the state file past STATE_FILE_MAX_BYTES (${maxBytes} bytes; about ${file}: ${written} worlds of ${base} bytes, ${totals.all} added by requests), and changes could no longer be persisted; delete some, reset or delete sandboxes, or raise STATE_FILE_MAX_BYTES`;
    }
    return undefined;
  };
}
