import { execFileSync } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { inspectFixtures, loadFixtures, type State } from '../../src/state.js';
import { SeedWatch } from '../../src/world/seed-watch.js';
import { watchResponses } from '../helpers/conformance.js';
import { listen, openSse } from '../helpers/sse.js';

/**
 * Live reload of the fixtures (WATCH) on the real file system: each test writes files into a
 * folder of its own and waits, bounded, for the emulator to see them.
 */

let dir: string;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

const user = (name: string) => ({ userName: `${name}@example.com`, password: 'x' });
const usersFile = (...names: string[]) => JSON.stringify({ users: names.map(user) }, null, 2);

/** Polls `check` every 10 ms until it holds, for at most `ms`: the time it took, or a failure. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function watchedApp(config: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const built = await buildApp({
    config: { fixturesDir: dir, watch: true, ...config },
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    fixtures: await loadFixtures(dir),
    fixturesFrom: dir,
  });
  watchResponses(built);
  return built;
}

const userNames = (a: FastifyInstance) => a.world.exportState().users.map((u) => u.userName);
const health = async (a: FastifyInstance) => (await a.inject({ method: 'GET', url: '/_emulator/health' })).json();

describe('WATCH: live reload of the fixtures', () => {
  it('reloads a changed file into the default world within a second, without a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp();
    expect(userNames(app)).toEqual(['a@example.com']);
    expect((await health(app)).seed).toMatchObject({ status: 'ok', problems: [], watching: true });

    await writeFile(join(dir, 'users.json'), usersFile('a', 'b'));
    const took = await within(1000, () => userNames(app!).includes('b@example.com'));
    expect(took).toBeLessThan(1000);
    // A reset goes back to the reloaded seed, not the one the process started with.
    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect(userNames(app)).toEqual(['a@example.com', 'b@example.com']);
  });

  it('tells the event stream of the default world that its seed was reloaded, or that an edit was refused', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp();
    const stream = await openSse(`${await listen(app)}/_emulator/events?types=world.reloaded,world.reset,seed.refused`);
    try {
      await writeFile(join(dir, 'users.json'), usersFile('a', 'b'));
      const event = await stream.next(2000);
      expect(event.event).toBe('world.reloaded');
      expect(userNames(app)).toContain('b@example.com');
      // A broken edit is told too; the problems are in the health check.
      await writeFile(join(dir, 'users.json'), '{"users": [}');
      expect((await stream.next(2000)).event).toBe('seed.refused');
      expect((await health(app)).seed.status).toBe('error');
    } finally {
      stream.close();
    }
  });

  it('keeps the last good seed on a broken edit, shows the problems in health until the folder is fixed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp();

    await writeFile(join(dir, 'users.json'), '{\n  "users": [\n    { "userName": "b@example.com", "password": "x" },\n  ]\n}\n');
    await within(10_000, async () => (await health(app!)).seed.status === 'error');
    const { seed, status } = await health(app);
    // The emulator itself is fine: it serves the last good seed.
    expect(status).toBe('ok');
    expect(seed.problems).toEqual([
      {
        file: join(dir, 'users.json'),
        line: 3,
        column: 53,
        path: '$',
        message: "not valid JSON: trailing comma: nothing follows it before ']'",
        text: `${join(dir, 'users.json')}:3:53: $: not valid JSON: trailing comma: nothing follows it before ']'`,
      },
    ]);
    expect(userNames(app)).toEqual(['a@example.com']);

    await writeFile(join(dir, 'users.json'), usersFile('c'));
    await within(10_000, () => userNames(app!).includes('c@example.com'));
    expect((await health(app)).seed).toMatchObject({ status: 'ok', problems: [], unlisted: 0 });
  });

  it('starts new sandboxes from the reloaded seed; sandboxes made before keep theirs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp({ sandboxes: 'explicit' });
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/before' })).statusCode).toBe(201);

    await writeFile(join(dir, 'users.json'), usersFile('b'));
    await within(10_000, () => userNames(app!).includes('b@example.com'));
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/after' })).statusCode).toBe(201);
    const usersOf = async (name: string) =>
      ((await app!.inject({ method: 'GET', url: `/sandbox/${name}/_emulator/state` })).json() as State).users.map((u) => u.userName);
    expect(await usersOf('before')).toEqual(['a@example.com']);
    expect(await usersOf('after')).toEqual(['b@example.com']);
  });

  it('watches nothing without WATCH, and reports the seed as loaded', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp({ watch: false });
    expect((await health(app)).seed).toMatchObject({ status: 'ok', watching: false });
    await writeFile(join(dir, 'users.json'), usersFile('b'));
    // Longer than a reload takes when watching (see above); nothing may change.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(userNames(app)).toEqual(['a@example.com']);
  });

  it('stops on close: a change after it reloads nothing', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp();
    const world = app.world;
    await app.close();
    app = undefined;
    await writeFile(join(dir, 'users.json'), usersFile('b'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(world.exportState().users.map((u) => u.userName)).toEqual(['a@example.com']);
  });
});

describe('polling (WATCH_POLL_MS), for folders that raise no file events', () => {
  it('finds a change by polling alone', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-poll-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    let seed: State | undefined;
    const log = { info: () => undefined, warn: () => undefined };
    const watcher = new SeedWatch<State>({
      dir,
      inspect: () => inspectFixtures(dir),
      apply: (s) => {
        seed = s;
      },
      log,
      pollMs: 50,
      events: false,
      timeoutMs: 60_000,
    });
    watcher.start();
    try {
      // Let the first fingerprint be taken, then change the file (its size changes).
      await new Promise((resolve) => setTimeout(resolve, 100));
      await writeFile(join(dir, 'users.json'), usersFile('a', 'polled'));
      await within(10_000, () => seed !== undefined);
      expect(seed!.users.map((u) => u.userName)).toEqual(['a@example.com', 'polled@example.com']);
      expect(watcher.status()).toMatchObject({ status: 'ok', watching: true });
    } finally {
      await watcher.close();
    }
    expect(watcher.status().watching).toBe(false);
  });
});

describe('WATCH with a state file', () => {
  it('starts new sandboxes from the reloaded seed, not from the state the file held at start', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    const stateDir = await mkdtemp(join(tmpdir(), 'watch-state-'));
    try {
      await writeFile(join(dir, 'users.json'), usersFile('a'));
      await writeFile(join(stateDir, 'state.json'), JSON.stringify({ users: [user('from-file')] }));
      app = await watchedApp({ sandboxes: 'explicit', stateFile: join(stateDir, 'state.json'), stateFlushIntervalMs: 0 });
      expect(userNames(app)).toEqual(['from-file@example.com']);
      await writeFile(join(dir, 'users.json'), usersFile('b'));
      await within(10_000, () => userNames(app!).includes('b@example.com'));
      expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/after' })).statusCode).toBe(201);
      const state = (await app.inject({ method: 'GET', url: '/sandbox/after/_emulator/state' })).json() as State;
      expect(state.users.map((u) => u.userName)).toEqual(['b@example.com']);
    } finally {
      await app?.close();
      app = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

/** An app watching `dir` whose log lines (warn and above, and info) are kept. */
async function loggedWatchedApp(config: Record<string, unknown> = {}) {
  const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const built = await buildApp({
    config: { fixturesDir: dir, watch: true, ...config },
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    fixtures: await loadFixtures(dir),
    fixturesFrom: dir,
    logger: { level: 'info', stream },
  });
  watchResponses(built);
  return { app: built, lines };
}

/** Makes a FIFO; `unblock` lets a read stuck opening it (without O_NONBLOCK) end, so that no thread is left waiting. */
function makeFifo(path: string): { unblock: () => void } {
  execFileSync('mkfifo', [path]);
  return {
    unblock: () => {
      try {
        // Succeeds only while a reader has it open: that reader then reads an end of file.
        closeSync(openSync(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK));
      } catch {
        // Nobody is reading it.
      }
    },
  };
}

describe('entries that are not regular files', () => {
  it('a FIFO named *.json is not read: the watch goes on reloading, and the log says so once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-fifo-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    const logged = await loggedWatchedApp();
    app = logged.app;
    const fifo = makeFifo(join(dir, 'pipe.json'));
    try {
      await writeFile(join(dir, 'users.json'), usersFile('a', 'b'));
      await within(10_000, () => userNames(app!).includes('b@example.com'));
      // And again: the first reload ended, so the next one runs.
      await writeFile(join(dir, 'users.json'), usersFile('c'));
      await within(10_000, () => userNames(app!).includes('c@example.com'));
      expect((await health(app)).seed).toMatchObject({ status: 'ok', problems: [], watching: true });
      const told = logged.lines.filter((l) => l.msg === `${join(dir, 'pipe.json')}: not a regular file (a FIFO): ignored`);
      expect(told).toHaveLength(1);
      expect(told[0].level).toBe(40);
    } finally {
      fifo.unblock();
    }
  });

  it('check and the loader skip a FIFO or a folder named *.json, with a warning each', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-fifo-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    await mkdir(join(dir, 'folder.json'));
    const fifo = makeFifo(join(dir, 'pipe.json'));
    try {
      const report = await inspectFixtures(dir);
      expect(report.problems.count).toBe(0);
      expect(report.state!.users.map((u) => u.userName)).toEqual(['a@example.com']);
      expect(report.ignored).toEqual([
        { file: join(dir, 'folder.json'), kind: 'a folder' },
        { file: join(dir, 'pipe.json'), kind: 'a FIFO' },
      ]);
    } finally {
      fifo.unblock();
    }
  });
});

describe('the deadline of a reload (WATCH_RELOAD_TIMEOUT_MS)', () => {
  const log = { info: () => undefined, warn: () => undefined };
  const report = async (...names: string[]) => {
    await writeFile(join(dir, 'users.json'), usersFile(...names));
    return inspectFixtures(dir);
  };

  it('gives up a read that takes too long, shows it, and the next change is read', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-deadline-'));
    // Read ahead: under load a real read could pass this test's short deadline too.
    const after = await report('after');
    let calls = 0;
    let applied: State | undefined;
    let aborted = false;
    const watcher = new SeedWatch<State>({
      dir,
      inspect: (signal) => {
        calls++;
        if (calls > 1) return Promise.resolve(after);
        // The first read never ends by itself; aborted, it does.
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        );
      },
      apply: (s) => {
        applied = s;
      },
      log,
      timeoutMs: 100,
    });
    try {
      await watcher.reload();
      expect(aborted).toBe(true);
      expect(watcher.status()).toMatchObject({ status: 'error', problems: [{ path: '$', message: expect.stringContaining('took longer than 100 ms') }] });
      expect(watcher.status().stopped).toBeUndefined();
      // Asked at once, it is read as soon as the given-up read has ended (after the debounce).
      await watcher.reload();
      await within(10_000, () => applied !== undefined);
      expect(applied!.users.map((u) => u.userName)).toEqual(['after@example.com']);
      expect(watcher.status()).toMatchObject({ status: 'ok', problems: [] });
    } finally {
      await watcher.close();
    }
  });

  it('a read that does not end even when given up stops the watch, which health reports (503, degraded) until it ends', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-deadline-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    // Long enough for a real read of one small file on a busy machine, which must not be given up.
    // (A read given up is not tried again until something changes: the read of 'c' below must fit.)
    app = await watchedApp({ watchReloadTimeoutMs: 5000 });
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    // The folder's read, as a file system that does not answer makes it: deaf to the abort.
    const options = (app.seedWatch as unknown as { options: { inspect: (signal: AbortSignal) => Promise<unknown> } }).options;
    const real = options.inspect;
    let calls = 0;
    options.inspect = async (signal) => {
      if (++calls === 1) await stuck;
      return real(signal);
    };
    await writeFile(join(dir, 'users.json'), usersFile('b'));
    await within(20_000, async () => (await health(app!)).status === 'degraded');
    const answer = await app.inject({ method: 'GET', url: '/_emulator/health' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json().seed.stopped).toMatch(/has not ended/);
    // A change meanwhile waits for the stuck read; once it ends, the folder is read again.
    await writeFile(join(dir, 'users.json'), usersFile('c'));
    release();
    await within(10_000, () => userNames(app!).includes('c@example.com'));
    const after = await app.inject({ method: 'GET', url: '/_emulator/health' });
    expect(after.statusCode).toBe(200);
    expect(after.json()).toMatchObject({ status: 'ok', seed: { status: 'ok' } });
    expect(after.json().seed.stopped).toBeUndefined();
    expect(calls).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe("a fixture clock (an export's) and reloads", () => {
  const T0 = Date.UTC(2026, 4, 1, 10);
  const exportFile = (clockNow: number, ...names: string[]) =>
    JSON.stringify({ users: names.map(user), clock: { now: clockNow, scale: 1, frozen: true, loadedAt: clockNow } }, null, 2);

  async function exportApp(seedClock: 'keep' | 'real') {
    const clock = new ManualClock(Date.UTC(2026, 10, 1));
    const built = await buildApp({
      config: { fixturesDir: dir, watch: true, seedClock },
      clock,
      fixtures: await loadFixtures(dir),
      fixturesFrom: dir,
    });
    watchResponses(built);
    return { built, clock };
  }

  it('with --seed-clock keep: a reload leaves the clock where it is, unless the clock in the fixtures changed', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-clock-'));
    await writeFile(join(dir, 'export.json'), exportFile(T0, 'a'));
    const { built, clock } = await exportApp('keep');
    app = built;
    expect(clock.now()).toBe(T0);
    clock.advance(3_600_000);

    // An edit that leaves the clock as it was: the world is reloaded, the clock stays.
    await writeFile(join(dir, 'export.json'), exportFile(T0, 'a', 'b'));
    await within(10_000, () => userNames(app!).includes('b@example.com'));
    expect(clock.now()).toBe(T0 + 3_600_000);

    // A new export saved over it: its clock is the one asked for.
    const T1 = T0 + 86_400_000;
    await writeFile(join(dir, 'export.json'), exportFile(T1, 'c'));
    await within(10_000, () => userNames(app!).includes('c@example.com'));
    expect(clock.now()).toBe(T1);
  });

  it('by default (--seed-clock real): no reload moves the clock', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-clock-'));
    await writeFile(join(dir, 'export.json'), exportFile(T0, 'a'));
    const { built, clock } = await exportApp('real');
    app = built;
    const start = clock.now();
    await writeFile(join(dir, 'export.json'), exportFile(T0 + 86_400_000, 'b'));
    await within(10_000, () => userNames(app!).includes('b@example.com'));
    expect(clock.now()).toBe(start);
  });
});
