import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { wallClock } from '../core/clock.js';
import { FixtureError, formatProblem, ignoredText, jsonPath, type Problem } from '../core/fixtures.js';
import type { FolderReport } from './state.js';

/**
 * Live reload of the seed (WATCH): a change to the fixture folder reads it again, debounced;
 * a valid folder becomes the seed (`apply`), a broken one leaves the last good seed in place
 * and its problems on show (`status()`, read by the health check and the dashboard) until the
 * folder is fixed. Events come from fs.watch on the folder; polling (WATCH_POLL_MS) catches
 * changes where no events arrive (a folder bind-mounted into a container, some network file
 * systems), and takes over when fs.watch cannot watch the folder at all.
 */

/** One problem of the seed folder, as the health check answers it. */
export interface SeedProblem {
  file?: string;
  line?: number;
  column?: number;
  /** The JSON path ($.grids[0].name). */
  path: string;
  message: string;
  /** The problem as one line, as `check` prints it. */
  text: string;
}

/** How the seed is faring, as GET /_emulator/health answers it (`seed`). */
export interface SeedStatus {
  /** 'error' while the folder, as it is now, cannot be loaded: the last good seed is kept. */
  status: 'ok' | 'error';
  /** Why (while 'error'): the problems listed, at most MAX_LISTED_PROBLEMS. */
  problems: SeedProblem[];
  /** How many more problems there are, not listed (true: more, not counted). */
  unlisted: number | boolean;
  /**
   * What the default world's seed is: the folder's fixtures (the last good ones), or an empty
   * state, when the folder had problems at start (WATCH) and has not loaded since.
   */
  serving: 'fixtures' | 'empty';
  /** When the seed in use was loaded, real time (ISO 8601). */
  loadedAt: string;
  /** When the folder was last read, real time. */
  checkedAt: string;
  /** Whether changes to the folder are watched (WATCH). */
  watching: boolean;
  /**
   * Why changes to the folder are not read now, while they are not: a read given up at its
   * deadline has not ended, and no other starts until it does. Health is then degraded.
   */
  stopped?: string;
}

/** Quiet time after the last change before the folder is read (an editor saves in several steps). */
export const RELOAD_DEBOUNCE_MS = 200;
/**
 * A read given up that has not ended this long after its signal was aborted is taken as stuck
 * (a file system that does not answer): the watch is reported stopped until it ends.
 */
export const STOPPED_AFTER_MS = 1000;
/** Polling interval when fs.watch cannot watch the folder and WATCH_POLL_MS does not say. */
export const FALLBACK_POLL_MS = 1000;

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SeedWatchOptions<S> {
  dir: string;
  /**
   * Reads the folder (STATE.inspect, with the time it would load at). `signal` is aborted
   * when the read is given up at its deadline: what can stop then should.
   */
  inspect: (signal: AbortSignal) => Promise<FolderReport<S>>;
  /** Makes a valid folder's state the seed (it may take turns of the event loop). */
  apply: (state: S, report: FolderReport<S>) => void | Promise<void>;
  /** Told when a change left the folder with problems (the last good seed is kept), and at start when it had some. */
  refused?: () => void;
  log: Log;
  /** Also poll the folder this often (ms); 0: events only. */
  pollMs?: number;
  /** Whether to listen to fs.watch events (default true; false: polling only, as where none arrive). */
  events?: boolean;
  debounceMs?: number;
  /** How long reading the folder may take before it is given up (WATCH_RELOAD_TIMEOUT_MS). */
  timeoutMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function seedProblem(p: Problem, where: string): SeedProblem {
  return {
    ...(p.file !== undefined ? { file: p.file } : {}),
    ...(p.line !== undefined ? { line: p.line, column: p.column } : {}),
    path: jsonPath(p.pointer),
    message: p.message,
    text: formatProblem(p, where),
  };
}

/** A problem of the folder as a whole (it cannot be read, a read took too long). */
const folderProblem = (message: string): SeedProblem => ({ path: '$', message, text: message });

export class SeedWatch<S> {
  private state: SeedStatus;
  private watcher: FSWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reading = false;
  private again = false;
  private closed = false;
  private signature = '';
  /** A read given up at its deadline that has not ended yet: no other starts meanwhile. */
  private abandoned: Promise<unknown> | undefined;
  /** The entries not read (not regular files) already told in the log, so that each is told once. */
  private told = new Set<string>();
  /** Settles when the reload under way (if any) is done: for tests and close. */
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly options: SeedWatchOptions<S>) {
    const now = iso(wallClock());
    this.state = { status: 'ok', problems: [], unlisted: 0, serving: 'fixtures', loadedAt: now, checkedAt: now, watching: false };
  }

  status(): SeedStatus {
    return this.state;
  }

  /**
   * What the start read of the folder: its entries that are not read are not told again; a
   * folder with problems (or none at all: `failure`) is the empty seed the world started
   * with (WATCH), with the problems on show until the folder is fixed.
   */
  begin(report: FolderReport<S> | undefined, failure?: FixtureError): void {
    if (report) this.told = new Set(report.ignored.map((e) => e.file));
    if (report && !report.problems.count && !failure) return;
    this.state = { ...this.state, serving: 'empty' };
    this.refuse(report, failure, iso(wallClock()), 'the fixtures folder has problems: the emulator starts with an empty seed until they are fixed');
  }

  /** Starts watching: fs.watch, plus polling when asked for, or instead when fs.watch fails. */
  start(): void {
    if (this.closed || this.state.watching) return;
    this.state = { ...this.state, watching: true };
    if (this.options.events === false) {
      this.startPolling(this.options.pollMs || FALLBACK_POLL_MS);
      return;
    }
    try {
      // Not persistent: a watcher alone never keeps the process running.
      this.watcher = watch(this.options.dir, { persistent: false }, (_event, name) => {
        if (name === null || String(name).endsWith('.json')) this.changed();
      });
      this.watcher.on('error', (err) => {
        this.options.log.warn({ err, dir: this.options.dir }, 'watching the fixtures folder failed: polling it instead');
        this.watcher?.close();
        this.watcher = undefined;
        this.startPolling(this.options.pollMs || FALLBACK_POLL_MS);
      });
    } catch (err) {
      this.options.log.warn({ err, dir: this.options.dir }, 'the fixtures folder cannot be watched: polling it instead');
      this.startPolling(this.options.pollMs || FALLBACK_POLL_MS);
      return;
    }
    if (this.options.pollMs) this.startPolling(this.options.pollMs);
  }

  private startPolling(ms: number): void {
    if (this.poller || this.closed) return;
    void this.fingerprint().then((first) => {
      this.signature = first;
    });
    let busy = false;
    this.poller = setInterval(() => {
      if (busy) return;
      busy = true;
      void this.fingerprint()
        .then((now) => {
          if (now !== this.signature) {
            this.signature = now;
            this.changed();
          }
        })
        .finally(() => (busy = false));
    }, ms);
    this.poller.unref();
  }

  /** The names, sizes and modification times of the folder's *.json files, as one string. */
  private async fingerprint(): Promise<string> {
    try {
      const names = (await readdir(this.options.dir)).filter((n) => n.endsWith('.json')).sort();
      const parts = await Promise.all(
        names.map(async (n) => {
          try {
            // stat never opens the file: a FIFO is looked at, not waited on.
            const s = await stat(join(this.options.dir, n));
            return `${n}:${s.size}:${s.mtimeMs}`;
          } catch {
            return `${n}:gone`;
          }
        }),
      );
      return parts.join('\n');
    } catch (err) {
      return `unreadable:${(err as Error).message}`;
    }
  }

  /** A change was seen: the folder is read once it has been quiet for the debounce time. */
  private changed(): void {
    if (this.closed) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.pending = this.reload();
    }, this.options.debounceMs ?? RELOAD_DEBOUNCE_MS);
    this.debounce.unref();
  }

  /** Each entry that is not read, told once in the log (again only after it was gone). */
  private tellIgnored(report: FolderReport<S>): void {
    const now = new Set<string>();
    for (const entry of report.ignored) {
      now.add(entry.file);
      if (!this.told.has(entry.file)) this.options.log.warn({ file: entry.file, kind: entry.kind }, ignoredText(entry));
    }
    this.told = now;
  }

  /** The folder cannot be loaded: the seed in use is kept, the problems shown, logged and told. */
  private refuse(report: FolderReport<S> | undefined, failure: FixtureError | undefined, checkedAt: string, what: string): void {
    const { dir } = this.options;
    const problems = report && !failure ? report.problems.listed.map((p) => seedProblem(p, dir)) : [folderProblem(failure!.message)];
    const unlisted = report && !failure ? report.problems.unlisted : 0;
    this.state = { ...this.state, status: 'error', problems, unlisted, checkedAt };
    this.options.log.warn({ dir, problems: problems.map((p) => p.text), ...(unlisted ? { unlisted } : {}) }, what);
    this.options.refused?.();
  }

  /**
   * Reads the folder now; a change seen meanwhile reads it again after. A read that takes
   * longer than its deadline is given up (its signal aborted) and the folder's problem says
   * so; until it has ended, no other read starts, and the status says the watch is stopped.
   */
  async reload(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.pending;
    }
    if (this.abandoned) {
      // Reading again now would stack a second stuck read on the first (each may hold a thread).
      this.again = true;
      return;
    }
    this.reading = true;
    const { dir, timeoutMs } = this.options;
    try {
      const controller = new AbortController();
      const attempt = this.options.inspect(controller.signal).then(
        (report) => ({ report }),
        (err: unknown) => ({ err }),
      );
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(resolve, timeoutMs, 'late');
        timer.unref();
      });
      const outcome = await Promise.race([attempt, late]);
      clearTimeout(timer);
      if (this.closed) return;
      const checkedAt = iso(wallClock());
      if (outcome === 'late') {
        controller.abort();
        this.abandon(attempt, checkedAt);
        this.refuse(
          undefined,
          new FixtureError(`reading the fixtures folder took longer than ${timeoutMs} ms (WATCH_RELOAD_TIMEOUT_MS): given up; the last good seed is kept`),
          checkedAt,
          'fixtures not reloaded: reading the folder took too long; the last good seed is kept',
        );
        return;
      }
      if ('err' in outcome) {
        if (!(outcome.err instanceof FixtureError)) throw outcome.err;
        this.refuse(undefined, outcome.err, checkedAt, 'fixtures not reloaded: the folder cannot be read; the last good seed is kept');
        return;
      }
      const { report } = outcome;
      this.tellIgnored(report);
      if (!report.problems.count && report.state) {
        await this.options.apply(report.state, report);
        if (this.closed) return;
        this.state = { status: 'ok', problems: [], unlisted: 0, serving: 'fixtures', loadedAt: checkedAt, checkedAt, watching: this.state.watching };
        this.options.log.info({ dir, files: report.files.length, warnings: report.warnings }, 'fixtures reloaded: the default world is reset to them');
        return;
      }
      this.refuse(report, undefined, checkedAt, 'fixtures not reloaded: the folder has problems; the last good seed is kept');
    } catch (err) {
      // Anything else (a bug) must not end the process from a timer: it is logged and shown.
      if (this.closed) return;
      const message = `reading the fixtures failed: ${(err as Error).message}`;
      this.state = { ...this.state, status: 'error', problems: [folderProblem(message)], unlisted: 0, checkedAt: iso(wallClock()) };
      this.options.log.warn({ err }, message);
    } finally {
      this.reading = false;
      if (this.again && !this.closed && !this.abandoned) {
        this.again = false;
        this.changed();
      }
    }
  }

  /** A read given up: the watch waits for it to end (marked stopped while a change waits), then reads again if anything changed. */
  private abandon(attempt: Promise<unknown>, since: string): void {
    const stopped = `a read of the fixtures folder given up at ${since} has not ended (a file system that does not answer?): changes are not read until it does`;
    const abandoned = attempt.then(() => {
      if (this.abandoned !== abandoned) return;
      this.abandoned = undefined;
      if (this.closed) return;
      if (this.state.stopped !== undefined) {
        const { stopped: _stopped, ...rest } = this.state;
        this.state = rest;
        this.options.log.info({ dir: this.options.dir }, 'the fixtures read given up has ended: the watch reads changes again');
      }
      if (this.again) {
        this.again = false;
        this.changed();
      }
    });
    this.abandoned = abandoned;
    // Marked stopped only once it is clear the read has not ended by itself soon after the abort.
    const mark = setTimeout(() => {
      if (this.abandoned !== abandoned || this.closed) return;
      this.state = { ...this.state, stopped };
      this.options.log.warn({ dir: this.options.dir }, stopped);
    }, STOPPED_AFTER_MS);
    mark.unref();
  }

  /** Stops watching and polling; a reload under way is let finish, and changes nothing. */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.poller);
    clearTimeout(this.debounce);
    this.state = { ...this.state, watching: false };
    await this.pending.catch(() => undefined);
  }
}

/** A clock of the fixtures (an export's), as the notes below compare and name it. */
interface FixtureClock {
  now: number;
  scale: number;
  frozen: boolean;
  loadedAt?: number;
}

/** Whether two fixture clocks are the same (both absent too). */
export function sameClock(a: FixtureClock | undefined, b: FixtureClock | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.now === b.now && a.scale === b.scale && a.frozen === b.frozen && a.loadedAt === b.loadedAt;
}

/**
 * What becomes of the clock a fixture file gives (an export's), as `check` and the start log
 * say it: SEED_CLOCK real (the default) runs the world on real time, keep starts from it.
 */
export function clockNote(file: string, clock: FixtureClock, mode: 'real' | 'keep'): string {
  const at = new Date(clock.now).toISOString();
  return mode === 'keep'
    ? `${file} gives a clock (${at}): the clock starts from it (--seed-clock keep); a reset goes back to it, a reload (--watch) only when the fixtures' clock changed`
    : `${file} gives a clock (${at}); ignored: the world runs on real time, the fixtures' emulated times moved to keep their ages; use --seed-clock keep to start from it`;
}
