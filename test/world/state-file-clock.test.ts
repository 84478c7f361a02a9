import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { EmulatorClock, ManualClock, type ControllableClock } from '../../src/core/clock.js';
import { emptyState, parseState, type State } from '../../src/state.js';
import { AUTH, T0 } from '../helpers/app.js';
import { watchResponses } from '../helpers/conformance.js';
import { environment, rsdb } from '../provisioning/seed.js';
import { CLOUD, INSTANCES, seed as compositionSeed } from '../compositions/seed.js';

/**
 * A restart from STATE_FILE continues every world where it stopped: the file holds each
 * world's clock, and the real time of the write, so that a world on a running clock runs on
 * by the time the process was down (as if it had kept running) and a frozen one resumes
 * exactly where it was (docs/control-api.md, "Persistence").
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const MINUTE = 60_000;

let dir: string;
let file: string;
const apps: FastifyInstance[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-state-clock-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  await rm(dir, { recursive: true, force: true });
});

/** Real time as the tests decide it: it moves only when a test moves it (the time the process is down). */
let real = T0;
const source = () => real;
/** A clock on real time (scale 1, running), read from `source`. */
const runningClock = () => new EmulatorClock({ start: real, source });

/** The seed: a grid started an hour before the load (CHECKED), an RSDB, an environment and a composition. */
const fixtures = (): State => parseState({ ...emptyState(), ...compositionSeed(), rsdbs: [rsdb()], environments: [environment()] }, 'test seed');

async function start(clock: ControllableClock, config: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildApp({ clock, fixtures: fixtures(), config: { stateFlushIntervalMs: 0, sandboxIdleTimeoutMs: 0, ...config } });
  watchResponses(app);
  apps.push(app);
  return app;
}

async function stop(app: FastifyInstance): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.close();
}

const get = async (app: FastifyInstance, url: string) => {
  const res = await app.inject({ url, headers: AUTH });
  expect(res.statusCode, url).toBe(200);
  return res.json();
};

/** Starts the RSDB, the environment and a play of the composition. Answers the play's instance id. */
async function startEverything(app: FastifyInstance, prefix = ''): Promise<string> {
  for (const path of ['rsdb/201', 'environment/301']) {
    const res = await app.inject({ method: 'POST', url: `${prefix}${CLOUD}/${path}/action`, headers: AUTH, payload: { action: 'start' } });
    expect(res.statusCode, path).toBe(202);
  }
  const play = await app.inject({ method: 'POST', url: `${prefix}${INSTANCES}?command=play`, headers: AUTH, payload: { compositionName: '/Tests/Unit Load' } });
  expect(play.statusCode).toBe(200);
  return play.json().instanceID;
}

/** What a user sees of every lifecycle, and of the grid's repository object. */
async function everything(app: FastifyInstance, instance: string, prefix = '') {
  return {
    grid: await get(app, `${prefix}${CLOUD}/grid/101`),
    gridObject: (await get(app, `${prefix}${REPO}/Objects/grid?name=Test%20Grid`)).objects,
    rsdb: await get(app, `${prefix}${CLOUD}/rsdb/201`),
    environment: await get(app, `${prefix}${CLOUD}/environment/301`),
    instance: await get(app, `${prefix}${INSTANCES}/${encodeURIComponent(instance)}`),
    lifecycles: await get(app, `${prefix}/_emulator/lifecycles`),
  };
}

describe('a restart from STATE_FILE', () => {
  it('on a running clock: every lifecycle goes on as if the process had kept running through the down time', async () => {
    real = T0;
    // Two processes doing the same: one restarted from the file, one that keeps running.
    const clock = runningClock();
    const app = await start(clock, { stateFile: file });
    const keptClock = runningClock();
    const kept = await start(keptClock);
    const instance = await startEverything(app);
    expect(await startEverything(kept)).toBe(instance);
    // Emulated time ahead of real time: the RSDB half allocated, the environment and the play under way.
    clock.advance(10_000);
    keptClock.advance(10_000);
    real += 5_000;
    const before = await everything(app, instance);
    expect(before.grid.state).toBe('CHECKED');
    expect(before.rsdb.state).toBe('ALLOCATING_DATABASE');
    expect(await everything(kept, instance)).toEqual(before);
    const stoppedAt = clock.now();
    await stop(app);

    // Down for 10 s: the RSDB's allocation ends meanwhile, the play goes on.
    real += 10_000;
    const restarted = await start(runningClock(), { stateFile: file });
    expect(restarted.world.clock.now()).toBe(stoppedAt + 10_000);
    const after = await everything(restarted, instance);
    expect(after).toEqual(await everything(kept, instance));
    expect(after.rsdb.state).not.toBe('ALLOCATING_DATABASE');
    // The grid CHECKED before the restart is CHECKED after it, its object modified when it was.
    expect(after.grid.state).toBe('CHECKED');
    expect(after.gridObject).toEqual(before.gridObject);
  });

  it('on a frozen clock: resumes exactly where it stopped, however long it was down', async () => {
    real = T0;
    const clock = new ManualClock(T0, source);
    const app = await start(clock, { stateFile: file });
    const instance = await startEverything(app);
    clock.advance(3_000);
    const before = await everything(app, instance);
    const stoppedAt = clock.now();
    await stop(app);

    real += 24 * 60 * MINUTE;
    const restarted = await start(new ManualClock(real, source), { stateFile: file });
    expect(restarted.world.clock.status()).toMatchObject({ now: stoppedAt, frozen: true });
    expect(await everything(restarted, instance)).toEqual(before);
    // The RSDB as far from the end of its allocation as it was: 17 of its 20 s are left.
    restarted.world.clock.advance(16_999);
    expect((await get(restarted, `${CLOUD}/rsdb/201`)).state).toBe('ALLOCATING_DATABASE');
    restarted.world.clock.advance(1);
    expect((await get(restarted, `${CLOUD}/rsdb/201`)).state).not.toBe('ALLOCATING_DATABASE');
  });

  it('keeps the clock settings: a sped-up world runs on at its scale, each sandbox on its own clock', async () => {
    real = T0;
    const clock = runningClock();
    const app = await start(clock, { stateFile: file });
    expect((await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 10 } })).statusCode).toBe(200);
    // A sandbox changed and moved ahead, and one nobody changed (kept as a reference to the fixtures).
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/changed' })).statusCode).toBe(201);
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/untouched' })).statusCode).toBe(201);
    expect((await app.inject({ method: 'POST', url: '/sandbox/changed/_emulator/clock/advance', payload: { ms: 5 * MINUTE } })).statusCode).toBe(200);
    const instance = await startEverything(app, '/sandbox/changed');
    real += 1_000;
    const clocks = async (a: FastifyInstance) => ({
      main: a.world.clock.now(),
      changed: a.sandboxes.find('changed')!.clock.now(),
      untouched: a.sandboxes.find('untouched')!.clock.now(),
    });
    const before = await clocks(app);
    const beforeChanged = await everything(app, instance, '/sandbox/changed');
    const beforeUntouched = await get(app, `/sandbox/untouched${REPO}/Objects/grid?name=Test%20Grid`);
    await stop(app);
    const written = JSON.parse(await readFile(file, 'utf8'));
    expect(written.clock).toEqual({ now: before.main, scale: 10, frozen: false, loadedAt: T0, realAt: real });
    expect(written.sandboxes.changed.state.clock).toMatchObject({ now: before.changed, realAt: real });
    expect(written.sandboxes.untouched).toMatchObject({ seed: 'fixtures', clock: { now: before.untouched, loadedAt: T0, realAt: real } });

    real += 2_000;
    const restarted = await start(runningClock(), { stateFile: file });
    // The default world ran on at 10 times real speed; each sandbox at its own (the speed the process started with).
    expect(await clocks(restarted)).toEqual({ main: before.main + 20_000, changed: before.changed + 2_000, untouched: before.untouched + 2_000 });
    expect(restarted.world.clock.status().scale).toBe(10);
    // The changed sandbox's lifecycles went on by the 2 s it was down.
    const after = await everything(restarted, instance, '/sandbox/changed');
    expect(after.grid.state).toBe('CHECKED');
    expect(after.grid.journalEntries).toEqual(beforeChanged.grid.journalEntries);
    expect(after.gridObject).toEqual(beforeChanged.gridObject);
    expect(after.rsdb.state).toBe(beforeChanged.rsdb.state);
    // The untouched one is the fixtures as they were loaded when it was made, not at the restart.
    expect(await get(restarted, `/sandbox/untouched${REPO}/Objects/grid?name=Test%20Grid`)).toEqual(beforeUntouched);
  });

  it('starts a new sandbox from the state it loaded at the default world\'s time, not at the time of the write', async () => {
    real = T0;
    const clock = runningClock();
    const app = await start(clock, { stateFile: file });
    expect((await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: MINUTE } })).statusCode).toBe(200);
    await stop(app);
    real += 1_000;
    const restarted = await start(runningClock(), { stateFile: file });
    const now = restarted.world.clock.now();
    expect(now).toBe(T0 + MINUTE + 1_000);
    expect((await restarted.inject({ method: 'PUT', url: '/_emulator/sandboxes/later' })).statusCode).toBe(201);
    expect(restarted.sandboxes.find('later')!.clock.now()).toBe(now);
  });

  it('refuses a reference whose clock is not a clock, naming its JSON path', async () => {
    await writeFile(file, JSON.stringify({ ...emptyState(), sandboxes: { w1: { createdAt: 1, lastUsedAt: 2, seed: 'fixtures', clock: { now: -1 } } } }));
    await expect(start(new ManualClock(T0), { stateFile: file })).rejects.toThrow(`state file ${file}: $.sandboxes.w1.clock: expected {now, scale, frozen, loadedAt?, realAt?}`);
  });
});
