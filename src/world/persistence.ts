import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Emulator } from './world.js';
import { wallClock } from '../core/clock.js';
import { FixtureError } from '../core/fixtures.js';
import { parseState, type State } from './state.js';

/**
 * Reads a state file written by an earlier run. Undefined when there is none yet; a file
 * that cannot be read or is not a valid state stops the start, naming the file, so a state
 * is never silently thrown away and overwritten.
 */
export async function readStateFile(file: string): Promise<State | undefined> {
  let text: string;
  try {
    // A byte-order mark (a file saved by some editors) is not JSON; the file is still meant as such.
    text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FixtureError(`state file ${file}: cannot be read: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new FixtureError(`state file ${file}: $: not valid JSON: ${(err as Error).message} (fix or remove the file)`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new FixtureError(`state file ${file}: $: expected a JSON object (fix or remove the file)`);
  }
  return parseState(data, `state file ${file}`);
}

/**
 * Writes the file so that a reader (or the next start) sees either the old content or the
 * new, never a half-written one: the text goes to a temporary file beside it, is flushed to
 * disk, and then renamed over the target, which the file system does atomically. When any
 * step fails (a full disk, a read-only or vanished folder), the temporary file is removed.
 */
export async function writeStateFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    // The write's own error is the one worth reporting; a failed clean-up adds nothing to it.
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** Whether a process with this id runs (EPERM: it does, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files (`<file>.tmp-<pid>`) that a process killed in the middle of a
 * write left beside the state file. Only those of processes that no longer run go: a live
 * one may be writing right now. This process has not written yet, so a file with its own pid
 * is left too; its next write replaces it. Answers the paths removed.
 */
export async function removeStaleTemporaryFiles(file: string): Promise<string[]> {
  const dir = dirname(file);
  const prefix = `${basename(file)}.tmp-`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    // A folder that cannot be listed holds nothing to clean; the first write reports the problem.
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pidText = name.slice(prefix.length);
    if (!/^[1-9][0-9]{0,9}$/.test(pidText)) continue;
    const pid = Number(pidText);
    if (pid === process.pid || isAlive(pid)) continue;
    const path = join(dir, name);
    try {
      await rm(path, { force: true });
      removed.push(path);
    } catch {
      // Left for a later start; it is never read, so it only takes room.
    }
  }
  return removed;
}

/** How the state file is faring, as the health check reports it. */
export interface PersistenceStatus {
  ok: boolean;
  /** Why the last write failed (while not ok). */
  error?: string;
  /** When the writes started failing, ISO 8601 real time (while not ok). */
  failingSince?: string;
  /** When the file was last written, ISO 8601 real time. */
  lastWrittenAt?: string;
}

type Log = Pick<FastifyBaseLogger, 'error' | 'info'>;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Serialises writes of one file, skips those that would not change it, and keeps the outcome
 * for the health check. Once `log` is set, a change of condition is logged: the first
 * failure, a failure of another kind, and the recovery; the same failure again is not.
 */
export class StateFileWriter {
  private chain: Promise<void> = Promise.resolve();
  private lastText?: string;
  private lastWrittenAt?: number;
  private failure?: { kind: string; message: string; since: number };
  log?: Log;

  constructor(
    readonly file: string,
    private readonly snapshot: () => State,
  ) {}

  status(): PersistenceStatus {
    const written = this.lastWrittenAt === undefined ? {} : { lastWrittenAt: iso(this.lastWrittenAt) };
    if (!this.failure) return { ok: true, ...written };
    return { ok: false, error: this.failure.message, failingSince: iso(this.failure.since), ...written };
  }

  /**
   * Resolves when the current state is on disk; rejects with the write's error. A `final`
   * write logs its failure whatever came before: the changes it held are lost.
   */
  flush({ final = false } = {}): Promise<void> {
    const run = this.chain.then(async () => {
      const text = `${JSON.stringify(this.snapshot(), null, 2)}\n`;
      // After a failure the file may lag behind, whatever the text: write to find out.
      if (text === this.lastText && !this.failure) return;
      try {
        await writeStateFile(this.file, text);
      } catch (err) {
        this.failed(err as NodeJS.ErrnoException, final);
        throw err;
      }
      this.lastText = text;
      this.lastWrittenAt = wallClock();
      this.recovered();
    });
    // A failed write must not wedge the ones after it; the caller still sees the failure.
    this.chain = run.catch(() => undefined);
    return run;
  }

  private failed(err: NodeJS.ErrnoException, final: boolean): void {
    const kind = err.code ?? err.message;
    const message = `cannot write ${this.file}: ${err.message}`;
    const first = !this.failure;
    if (final) {
      this.log?.error({ err, stateFile: this.file }, 'could not write the state file on close: the changes since the last write are lost');
    } else if (first || this.failure!.kind !== kind) {
      this.log?.error({ err, stateFile: this.file }, 'the state file cannot be written: changes are not persisted until a write succeeds');
    }
    this.failure = { kind, message, since: first ? wallClock() : this.failure!.since };
  }

  private recovered(): void {
    if (!this.failure) return;
    this.log?.info({ stateFile: this.file, failingSince: iso(this.failure.since) }, 'the state file is written again');
    this.failure = undefined;
  }
}

function inside(dir: string, file: string): boolean {
  const rel = relative(resolve(dir), resolve(file));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The state file's writer; null without STATE_FILE. */
    statePersistence: StateFileWriter | null;
  }
}

/**
 * Optional persistence (STATE_FILE): at start, remove what interrupted writes left beside the
 * file and load the file if it exists; then write the state every STATE_FLUSH_INTERVAL_MS
 * (0: only on close) and when the app closes. Reset still returns to the fixture seed: the
 * file is where the state goes, not a new seed. A write that fails later is logged and shown
 * by the health check (app.statePersistence); the next write tries again.
 */
export async function installPersistence(app: FastifyInstance, emulator: Emulator): Promise<void> {
  app.decorate('statePersistence', null);
  const { stateFile, stateFlushIntervalMs, fixturesDir } = emulator.config;
  if (stateFile === undefined) return;
  const file = resolve(stateFile);
  // A state file among the fixtures would be written to, and read back as a fixture.
  if (inside(fixturesDir, file)) {
    throw new FixtureError(`STATE_FILE ${file} is inside the fixtures folder ${resolve(fixturesDir)}: put it elsewhere, fixture files are never written to`);
  }
  const removed = await removeStaleTemporaryFiles(file);
  if (removed.length) app.log.info({ stateFile: file, removed }, 'removed temporary files left by an interrupted write');
  const loaded = await readStateFile(file);
  if (loaded) {
    emulator.replace(loaded);
    app.log.info({ stateFile: file }, 'state loaded from the state file');
  }

  const writer = new StateFileWriter(file, () => emulator.exportState());
  try {
    // Written once at start, so an unwritable location stops the start instead of failing later.
    await writer.flush();
  } catch (err) {
    throw new FixtureError(`state file ${file}: cannot be written in ${dirname(file)}: ${(err as Error).message}`);
  }
  writer.log = app.log;
  app.statePersistence = writer;

  let timer: NodeJS.Timeout | undefined;
  if (stateFlushIntervalMs > 0) {
    timer = setInterval(() => {
      // The writer logs and records the failure; the next tick tries again.
      writer.flush().catch(() => undefined);
    }, stateFlushIntervalMs);
    // The interval alone must not keep the process alive.
    timer.unref();
  }
  app.addHook('onClose', async () => {
    if (timer) clearInterval(timer);
    // A failure is logged by the writer and shown by its status, which a process exit reads.
    await writer.flush({ final: true }).catch(() => undefined);
  });
}
