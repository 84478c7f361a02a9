import { createHash } from 'node:crypto';
import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { wallClock } from '../core/clock.js';
import { FixtureError } from '../core/fixtures.js';
import type { ParseState, State } from './state.js';

/**
 * Reads a state file written by an earlier run. Undefined when there is none yet; a file
 * that cannot be read or is not a valid state stops the start, naming the file, so a state
 * is never silently thrown away and overwritten.
 */
export async function readPersisted(file: string, parseState: ParseState): Promise<Persisted | undefined> {
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
  return parsePersisted(data as Record<string, unknown>, `state file ${file}`, parseState);
}

/** The default world's state in a state file (its sandboxes left aside). */
export async function readStateFile(file: string, parseState: ParseState): Promise<State | undefined> {
  return (await readPersisted(file, parseState))?.state;
}

/**
 * Writes the file so that a reader (or the next start) sees either the old content or the
 * new, never a half-written one: the text goes to a temporary file beside it, is flushed to
 * disk, and then renamed over the target, which the file system does atomically. When any
 * step fails (a full disk, a read-only or vanished folder), the temporary file is removed.
 * The text may come in pieces, written one after the other.
 */
export async function writeStateFile(file: string, text: string | Iterable<string>): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const handle = await open(tmp, 'w');
    try {
      // Each writeFile goes on where the last one ended, and writes all of its piece.
      for (const piece of typeof text === 'string' ? [text] : text) await handle.writeFile(piece, 'utf8');
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

/** Where the writer reports a change of condition (a pino logger fits). */
export interface Log {
  error(details: object, message: string): void;
  info(details: object, message: string): void;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Serialises writes of one file, skips those that would not change it, and keeps the outcome
 * for the health check. Once `log` is set, a change of condition is logged: the first
 * failure, a failure of another kind, and the recovery; the same failure again is not.
 */
export class StateFileWriter {
  private chain: Promise<void> = Promise.resolve();
  /** SHA-256 of the text last written: a write that would not change the file is skipped. */
  private lastDigest?: string;
  private lastWrittenAt?: number;
  private failure?: { kind: string; message: string; since: number };
  /** Flushes asked for and not finished yet. */
  private pending = 0;
  log?: Log;

  constructor(
    readonly file: string,
    /**
     * The file's whole text, as it should be now: the state is taken when this is called,
     * and its text may be produced afterwards, in pieces (export-stream.ts).
     */
    private readonly snapshot: () => string | Iterable<string> | AsyncIterable<string>,
  ) {}

  /** Whether a flush is under way (or waiting for one): a periodic one need not queue behind it. */
  get busy(): boolean {
    return this.pending > 0;
  }

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
    this.pending++;
    const run = this.chain.then(async () => {
      const text = this.snapshot();
      // The whole text is kept until it is written (a file that would not change is not
      // written at all); a digest of it tells whether it changes the file.
      const pieces: string[] = [];
      const hash = createHash('sha256');
      for await (const piece of typeof text === 'string' ? [text] : text) {
        pieces.push(piece);
        hash.update(piece);
      }
      const digest = hash.digest('base64');
      // After a failure the file may lag behind, whatever the text: write to find out.
      if (digest === this.lastDigest && !this.failure) return;
      try {
        await writeStateFile(this.file, pieces);
      } catch (err) {
        this.failed(err as NodeJS.ErrnoException, final);
        throw err;
      }
      this.lastDigest = digest;
      this.lastWrittenAt = wallClock();
      this.recovered();
    });
    // A failed write must not wedge the ones after it; the caller still sees the failure.
    this.chain = run.catch(() => undefined).finally(() => this.pending--);
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

/** A sandbox as the state file keeps it. */
export interface PersistedSandbox {
  name: string;
  createdAt: number;
  lastUsedAt: number;
  state: State;
}

/** What a state file holds: the default world's state, and every sandbox's. */
export interface Persisted {
  state: State;
  sandboxes: PersistedSandbox[];
}

/** Splits a parsed state file into the default state and the sandboxes, validating each. */
function parsePersisted(data: Record<string, unknown>, where: string, parseState: ParseState): Persisted {
  const { sandboxes: raw, ...rest } = data;
  const state = parseState(rest, where);
  const sandboxes: PersistedSandbox[] = [];
  if (raw !== undefined) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FixtureError(`${where}: $.sandboxes: expected an object of sandbox name -> {createdAt, lastUsedAt, state}`);
    for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
      const e = entry as { createdAt?: unknown; lastUsedAt?: unknown; state?: unknown };
      if (typeof e !== 'object' || e === null || !Number.isInteger(e.createdAt) || !Number.isInteger(e.lastUsedAt) || typeof e.state !== 'object' || e.state === null) {
        throw new FixtureError(`${where}: $.sandboxes.${name}: expected {createdAt, lastUsedAt, state}`);
      }
      sandboxes.push({ name, createdAt: e.createdAt as number, lastUsedAt: e.lastUsedAt as number, state: parseState(e.state, `${where} $.sandboxes.${name}.state`) });
    }
  }
  return { state, sandboxes };
}

export interface OpenedStateFile {
  file: string;
  /** What the file held, if it existed. */
  persisted?: Persisted;
  /** Temporary files of interrupted writes that were removed. */
  removed: string[];
}

/**
 * Gets STATE_FILE ready before the world is built (so its stores are built once, from the
 * file): refuses a file among the fixtures, removes what interrupted writes left beside it,
 * and reads it if it exists.
 */
export async function openStateFile(stateFile: string, fixturesDir: string, parseState: ParseState): Promise<OpenedStateFile> {
  const file = resolve(stateFile);
  // A state file among the fixtures would be written to, and read back as a fixture.
  if (inside(fixturesDir, file)) {
    throw new FixtureError(`STATE_FILE ${file} is inside the fixtures folder ${resolve(fixturesDir)}: put it elsewhere, fixture files are never written to`);
  }
  const removed = await removeStaleTemporaryFiles(file);
  const persisted = await readPersisted(file, parseState);
  return { file, removed, ...(persisted ? { persisted } : {}) };
}
