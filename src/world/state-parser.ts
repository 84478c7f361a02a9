import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import secureJsonParse from 'secure-json-parse';
import { codeRoot } from '../core/package-root.cjs';
import { FixtureError, ProblemList, type IgnoredEntry, type Problem } from '../core/fixtures.js';
import { unavailable, type DomainError } from '../core/errors.js';
import { turn } from '../core/slices.js';
import type { FolderReport, LoadOptions, ParseState, SectionName, State } from './state.js';

/**
 * Reading a posted state (PUT /_emulator/state, a sandbox's PUT): parsing and validating a
 * body of tens of megabytes takes seconds, so from OFF_THREAD_BYTES on it is done in a
 * worker thread (state-worker.ts) while the event loop goes on serving requests. The worker
 * then hands the state over in slices, each taken in by the event loop in a few
 * milliseconds. The outcome is the same either way: the same functions run in both places.
 */

/** What a body holds: not JSON; JSON null or "" (no state); other JSON that is not an object; or a valid state. */
export type StateBody<S = State> = { kind: 'invalid-json' } | { kind: 'empty' } | { kind: 'not-object' } | { kind: 'state'; state: S };

/** Bodies from this size on are read in a worker thread; a smaller one costs less than starting it. */
const OFF_THREAD_BYTES = 256 * 1024;
/** About this many bytes (as JSON) of entries make up one slice handed over by the worker. */
export const SLICE_BYTES = 256 * 1024;
/** A body that came in chunks is joined for the worker about this many bytes per turn of the event loop. */
const JOIN_BYTES_PER_TURN = 1024 * 1024;

/** A posted body as it came: one Buffer, or the chunks it arrived in, in order. */
export type BodyBytes = Buffer | readonly Buffer[];

function lengthOf(body: BodyBytes): number {
  if (Buffer.isBuffer(body)) return body.length;
  let length = 0;
  for (const chunk of body as readonly Buffer[]) length += chunk.length;
  return length;
}

/** The body in one Buffer, at once: for a small one. */
function joinedAtOnce(body: BodyBytes): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.concat(body as readonly Buffer[]);
}

/**
 * The body in one Buffer of its own (so that it can be moved to the worker, not copied),
 * copied a few megabytes per turn of the event loop: a copy of tens of megabytes at once held
 * the loop for 50-90 ms.
 */
async function joinedInSlices(body: BodyBytes, length: number): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const joined = Buffer.allocUnsafeSlow(length);
  let at = 0;
  let sinceTurn = 0;
  for (const chunk of body as readonly Buffer[]) {
    chunk.copy(joined, at);
    at += chunk.length;
    sinceTurn += chunk.length;
    if (sinceTurn >= JOIN_BYTES_PER_TURN) {
      sinceTurn = 0;
      await turn();
    }
  }
  return joined;
}

/**
 * Reads a body on the calling thread: JSON as the root's parser reads it (a byte-order mark
 * skipped, `__proto__` and `constructor.prototype` keys refused), then parseState. Throws
 * parseState's FixtureError for a JSON object that is not a valid state.
 */
export function readBody<S>(body: Buffer, where: string, parseState: ParseState<S>, now?: number): StateBody<S> {
  let data: unknown;
  try {
    data = secureJsonParse(body.toString('utf8'), { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return { kind: 'invalid-json' };
  }
  if (data === null || data === '') return { kind: 'empty' };
  if (typeof data !== 'object' || Array.isArray(data)) return { kind: 'not-object' };
  // `now`: times relative to the load are checked against the time the state is imported at.
  return { kind: 'state', state: parseState(data, where, now === undefined ? undefined : { now }) };
}

/** Where the worker's code is, and how to start it. */
export interface WorkerEntry {
  url: URL;
  execArgv?: string[];
}

let entry: WorkerEntry | null | undefined;
let threshold = OFF_THREAD_BYTES;

/**
 * The worker once built (dist/state-worker.js, in both builds), which reads the emulator's state format; none
 * when this runs from the TypeScript sources, which a worker cannot load by itself: then
 * every body is read on the calling thread, unless a test configured otherwise.
 */
function workerEntry(): WorkerEntry | null {
  if (entry === undefined) {
    const file = join(codeRoot(), 'state-worker.js');
    entry = existsSync(file) ? { url: pathToFileURL(file) } : null;
  }
  return entry;
}

/** For tests: where the worker comes from (null: none), and from what size on it is used. */
export function configureStateWorker(options: { entry?: WorkerEntry | null; minBytes?: number }): void {
  if (options.entry !== undefined) entry = options.entry;
  if (options.minBytes !== undefined) threshold = options.minBytes;
}

/** How many posted bodies may be held for reading in workers at once, across every world, and how many bytes. */
export interface ImportBounds {
  /** IMPORT_QUEUE_MAX: bodies waiting or being read. */
  maxBodies: number;
  /** IMPORT_QUEUE_MAX_BYTES: their bytes together. */
  maxBytes: number;
}

/** When a full queue refuses a body: the client may try again after about this long. */
export const IMPORT_RETRY_AFTER_SECONDS = 5;

/**
 * The imports read in workers: one at a time per world (each holds its body and its state,
 * hundreds of megabytes for a large one, and the second would replace the first anyway), and
 * each world in its own line, so that one world's large import never holds up another's.
 * Every body waiting or being read is counted, and one more than the bounds allow is refused
 * at once (503 with Retry-After), so that queued bodies never pile up in memory.
 */
export class ImportQueue {
  private readonly lines = new Map<string, Promise<unknown>>();
  private bodies = 0;
  private bytes = 0;

  /** Bodies waiting or being read. */
  get held(): number {
    return this.bodies;
  }

  run<T>(world: string, size: number, bounds: ImportBounds, read: () => Promise<T>): Promise<T> {
    if (this.bodies + 1 > bounds.maxBodies || this.bytes + size > bounds.maxBytes) {
      throw importQueueFull(this.bodies, this.bytes, bounds);
    }
    this.bodies++;
    this.bytes += size;
    const before = this.lines.get(world) ?? Promise.resolve();
    const run = before.then(read).finally(() => {
      this.bodies--;
      this.bytes -= size;
    });
    const line = run.catch(() => undefined);
    this.lines.set(world, line);
    // The line is dropped once its last import is done, so that the map holds busy worlds only.
    void line.then(() => {
      if (this.lines.get(world) === line) this.lines.delete(world);
    });
    return run;
  }
}

function importQueueFull(bodies: number, bytes: number, bounds: ImportBounds): DomainError {
  const error = unavailable(
    `too many state imports under way (${bodies} bodies, ${bytes} bytes; IMPORT_QUEUE_MAX is ${bounds.maxBodies}, IMPORT_QUEUE_MAX_BYTES is ${bounds.maxBytes}): try again in a few seconds`,
  );
  error.retryAfterSeconds = IMPORT_RETRY_AFTER_SECONDS;
  return error;
}

const imports = new ImportQueue();

/** How many posted bodies are waiting or being read in workers now (for tests and the soak). */
export function importsHeld(): number {
  return imports.held;
}

/** The bounds when a caller gives none (tests of the reader alone). */
const UNBOUNDED: ImportBounds = { maxBodies: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };

/**
 * Reads a posted state: on this thread when it is small, else in a worker thread, after the
 * imports into the same world (`world`: its sandbox name, '' for the default one) that came
 * before it. `now`: the world's time, which times relative to the load are checked against.
 * Throws a FixtureError (a 400) for a JSON object that is not a valid state, and an
 * `unavailable` DomainError (503, Retry-After) when the bounds are reached.
 */
export async function readStateBody<S>(
  body: BodyBytes,
  where: string,
  parseState: ParseState<S>,
  world = '',
  bounds: ImportBounds = UNBOUNDED,
  now?: number,
): Promise<StateBody<S>> {
  const size = lengthOf(body);
  const worker = size >= threshold ? workerEntry() : null;
  if (!worker) return readBody(joinedAtOnce(body), where, parseState, now);
  return imports.run(world, size, bounds, async () => readInWorker(worker, await joinedInSlices(body, size), where, now) as Promise<StateBody<S>>);
}

/** What the worker sends first: the outcome, or the shape of the state whose slices follow. */
export type WorkerAnswer =
  | Exclude<StateBody, { kind: 'state' }>
  | { kind: 'state'; keys: string[]; scalars: Record<string, unknown> }
  | { kind: 'error'; fixture: boolean; message: string; problems?: readonly Problem[]; unlisted?: number | boolean };

/** A slice of a section, or null once every slice has been sent. */
export type WorkerSlice = { name: string; items: unknown[] } | null;

/** A worker kept after an import waits this long for the next one before it stops. */
const WARM_IDLE_MS = 60_000;

/**
 * The worker kept between imports: starting one took 15-30 ms of the event loop on every
 * import. One at a time is kept; an import that finds it busy (another world's, at the same
 * time) starts one of its own, kept afterwards if the place is free.
 */
let warm: { entry: WorkerEntry; worker: Worker; idle?: NodeJS.Timeout } | undefined;

let started = 0;

/** How many state workers have been started so far (for tests). */
export function stateWorkersStarted(): number {
  return started;
}

/** A worker for one import: the warm one when it is free and of this entry, else a new one. */
function takeWorker(entry: WorkerEntry): Worker {
  if (warm && warm.entry === entry && warm.idle) {
    clearTimeout(warm.idle);
    warm.idle = undefined;
    warm.worker.ref();
    return warm.worker;
  }
  const worker = new Worker(entry.url, { ...(entry.execArgv ? { execArgv: entry.execArgv } : {}) });
  started++;
  // One that stops by itself (a crash) is never handed out again.
  worker.once('exit', () => {
    if (warm?.worker === worker) warm = undefined;
  });
  return worker;
}

/** A worker done with an import, with nothing on its way: kept warm, or stopped. */
function giveBack(entry: WorkerEntry, worker: Worker): void {
  if (warm && warm.worker !== worker) {
    // The place is taken: by a busy worker (this one was started beside it), or by one of another entry.
    if (warm.idle === undefined || warm.entry === entry) {
      void worker.terminate();
      return;
    }
    void warm.worker.terminate();
  }
  const idle = setTimeout(() => {
    if (warm?.worker === worker) warm = undefined;
    void worker.terminate();
  }, WARM_IDLE_MS);
  idle.unref();
  // Kept, it does not keep the process alive.
  worker.unref();
  warm = { entry, worker, idle };
}

/** Posts a message to the worker of a job, moving what `transfer` lists. */
type Post = (message: unknown, transfer?: ArrayBuffer[]) => void;

/**
 * One job of a worker: its messages taken in order (`next`), a failure (an error, an exit, an
 * abort of `signal`) rejecting what waits. The worker is kept afterwards only when the job
 * says it ended cleanly (`done`), with nothing more on its way; else it is stopped.
 */
async function withWorker<T>(
  entry: WorkerEntry,
  signal: AbortSignal | undefined,
  job: (post: Post, next: () => Promise<unknown>, done: () => void) => Promise<T>,
): Promise<T> {
  const worker = takeWorker(entry);
  const received: unknown[] = [];
  const waiting: Array<{ resolve: (message: unknown) => void; reject: (err: Error) => void }> = [];
  let failure: Error | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    for (const w of waiting.splice(0)) w.reject(failure);
  };
  const onMessage = (message: unknown) => {
    const w = waiting.shift();
    if (w) w.resolve(message);
    else received.push(message);
  };
  const onExit = (code: number) => fail(new Error(`the state worker stopped (exit code ${code}) before it answered`));
  const onAbort = () => fail(new Error('the read was given up'));
  worker.on('message', onMessage);
  worker.on('error', fail);
  worker.on('exit', onExit);
  signal?.addEventListener('abort', onAbort);
  if (signal?.aborted) onAbort();
  const next = (): Promise<unknown> => {
    if (received.length) return Promise.resolve(received.shift());
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  // Whether the worker is done with this job, with nothing more on its way: then it may be kept.
  let settled = false;
  try {
    return await job(
      (message, transfer) => worker.postMessage(message, transfer ?? []),
      next,
      () => (settled = true),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
    worker.off('message', onMessage);
    worker.off('error', fail);
    worker.off('exit', onExit);
    if (settled && failure === undefined) giveBack(entry, worker);
    else {
      if (warm?.worker === worker) warm = undefined;
      await worker.terminate();
    }
  }
}

/**
 * A state handed over by the worker: its keys in their order, the sections filled from the
 * slices. One slice on its way at a time, the next asked for after a turn of the event loop:
 * Node takes in every message that has arrived (or arrives meanwhile) in one callback, so
 * slices asked for ahead were taken in together, holding the loop for tens of milliseconds.
 */
async function receiveState(keys: string[], scalars: Record<string, unknown>, post: Post, next: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  for (const key of keys) state[key] = key in scalars ? scalars[key] : [];
  post('next');
  for (;;) {
    const slice = (await next()) as WorkerSlice;
    if (slice === null) break;
    const section = state[slice.name] as unknown[];
    for (const item of slice.items) section.push(item);
    await turn();
    post('next');
  }
  return state;
}

async function readInWorker(entry: WorkerEntry, body: Buffer, where: string, now?: number): Promise<StateBody> {
  return withWorker(entry, undefined, async (post, next, done) => {
    // A body of its own (as joinedInSlices makes one) is moved, not copied.
    const owns = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    post({ body, where, now }, owns ? [body.buffer as ArrayBuffer] : []);
    const answer = (await next()) as WorkerAnswer;
    if (answer.kind !== 'state') done();
    if (answer.kind === 'error') throw answer.fixture ? new FixtureError(answer.message, answer.problems, answer.unlisted) : new Error(answer.message);
    if (answer.kind !== 'state') return answer;
    const state = await receiveState(answer.keys, answer.scalars, post, next);
    done();
    return { kind: 'state', state: state as State };
  });
}

/** A fixtures folder to read in the worker (a reload of WATCH). */
export interface FolderMessage {
  folder: string;
  now?: number;
  maxListed?: number;
}

/** What the worker answers of a folder: its report (the state, when valid, follows in slices), or why it could not be read. */
export type FolderAnswer =
  | {
      kind: 'folder';
      problems: { listed: Problem[]; count: number; uncounted: boolean };
      warnings: string[];
      files: string[];
      ignored: IgnoredEntry[];
      clockFile?: string;
      state?: { keys: string[]; scalars: Record<string, unknown> };
    }
  | { kind: 'error'; fixture: boolean; message: string; problems?: readonly Problem[]; unlisted?: number | boolean };

/** How many bytes the folder's fixture files hold together (0 when it cannot be read: the read here says why). */
async function folderBytes(dir: string): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json'));
  } catch {
    return 0;
  }
  const sizes = await Promise.all(
    names.map(async (n) => {
      try {
        const s = await stat(join(dir, n));
        return s.isFile() ? s.size : 0;
      } catch {
        return 0;
      }
    }),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

/**
 * Reads a fixtures folder as `here` (the format's inspect) does, in the worker thread when
 * its files hold OFF_THREAD_BYTES or more together (and the worker is there), as a posted
 * state of that size is read: parsing and checking a large export then never holds the event
 * loop, and the state comes over in slices. An abort of `options.signal` stops the worker.
 */
export async function inspectFolder<S>(
  dir: string,
  options: LoadOptions,
  here: (dir: string, options: LoadOptions) => Promise<FolderReport<S>>,
): Promise<FolderReport<S>> {
  const worker = workerEntry();
  if (!worker || (await folderBytes(dir)) < threshold) return here(dir, options);
  return withWorker(worker, options.signal, async (post, next, done) => {
    post({ folder: dir, now: options.now, maxListed: options.maxListed } satisfies FolderMessage);
    const answer = (await next()) as FolderAnswer;
    if (answer.kind === 'error') {
      done();
      throw answer.fixture ? new FixtureError(answer.message, answer.problems, answer.unlisted) : new Error(answer.message);
    }
    const { problems, warnings, files, ignored, clockFile } = answer;
    const report: FolderReport<S> = {
      problems: ProblemList.of(problems.listed, problems.count, problems.uncounted, options.maxListed),
      warnings,
      files,
      ignored,
      ...(clockFile !== undefined ? { clockFile } : {}),
    };
    if (answer.state) report.state = (await receiveState(answer.state.keys, answer.state.scalars, post, next)) as S;
    done();
    return report;
  });
}

/** The slices of a state's sections, each about SLICE_BYTES of JSON (judged from its first entries). */
export function* slicesOf(state: State, sectionNames: readonly SectionName[]): Generator<{ name: string; items: unknown[] }> {
  for (const name of sectionNames) {
    const items = state[name] as unknown[];
    if (items.length === 0) continue;
    const sample = items.slice(0, 16);
    const each = JSON.stringify(sample).length / sample.length;
    const size = Math.max(1, Math.floor(SLICE_BYTES / each));
    for (let i = 0; i < items.length; i += size) yield { name, items: items.slice(i, i + size) };
  }
}
