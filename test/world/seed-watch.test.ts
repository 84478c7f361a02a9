import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
    await within(2000, async () => (await health(app!)).seed.status === 'error');
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
    await within(2000, () => userNames(app!).includes('c@example.com'));
    expect((await health(app)).seed).toMatchObject({ status: 'ok', problems: [], unlisted: 0 });
  });

  it('starts new sandboxes from the reloaded seed; sandboxes made before keep theirs', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await watchedApp({ sandboxes: 'explicit' });
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/before' })).statusCode).toBe(201);

    await writeFile(join(dir, 'users.json'), usersFile('b'));
    await within(2000, () => userNames(app!).includes('b@example.com'));
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
    const watcher = new SeedWatch<State>({ dir, inspect: () => inspectFixtures(dir), apply: (s) => (seed = s), log, pollMs: 50, events: false });
    watcher.start();
    try {
      // Let the first fingerprint be taken, then change the file (its size changes).
      await new Promise((resolve) => setTimeout(resolve, 100));
      await writeFile(join(dir, 'users.json'), usersFile('a', 'polled'));
      await within(2000, () => seed !== undefined);
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
      await within(2000, () => userNames(app!).includes('b@example.com'));
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
