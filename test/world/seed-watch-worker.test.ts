import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { inspectFixtures, inspectFixturesOffThread, loadFixtures } from '../../src/state.js';
import { configureStateWorker, stateWorkersStarted } from '../../src/world/state-parser.js';
import { watchResponses } from '../helpers/conformance.js';

/**
 * A reload of a large fixtures folder (WATCH) is read in the state worker, as a large import
 * is. Here every folder goes there (the size from which it does is set to 0), the worker
 * running the TypeScript sources through a loader.
 */

beforeAll(() => {
  configureStateWorker({
    entry: {
      url: new URL('../../src/state-worker.ts', import.meta.url),
      execArgv: ['--import', new URL('../helpers/ts-worker-loader.mjs', import.meta.url).href],
    },
    minBytes: 0,
  });
});

let dir: string;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

const user = (name: string) => ({ userName: `${name}@example.com`, password: 'x' });
const usersFile = (...names: string[]) => JSON.stringify({ users: names.map(user) }, null, 2);

/** The report without its ProblemList's class, for comparing. */
const plain = (r: Awaited<ReturnType<typeof inspectFixtures>>) => ({
  ...r,
  problems: { listed: r.problems.listed, count: r.problems.count, unlisted: r.problems.unlisted },
});

describe('a fixtures folder read in the state worker', () => {
  it('reports what the calling thread reports: a valid folder, a broken one, a clock', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-worker-'));
    await writeFile(join(dir, 'users.json'), usersFile('a', 'b'));
    await writeFile(join(dir, 'export.json'), JSON.stringify({ domains: [{ id: 1, name: 'www.example.com' }], clock: { now: 1_795_338_000_000, scale: 1, frozen: false } }));
    const now = Date.UTC(2026, 0, 1);
    expect(plain(await inspectFixturesOffThread(dir, { now }))).toEqual(plain(await inspectFixtures(dir, { now })));
    await writeFile(join(dir, 'users.json'), '{\n  "users": [\n    { "userName": "a@example.com", "pasword": "x" },\n  ]\n}\n');
    await writeFile(join(dir, 'more.json'), '{ "grids": [{ "id": 1 }] }');
    const there = await inspectFixturesOffThread(dir, { now });
    expect(there.problems.count).toBeGreaterThan(0);
    expect(plain(there)).toEqual(plain(await inspectFixtures(dir, { now })));
    expect(there.problems.error(dir).message).toBe((await inspectFixtures(dir, { now })).problems.error(dir).message);
    // A worker running the TypeScript sources is slow to start on a busy machine.
  }, 60_000);

  it('stops the worker when the read is given up', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-worker-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    const controller = new AbortController();
    const read = inspectFixturesOffThread(dir, { signal: controller.signal });
    controller.abort();
    await expect(read).rejects.toThrow('the read was given up');
  });

  it('a reload of the watch goes through the worker', async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-worker-'));
    await writeFile(join(dir, 'users.json'), usersFile('a'));
    app = await buildApp({
      config: { fixturesDir: dir, watch: true },
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      fixtures: await loadFixtures(dir),
      fixturesFrom: dir,
    });
    watchResponses(app);
    const before = stateWorkersStarted();
    await writeFile(join(dir, 'users.json'), usersFile('a', 'b'));
    const start = performance.now();
    while (!app.world.exportState().users.some((u) => u.userName === 'b@example.com')) {
      if (performance.now() - start > 40_000) throw new Error('not reloaded within 40 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Started for this reload, or the one kept warm by the reads before, reused.
    expect(stateWorkersStarted()).toBeGreaterThanOrEqual(Math.min(before + 1, 1));
  }, 60_000);
});
