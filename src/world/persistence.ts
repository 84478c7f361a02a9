import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { ClockAnchorSchema, wallClock, type ClockAnchor, type ControllableClock } from '../core/clock.js';
import { FixtureError } from '../core/fixtures.js';
import type { ParseState, State } from './state.js';
import { WorldTooLargeError, type SeedReference } from './export-stream.js';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from './sandboxes.js';
import type { World } from './world.js';

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

/** The text of a write passed STATE_FILE_MAX_BYTES: the write was given up, the last file kept. */
export class StateFileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the state file would pass STATE_FILE_MAX_BYTES (${maxBytes} bytes)`);
    this.name = 'StateFileTooLargeError';
  }
}

/**
 * Writes the file so that a reader (or the next start) sees either the old content or the
 * new, never a half-written one: the text goes to a temporary file beside it, is flushed to
 * disk, and then renamed over the target, which the file system does atomically. When any
 * step fails (a full disk, a read-only or vanished folder, a text past `maxBytes`), the
 * temporary file is removed and the old file stays as it was. The text may come in pieces,
 * written as they come, so that the whole text is never held in memory.
 */
export async function writeStateFile(
  file: string,
  text: string | Iterable<string> | AsyncIterable<string>,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    const handle = await open(tmp, 'w');
    try {
      let bytes = 0;
      // Each writeFile goes on where the last one ended, and writes all of its piece.
      for await (const piece of typeof text === 'string' ? [text] : text) {
        bytes += Buffer.byteLength(piece);
        if (bytes > maxBytes) throw new StateFileTooLargeError(maxBytes);
        await handle.writeFile(piece, 'utf8');
      }
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
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A failure kind of its own: a text past a bound, not tried again until something changes. */
const TOO_LARGE = 'too-large';

/** What a StateFileWriter is built from. */
export interface StateFileSource {
  /**
   * The file's whole text, as it should be now: the state is taken when this is called,
   * and its text is produced afterwards, in pieces (export-stream.ts), and written as it comes.
   */
  snapshot: () => string | Iterable<string> | AsyncIterable<string>;
  /**
   * A key that changes whenever the file's content should (a world changed, a sandbox came
   * or went): while it stays the same, a flush does nothing at all, not even take a snapshot.
   */
  version: () => string;
  /** STATE_FILE_MAX_BYTES. */
  maxBytes?: number;
}

/**
 * Serialises writes of one file, skips those when nothing changed, and keeps the outcome
 * for the health check. Once `log` is set, a change of condition is logged: the first
 * failure, a failure of another kind, and the recovery; the same failure again is not. A
 * text past a bound (STATE_FILE_MAX_BYTES, STATE_FILE_WORLD_MAX_BYTES) is given up with a
 * warning, the last good file kept, and not tried again until something changes.
 */
export class StateFileWriter {
  private chain: Promise<void> = Promise.resolve();
  /** The version last written (or found too large): a flush at the same version does nothing. */
  private lastVersion?: string;
  private lastWrittenAt?: number;
  private failure?: { kind: string; message: string; since: number };
  /** Flushes asked for and not finished yet. */
  private pending = 0;
  /** Texts that were written, for tests and the soak: a flush with nothing changed writes none. */
  writes = 0;
  log?: Log;

  constructor(
    readonly file: string,
    private readonly source: StateFileSource,
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
   * Resolves when the current state is on disk (or found past a bound, which is logged and
   * shown by the status); rejects with the write's error. A `final` write logs its failure
   * whatever came before: the changes it held are lost.
   */
  flush({ final = false } = {}): Promise<void> {
    this.pending++;
    const run = this.chain.then(async () => {
      const version = this.source.version();
      // Nothing changed since the last write: nothing to do. After a failed write the file
      // may lag behind, whatever the version: write to find out.
      if (version === this.lastVersion && (!this.failure || this.failure.kind === TOO_LARGE)) return;
      try {
        await writeStateFile(this.file, this.source.snapshot(), this.source.maxBytes);
      } catch (err) {
        if (err instanceof StateFileTooLargeError || err instanceof WorldTooLargeError) {
          this.tooLarge(err, version);
          return;
        }
        this.failed(err as NodeJS.ErrnoException, final);
        throw err;
      }
      this.writes++;
      this.lastVersion = version;
      this.lastWrittenAt = wallClock();
      this.recovered();
    });
    // A failed write must not wedge the ones after it; the caller still sees the failure.
    this.chain = run.catch(() => undefined).finally(() => this.pending--);
    return run;
  }

  /** Past a bound: the last good file stays, a warning says so, and the next try waits for a change. */
  private tooLarge(err: Error, version: string): void {
    this.lastVersion = version;
    const message = `${err.message}: the state file ${this.file} keeps its last good content; changes are not persisted until the state is smaller or the bound raised`;
    if (!this.failure || this.failure.message !== message) this.log?.warn({ stateFile: this.file }, message);
    this.failure = { kind: TOO_LARGE, message, since: this.failure?.since ?? wallClock() };
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
  /**
   * Its state; undefined for the fixtures (`"seed": "fixtures"`: the sandbox was the seed,
   * untouched); the default world's state object itself for `"seed": "default"`.
   */
  state: State | undefined;
  /** The sandbox's clock, for one kept as a reference (a whole state holds its own). */
  clock?: ClockAnchor;
}

/** What a state file holds: the default world's state, and every sandbox's. */
export interface Persisted {
  state: State;
  sandboxes: PersistedSandbox[];
}

const SEED_REFERENCES: readonly SeedReference[] = ['fixtures', 'default'];

/**
 * Splits a parsed state file into the default state and the sandboxes, validating each. A
 * sandbox holds its whole state, or (written since sandboxes nobody changed are kept as
 * references) `"seed": "fixtures"` or `"seed": "default"`; a file of either kind is read.
 */
function parsePersisted(data: Record<string, unknown>, where: string, parseState: ParseState): Persisted {
  const { sandboxes: raw, ...rest } = data;
  const state = parseState(rest, where);
  const sandboxes: PersistedSandbox[] = [];
  if (raw !== undefined) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FixtureError(`${where}: $.sandboxes: expected an object of sandbox name -> {createdAt, lastUsedAt, state}`);
    for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
      const e = entry as { createdAt?: unknown; lastUsedAt?: unknown; state?: unknown; seed?: unknown; clock?: unknown };
      const times = typeof e === 'object' && e !== null && Number.isInteger(e.createdAt) && Number.isInteger(e.lastUsedAt);
      const hasState = times && typeof e.state === 'object' && e.state !== null && e.seed === undefined && e.clock === undefined;
      const hasSeed = times && e.state === undefined && SEED_REFERENCES.includes(e.seed as SeedReference);
      if (!hasState && !hasSeed) {
        throw new FixtureError(`${where}: $.sandboxes.${name}: expected {createdAt, lastUsedAt, state} or {createdAt, lastUsedAt, seed: "fixtures" | "default", clock?}`);
      }
      if (hasSeed && e.clock !== undefined && !Value.Check(ClockAnchorSchema, e.clock)) {
        throw new FixtureError(`${where}: $.sandboxes.${name}.clock: expected {now, scale, frozen, loadedAt?, realAt?}: epoch ms from 0 to the year 9999, a scale from 0 to 1000000, frozen true or false, nothing else`);
      }
      const sandboxState = hasState ? parseState(e.state, `${where} $.sandboxes.${name}.state`) : e.seed === 'default' ? state : undefined;
      const clock = hasSeed && e.clock !== undefined ? { clock: e.clock as ClockAnchor } : {};
      sandboxes.push({ name, createdAt: e.createdAt as number, lastUsedAt: e.lastUsedAt as number, state: sandboxState, ...clock });
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
  /** Sandboxes of the file left out (STATE_FILE_SANDBOXES=drop), each with why. */
  dropped: Array<{ name: string; reason: string }>;
}

/** What decides whether the file's sandboxes can be loaded. */
export interface SandboxRules {
  /** SANDBOXES. */
  mode: 'auto' | 'explicit' | 'off';
  /** STATE_FILE_SANDBOXES: `drop` leaves out what cannot be loaded instead of stopping the start. */
  onUnloadable: 'keep' | 'drop';
}

/** `$.sandboxes.name`, or `$.sandboxes["odd name"]` when the name is not a plain identifier. */
const sandboxPath = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `$.sandboxes.${name}` : `$.sandboxes[${JSON.stringify(name).slice(0, 90)}]`);

/**
 * The file's sandboxes that this start cannot load (sandboxes off, a name that is not a valid
 * sandbox name): one line naming the file, the JSON path and what to do, or, with
 * STATE_FILE_SANDBOXES=drop, those sandboxes left out and listed.
 */
function checkSandboxes(file: string, persisted: Persisted, rules: SandboxRules): Array<{ name: string; reason: string }> {
  const unloadable: Array<{ name: string; reason: string; path: string }> = [];
  for (const { name } of persisted.sandboxes) {
    const path = sandboxPath(name);
    if (rules.mode === 'off') unloadable.push({ name, path, reason: 'sandboxes are off (SANDBOXES=off)' });
    else if (!SANDBOX_NAME.test(name)) unloadable.push({ name, path, reason: `'${name.slice(0, 80)}' is not a valid sandbox name (${SANDBOX_NAME_RULE})` });
  }
  if (unloadable.length === 0) return [];
  if (rules.onUnloadable === 'drop') {
    const names = new Set(unloadable.map((u) => u.name));
    persisted.sandboxes = persisted.sandboxes.filter((s) => !names.has(s.name));
    return unloadable.map(({ name, reason }) => ({ name, reason }));
  }
  const first = unloadable[0];
  const more = unloadable.length > 1 ? ` (and ${unloadable.length - 1} more)` : '';
  const fix =
    rules.mode === 'off'
      ? 'start with SANDBOXES=auto or explicit to load them, or with STATE_FILE_SANDBOXES=drop (--state-file-sandboxes drop) to start without them (the next write removes them from the file)'
      : 'rename or remove it in the file, or start with STATE_FILE_SANDBOXES=drop (--state-file-sandboxes drop) to start without it (the next write removes it from the file)';
  throw new FixtureError(`state file ${file}: ${first.path}: cannot be loaded: ${first.reason}${more}; ${fix}`);
}

/**
 * Gets STATE_FILE ready before the world is built (so its stores are built once, from the
 * file): refuses a file among the fixtures, removes what interrupted writes left beside it,
 * and reads it if it exists.
 */
export async function openStateFile(
  stateFile: string,
  fixturesDir: string,
  parseState: ParseState,
  rules: SandboxRules = { mode: 'auto', onUnloadable: 'keep' },
): Promise<OpenedStateFile> {
  const file = resolve(stateFile);
  // A state file among the fixtures would be written to, and read back as a fixture.
  if (inside(fixturesDir, file)) {
    throw new FixtureError(`STATE_FILE ${file} is inside the fixtures folder ${resolve(fixturesDir)}: put it elsewhere, fixture files are never written to`);
  }
  const removed = await removeStaleTemporaryFiles(file);
  const persisted = await readPersisted(file, parseState);
  const dropped = persisted ? checkSandboxes(file, persisted, rules) : [];
  return { file, removed, dropped, ...(persisted ? { persisted } : {}) };
}

/**
 * Puts a world loaded from the state file back on the clock it had at the write: its `now`,
 * `scale` and `frozen`, moved on by the real time since the write (`realAt`: the time the
 * process was down) times its scale, as if it had kept running; a frozen clock resumes
 * exactly where it stopped. A clock without `realAt` (a file written before it was kept, an
 * export put there by hand) is set to where it was, without moving on; no clock, left alone.
 */
export function resumeClock(clock: ControllableClock, anchor: ClockAnchor | undefined): void {
  if (!anchor) return;
  const down = anchor.realAt === undefined ? 0 : Math.max(0, clock.real() - anchor.realAt);
  clock.set({ now: anchor.now, scale: anchor.scale, frozen: anchor.frozen });
  // advance() stops at LATEST_INSTANT: a long down time at a high scale ends there.
  if (!anchor.frozen && down > 0 && anchor.scale > 0) clock.advance(down * anchor.scale);
}

/**
 * A sandbox of the state file, as it was at the write: its state built on its own clock (a
 * reference to the fixtures rebuilt at the instant it was built from them, so that their
 * relative times and started lifecycles are where they were), then its clock resumed.
 */
export function restoreSandbox<W extends World>(main: W, sandbox: PersistedSandbox): W {
  const anchor = sandbox.clock ?? sandbox.state?.clock;
  const at = sandbox.state === undefined && sandbox.clock ? builtAt(main.seedState.clock, sandbox.clock) : undefined;
  const world = main.fork(sandbox.name, sandbox.state, undefined, at) as W;
  resumeClock(world.clock, anchor);
  return world;
}

/**
 * The emulated instant a world was built from the seed at, from the `loadedAt` its clock
 * says: the same for a seed without a clock; for a seed that is an export (loaded on real
 * time, its times moved by the difference), that instant less what the seed's own clock
 * says between its load and its export. (A seed loaded on its clock sets the clock anyway.)
 */
function builtAt(seed: ClockAnchor | undefined, clock: ClockAnchor): number {
  const loadedAt = clock.loadedAt ?? clock.now;
  return Math.max(0, seed ? loadedAt - ((seed.loadedAt ?? seed.now) - seed.now) : loadedAt);
}
