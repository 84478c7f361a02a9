import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { wallClock } from '../core/clock.js';
import { FixtureError, formatProblem, jsonPath, type Problem } from '../core/fixtures.js';
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
  /** When the seed in use was loaded, real time (ISO 8601). */
  loadedAt: string;
  /** When the folder was last read, real time. */
  checkedAt: string;
  /** Whether changes to the folder are watched (WATCH). */
  watching: boolean;
}

/** Quiet time after the last change before the folder is read (an editor saves in several steps). */
export const RELOAD_DEBOUNCE_MS = 200;
/** Polling interval when fs.watch cannot watch the folder and WATCH_POLL_MS does not say. */
export const FALLBACK_POLL_MS = 1000;

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SeedWatchOptions<S> {
  dir: string;
  /** Reads the folder (STATE.inspect, with the time it would load at). */
  inspect: () => Promise<FolderReport<S>>;
  /** Makes a valid folder's state the seed. */
  apply: (state: S) => void;
  /** Told when a change left the folder with problems (the last good seed is kept). */
  refused?: () => void;
  log: Log;
  /** Also poll the folder this often (ms); 0: events only. */
  pollMs?: number;
  /** Whether to listen to fs.watch events (default true; false: polling only, as where none arrive). */
  events?: boolean;
  debounceMs?: number;
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

export class SeedWatch<S> {
  private state: SeedStatus;
  private watcher: FSWatcher | undefined;
  private poller: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reading = false;
  private again = false;
  private closed = false;
  private signature = '';
  /** Settles when the reload under way (if any) is done: for tests and close. */
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly options: SeedWatchOptions<S>) {
    const now = iso(wallClock());
    this.state = { status: 'ok', problems: [], unlisted: 0, loadedAt: now, checkedAt: now, watching: false };
  }

  status(): SeedStatus {
    return this.state;
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

  /** Reads the folder now; a change seen meanwhile reads it again after. */
  async reload(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.pending;
    }
    this.reading = true;
    try {
      let report: FolderReport<S> | undefined;
      let failure: FixtureError | undefined;
      try {
        report = await this.options.inspect();
      } catch (err) {
        if (!(err instanceof FixtureError)) throw err;
        failure = err;
      }
      if (this.closed) return;
      const checkedAt = iso(wallClock());
      const { dir } = this.options;
      if (report && !report.problems.count && report.state) {
        this.options.apply(report.state);
        this.state = { status: 'ok', problems: [], unlisted: 0, loadedAt: checkedAt, checkedAt, watching: this.state.watching };
        this.options.log.info({ dir, files: report.files.length, warnings: report.warnings }, 'fixtures reloaded: the default world is reset to them');
        return;
      }
      const problems = report ? report.problems.listed.map((p) => seedProblem(p, dir)) : [{ path: '$', message: failure!.message, text: failure!.message }];
      const unlisted = report ? report.problems.unlisted : 0;
      this.state = { ...this.state, status: 'error', problems, unlisted, checkedAt };
      this.options.log.warn(
        { dir, problems: problems.map((p) => p.text), ...(unlisted ? { unlisted } : {}) },
        'fixtures not reloaded: the folder has problems; the last good seed is kept',
      );
      this.options.refused?.();
    } catch (err) {
      // Anything else (a bug) must not end the process from a timer: it is logged and shown.
      if (this.closed) return;
      const message = `reading the fixtures failed: ${(err as Error).message}`;
      this.state = { ...this.state, status: 'error', problems: [{ path: '$', message, text: message }], unlisted: 0, checkedAt: iso(wallClock()) };
      this.options.log.warn({ err }, message);
    } finally {
      this.reading = false;
      if (this.again && !this.closed) {
        this.again = false;
        this.changed();
      }
    }
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
