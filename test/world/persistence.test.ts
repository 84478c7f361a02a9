import { Writable } from 'node:stream';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, T0, authSeed, makeApp } from '../helpers/app.js';
import { watchResponses } from '../helpers/conformance.js';
import { buildApp } from '../../src/app.js';
import { ManualClock } from '../../src/core/clock.js';
import { emptyState, parseState } from '../../src/state.js';
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

describe('a state file that cannot be written', () => {
  /** An app on `file` whose log lines (JSON) are collected, with the interval off: the test decides when to write. */
  async function loggedApp() {
    const lines: Array<{ level: number; msg: string; err?: { code?: string } }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const made = await buildApp({
      config: { stateFile: file, stateFlushIntervalMs: 0 },
      clock: new ManualClock(T0),
      fixtures: parseState({ ...emptyState(), ...seed({ grids: [grid()] }) }, 'test seed'),
      logger: { level: 'info', stream },
    });
    watchResponses(made);
    const errors = () => lines.filter((l) => l.level === 50).map((l) => l.msg);
    const infos = () => lines.filter((l) => l.level === 30 && l.msg !== 'request').map((l) => l.msg);
    return { app: made, errors, infos };
  }
  const health = async (a: FastifyInstance) => {
    const res = await a.inject({ url: '/_emulator/health' });
    return { statusCode: res.statusCode, body: res.json() };
  };
  /** The path of the state file becomes a folder with something in it: renaming over it fails. */
  const blockFile = async () => {
    await rm(file, { force: true });
    await mkdir(join(file, 'in-the-way'), { recursive: true });
  };

  it('turns health to 503 degraded with the reason, logs once per kind of failure and once on recovery', async () => {
    const logged = await loggedApp();
    app = logged.app;
    const fine = await health(app);
    expect(fine.statusCode).toBe(200);
    expect(fine.body.status).toBe('ok');
    expect(fine.body.persistence).toEqual({ ok: true, lastWrittenAt: expect.any(String) });

    await blockFile();
    await startGrid(app);
    const writer = app.statePersistence!;
    for (let i = 0; i < 3; i++) await expect(writer.flush()).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    const failing = await health(app);
    expect(failing.statusCode).toBe(503);
    expect(failing.body.status).toBe('degraded');
    expect(failing.body.stateFile).toBe(file);
    expect(failing.body.persistence).toMatchObject({ ok: false, error: expect.stringContaining(`cannot write ${file}: `), failingSince: expect.any(String) });
    // The counts and the rest are still there for whoever reads them.
    expect(failing.body.counts.grids).toBe(1);
    expect(logged.errors()).toHaveLength(1);
    // No half-written copy is left beside the file.
    expect((await readdir(dir)).sort()).toEqual(['state.json']);

    // Another kind of failure is news: the folder itself is gone.
    await rm(dir, { recursive: true, force: true });
    await expect(writer.flush()).rejects.toThrow(/ENOENT/);
    await expect(writer.flush()).rejects.toThrow(/ENOENT/);
    expect(logged.errors()).toHaveLength(2);
    const stillFailing = (await health(app)).body.persistence;
    expect(stillFailing.error).toMatch(/ENOENT/);
    // Since the first failure, not the latest.
    expect(stillFailing.failingSince).toBe(failing.body.persistence.failingSince);

    await mkdir(dir);
    await writer.flush();
    const back = await health(app);
    expect(back.statusCode).toBe(200);
    expect(back.body.status).toBe('ok');
    expect(back.body.persistence.ok).toBe(true);
    expect(logged.infos()).toContain('the state file is written again');
    expect((await readState()).grids[0].deployment).toBeDefined();
  });

  it('retries at the interval, so health recovers by itself once the file can be written again', async () => {
    ({ app } = await makeApp(seed({ grids: [grid()] }), { stateFile: file, stateFlushIntervalMs: 20 }));
    await blockFile();
    await startGrid(app);
    let res = await app.inject({ url: '/_emulator/health' });
    for (let i = 0; i < 250 && res.statusCode === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      res = await app.inject({ url: '/_emulator/health' });
    }
    expect(res.statusCode).toBe(503);
    await rm(file, { recursive: true });
    for (let i = 0; i < 250 && res.statusCode === 503; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      res = await app.inject({ url: '/_emulator/health' });
    }
    expect(res.statusCode).toBe(200);
    expect((await readState()).grids[0].deployment).toBeDefined();
  });

  it('logs a failed final write on close, and keeps no temporary file', async () => {
    const logged = await loggedApp();
    app = logged.app;
    await startGrid(app);
    await blockFile();
    await app.close();
    app = undefined;
    // One line, saying what is lost.
    expect(logged.errors()).toEqual(['could not write the state file on close: the changes since the last write are lost']);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('is reported without a health field when STATE_FILE is not set', async () => {
    ({ app } = await makeApp(authSeed()));
    const res = await app.inject({ url: '/_emulator/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json().persistence).toBeUndefined();
    expect(app.statePersistence).toBeNull();
  });
});

describe('writeStateFile', () => {
  it('removes its temporary file when the write itself fails (a full disk)', async (context) => {
    // /dev/full answers every write with ENOSPC, even for root; a link to it stands in for a full disk.
    if (!existsSync('/dev/full')) context.skip('this system has no /dev/full to stand in for a full disk');
    await writeFile(file, '{"old":true}');
    await symlink('/dev/full', `${file}.tmp-${process.pid}`);
    await expect(writeStateFile(file, '{"new":true}')).rejects.toThrow(/ENOSPC/);
    expect(await readdir(dir)).toEqual(['state.json']);
    expect(await readFile(file, 'utf8')).toBe('{"old":true}');
  });

  it('removes its temporary file when the rename fails, and when the folder is gone', async () => {
    await mkdir(join(file, 'in-the-way'), { recursive: true });
    await expect(writeStateFile(file, '{"new":true}')).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['state.json']);
    await expect(writeStateFile(join(dir, 'gone', 'state.json'), '{}')).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});
