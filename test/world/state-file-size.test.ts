import { Writable } from 'node:stream';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { writeStateFile } from '../../src/world/persistence.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { emptyState, loadFixtures, parseState, type State } from '../../src/state.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { AUTH, T0, makeApp } from '../helpers/app.js';
import { watchResponses } from '../helpers/conformance.js';
import { grid, seed } from '../provisioning/seed.js';

const CLOUD = '/concerto/services/rest/CloudService/v1';

let dir: string;
let file: string;
let app: FastifyInstance | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-state-size-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A seed of some size: many annotations, so that a whole copy of it is easy to tell from a reference. */
let demo: State | undefined;
async function bigSeed(): Promise<Partial<State>> {
  demo ??= await loadFixtures(BUNDLED_FIXTURES_DIR);
  const annotations = Array.from({ length: 2000 }, (_, i) => ({ ...demo!.annotations[0], id: 7_000_000 + i, title: `Deploy ${i}` }));
  return seed({ grids: [grid()], domains: demo.domains, annotations });
}

const readFileJson = async () => JSON.parse(await readFile(file, 'utf8'));
const sandboxState = async (a: FastifyInstance, name: string) => (await a.inject({ url: `/sandbox/${name}/_emulator/state` })).json();
const mainState = async (a: FastifyInstance) => (await a.inject({ url: '/_emulator/state' })).json();
const startGrid = (a: FastifyInstance, prefix = '') => a.inject({ method: 'POST', url: `${prefix}${CLOUD}/grid/101/action`, headers: AUTH, payload: { action: 'start' } });

async function start(config: Partial<Config> = {}): Promise<FastifyInstance> {
  ({ app } = await makeApp(await bigSeed(), { stateFile: file, stateFlushIntervalMs: 0, sandboxIdleTimeoutMs: 0, ...config }));
  return app;
}

describe('the state file, for sandboxes nobody changed', () => {
  it('keeps each as a reference to the seed (a few bytes), and a new start restores it whole', async () => {
    const a = await start();
    const alone = (await stat(file)).size;
    for (let i = 0; i < 20; i++) expect((await a.inject({ url: `/sandbox/s${i}/_emulator/health` })).statusCode).toBe(200);
    await a.statePersistence!.flush();
    const withSandboxes = (await stat(file)).size;
    // Twenty whole copies would be 21 times the file; twenty references (each with its clock) are a few hundred bytes each.
    expect(withSandboxes - alone).toBeLessThan(20 * 400);
    expect((await readFileJson()).sandboxes.s7).toEqual({ createdAt: expect.any(Number), lastUsedAt: expect.any(Number), seed: 'fixtures', clock: expect.objectContaining({ now: T0 }) });
    const seedExport = await sandboxState(a, 's7');
    await a.close();

    const b = await start();
    expect((await b.inject({ url: '/_emulator/sandboxes' })).json().sandboxes).toHaveLength(20);
    expect(await sandboxState(b, 's7')).toEqual(seedExport);
  });

  it('writes nothing while nothing changes; a change is written at the next flush, and only that sandbox whole', async () => {
    const a = await start();
    const writer = a.statePersistence!;
    await a.inject({ url: '/sandbox/w1/_emulator/health' });
    await a.inject({ url: '/sandbox/w2/_emulator/health' });
    await writer.flush();
    const written = writer.writes;
    const before = await readFile(file, 'utf8');
    // Reads change nothing the file keeps: no write at all (no snapshot, no hashing).
    for (let i = 0; i < 5; i++) {
      await a.inject({ url: '/sandbox/w1/_emulator/state' });
      await a.inject({ url: `${CLOUD}/grid/101`, headers: AUTH });
      await writer.flush();
    }
    expect(writer.writes).toBe(written);
    expect(await readFile(file, 'utf8')).toBe(before);

    expect((await startGrid(a, '/sandbox/w2')).statusCode).toBe(202);
    await writer.flush();
    expect(writer.writes).toBe(written + 1);
    const sandboxes = (await readFileJson()).sandboxes;
    expect(sandboxes.w1.seed).toBe('fixtures');
    expect(sandboxes.w2.seed).toBeUndefined();
    expect(sandboxes.w2.state.grids[0].deployment).toBeDefined();
    await writer.flush();
    expect(writer.writes).toBe(written + 1);

    // A reset makes it the seed again: a reference once more.
    await a.inject({ method: 'POST', url: '/sandbox/w2/_emulator/reset' });
    await writer.flush();
    expect((await readFileJson()).sandboxes.w2).toEqual({ createdAt: expect.any(Number), lastUsedAt: expect.any(Number), seed: 'fixtures', clock: expect.objectContaining({ now: T0 }) });
  });

  it('refers to the default world when sandboxes start from a loaded state, and writes them whole once that changes', async () => {
    const a = await start();
    await startGrid(a);
    await a.close();

    // This start loads the file: new sandboxes start from its default state.
    const b = await start();
    const loaded = await mainState(b);
    await b.inject({ url: '/sandbox/x/_emulator/health' });
    await b.statePersistence!.flush();
    expect((await readFileJson()).sandboxes.x.seed).toBe('default');

    // The default world changes: the file's default state is no longer what x started from.
    await b.inject({ method: 'POST', url: '/_emulator/reset' });
    await b.statePersistence!.flush();
    const text = await readFileJson();
    expect(text.sandboxes.x.seed).toBeUndefined();
    expect(text.sandboxes.x.state.grids).toEqual(loaded.grids);
    await b.close();

    const c = await start();
    expect((await sandboxState(c, 'x')).grids).toEqual(loaded.grids);
  });
});

describe('the bounds of the state file', () => {
  async function loggedApp(config: Partial<Config>) {
    const lines: Array<{ level: number; msg: string }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const made = await buildApp({
      config: { stateFile: file, stateFlushIntervalMs: 0, sandboxIdleTimeoutMs: 0, ...config },
      clock: new ManualClock(T0),
      fixtures: parseState({ ...emptyState(), ...seed({ grids: [grid()] }) }, 'test seed'),
      logger: { level: 'warn', stream },
    });
    watchResponses(made);
    return { app: made, warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg) };
  }

  for (const [setting, config, pattern] of [
    ['STATE_FILE_WORLD_MAX_BYTES', { stateFileWorldMaxBytes: 20_000 }, /the state of sandbox 'big' passes STATE_FILE_WORLD_MAX_BYTES \(20000 bytes\)/],
    ['STATE_FILE_MAX_BYTES', { stateFileMaxBytes: 20_000 }, /the state file would pass STATE_FILE_MAX_BYTES \(20000 bytes\)/],
  ] as const) {
    it(`past ${setting}: keeps the last good file, warns once, reports it in health, and does not crash`, async () => {
      const logged = await loggedApp(config);
      app = logged.app;
      const good = await readFile(file, 'utf8');
      const big = { ...emptyState(), ...seed({ grids: [grid()] }), users: [...seed().users!, ...Array.from({ length: 400 }, (_, i) => ({ userName: `user${i}@example.com`, password: 'x'.repeat(40), tenant: 'Default' }))] };
      expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/big', payload: big })).statusCode).toBe(201);
      await app.statePersistence!.flush();
      await app.statePersistence!.flush();
      expect(await readFile(file, 'utf8')).toBe(good);
      expect(logged.warnings().filter((m) => pattern.test(m))).toHaveLength(1);
      expect(logged.warnings()[0]).toContain('keeps its last good content');
      const health = await app.inject({ url: '/_emulator/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json().persistence.error).toMatch(pattern);

      // Smaller again: written, and healthy.
      expect((await app.inject({ method: 'DELETE', url: '/_emulator/sandboxes/big' })).statusCode).toBe(204);
      await app.statePersistence!.flush();
      expect((await app.inject({ url: '/_emulator/health' })).statusCode).toBe(200);
      expect(JSON.parse(await readFile(file, 'utf8')).sandboxes).toBeUndefined();
    });
  }
});

describe('writeStateFile', () => {
  it('writes each piece as it comes, so the whole text is never held; the file appears whole, by rename', async () => {
    const piece = 'x'.repeat(64 * 1024);
    const sizes: number[] = [];
    async function* text() {
      for (let i = 0; i < 4; i++) {
        // What the temporary file holds when the next piece is asked for.
        sizes.push((await stat(`${file}.tmp-${process.pid}`).catch(() => ({ size: -1 }))).size);
        yield piece;
      }
    }
    await writeStateFile(file, text());
    expect(sizes).toEqual([0, piece.length, 2 * piece.length, 3 * piece.length]);
    expect((await stat(file)).size).toBe(4 * piece.length);
  });

  it('gives up past its bound, leaving the old file and no temporary file', async () => {
    await writeStateFile(file, 'old');
    await expect(writeStateFile(file, ['a'.repeat(600), 'b'.repeat(600)], 1000)).rejects.toThrow('the state file would pass STATE_FILE_MAX_BYTES (1000 bytes)');
    expect(await readFile(file, 'utf8')).toBe('old');
    await expect(stat(`${file}.tmp-${process.pid}`)).rejects.toThrow();
  });
});
