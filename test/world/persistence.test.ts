import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, authSeed, makeApp } from '../helpers/app.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { writeStateFile } from '../../src/world/persistence.js';
import { grid, seed } from '../provisioning/seed.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';

let dir: string;
let file: string;
let app: FastifyInstance | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-state-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

const readState = async () => JSON.parse(await readFile(file, 'utf8'));
const startGrid = (a: FastifyInstance) => a.inject({ method: 'POST', url: `${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } });

describe('STATE_FILE', () => {
  it('writes the state at start and on close, and a new process starts from it', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file, stateFlushIntervalMs: 0 }));
    expect((await readState()).grids[0].deployment).toBeUndefined();
    await startGrid(app);
    expect((await readState()).grids[0].deployment).toBeUndefined();
    await app.close();
    const written = await readState();
    expect(written.grids[0].deployment.steps[0].state).toBe('ALLOCATING');
    expect(written.cloudServers).toHaveLength(3);

    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file }));
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    expect(state.cloudServers).toHaveLength(3);
    expect((await app.inject({ url: '/_emulator/health' })).json().stateFile).toBe(file);
    // Reset goes back to the fixtures, not to the file.
    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    expect((await app.inject({ url: '/_emulator/state' })).json().cloudServers).toEqual([]);
  });

  it('writes at the configured interval', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file, stateFlushIntervalMs: 20 }));
    await startGrid(app);
    let written = await readState();
    for (let i = 0; i < 100 && !written.grids[0].deployment; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      written = await readState();
    }
    expect(written.grids[0].deployment).toBeDefined();
  });

  it('replaces the file by rename, leaving no temporary file behind', async () => {
    await writeFile(file, '{"old":true}');
    const before = await stat(file);
    await writeStateFile(file, '{"new":true}');
    const after = await stat(file);
    // A new inode: readers of the old file never saw it half rewritten.
    expect(after.ino).not.toBe(before.ino);
    expect(await readFile(file, 'utf8')).toBe('{"new":true}');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('removes at start the temporary files that writers killed mid-write left, and only those', async () => {
    // Above the largest pid any system hands out: a process that cannot be running.
    const dead = 2 ** 22 + 1;
    const stale = `state.json.tmp-${dead}`;
    // A live process (our parent) might be writing right now; our own pid's file is replaced by our next write.
    const live = `state.json.tmp-${process.ppid}`;
    const own = `state.json.tmp-${process.pid}`;
    const unrelated = ['other.json.tmp-12', 'state.json.tmp-x', `state.json.tmp-${dead}.bak`, 'state.json.tmp-'];
    await writeFile(file, JSON.stringify(authSeed()));
    for (const name of [stale, live, own, ...unrelated]) await writeFile(join(dir, name), '{"half":');
    ({ app } = await makeApp(authSeed(), { stateFile: file, stateFlushIntervalMs: 0 }));
    expect((await readdir(dir)).sort()).toEqual(['state.json', live, ...unrelated].sort());
    expect((await readState()).users).toHaveLength(1);
  });

  it('refuses to start from a corrupt file, names it, and leaves it untouched', async () => {
    await writeFile(file, '{"grids": [');
    const start = makeApp(authSeed(), { stateFile: file });
    await expect(start).rejects.toThrow(FixtureError);
    await expect(start).rejects.toThrow(`state file ${file}: $: not valid JSON`);
    expect(await readFile(file, 'utf8')).toBe('{"grids": [');
  });

  it('refuses a file that is not a valid state, naming the JSON path', async () => {
    await writeFile(file, JSON.stringify({ grids: [{ ...grid(), id: -1 }] }));
    await expect(makeApp(authSeed(), { stateFile: file })).rejects.toThrow(`state file ${file}: $.grids[0].id`);
  });

  it('refuses a place it cannot write to, and a file among the fixtures', async () => {
    await expect(makeApp(authSeed(), { stateFile: join(dir, 'missing', 'state.json') })).rejects.toThrow(/cannot be written/);
    await expect(makeApp(authSeed(), { stateFile: join(dir, 'state.json'), fixturesDir: dir })).rejects.toThrow(/inside the fixtures folder/);
    expect(await readdir(dir)).toEqual([]);
  });
});
