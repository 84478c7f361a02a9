import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { FixtureError } from '../../src/core/fixtures.js';
import { userFacingStartupError } from '../../src/cli/serve.js';
import { emptyState } from '../../src/state.js';
import { authSeed, makeApp } from '../helpers/app.js';

let dir: string;
let file: string;
let app: FastifyInstance | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-state-sandboxes-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A state file as an earlier run with sandboxes wrote it. */
async function fileWithSandboxes(names: string[]): Promise<void> {
  const state = { ...emptyState(), ...authSeed() };
  const sandboxes = Object.fromEntries(names.map((name) => [name, { createdAt: 1, lastUsedAt: 2, state }]));
  await writeFile(file, JSON.stringify({ ...state, sandboxes }));
}

/** The error a start fails with. */
async function startError(config: Parameters<typeof makeApp>[1]): Promise<Error> {
  try {
    ({ app } = await makeApp(authSeed(), config));
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the start to fail');
}

describe('a state file whose sandboxes this start cannot load', () => {
  it('with SANDBOXES=off: one line naming the file, the JSON path and what to do; the file untouched', async () => {
    await fileWithSandboxes(['w1', 'w2']);
    const before = await readFile(file, 'utf8');
    const err = await startError({ stateFile: file, sandboxes: 'off' });
    expect(err).toBeInstanceOf(FixtureError);
    expect(err.message).toBe(
      `state file ${file}: $.sandboxes.w1: cannot be loaded: sandboxes are off (SANDBOXES=off) (and 1 more); start with SANDBOXES=auto or explicit to load them, or with STATE_FILE_SANDBOXES=drop (--state-file-sandboxes drop) to start without them (the next write removes them from the file)`,
    );
    expect(err.message).not.toContain('\n');
    // The command line prints just this line (exit code 2), not a stack.
    expect(userFacingStartupError(err)).toBe(err.message);
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('with an invalid sandbox name: names it and its JSON path', async () => {
    await fileWithSandboxes(['ok', 'no good']);
    const err = await startError({ stateFile: file });
    expect(err).toBeInstanceOf(FixtureError);
    expect(err.message).toMatch(new RegExp(`^state file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\$\\.sandboxes\\["no good"\\]: cannot be loaded: 'no good' is not a valid sandbox name`));
    expect(err.message).toContain('STATE_FILE_SANDBOXES=drop');
  });

  it('with STATE_FILE_SANDBOXES=drop: starts without them, keeps the valid ones, and the next write leaves them out', async () => {
    await fileWithSandboxes(['ok', 'no good']);
    ({ app } = await makeApp(authSeed(), { stateFile: file, stateFileSandboxes: 'drop', stateFlushIntervalMs: 0, sandboxIdleTimeoutMs: 0 }));
    expect((await app.inject({ url: '/_emulator/sandboxes' })).json().sandboxes.map((s: { name: string }) => s.name)).toEqual(['ok']);
    await app.close();
    app = undefined;
    expect(Object.keys(JSON.parse(await readFile(file, 'utf8')).sandboxes)).toEqual(['ok']);

    await fileWithSandboxes(['w1']);
    ({ app } = await makeApp(authSeed(), { stateFile: file, sandboxes: 'off', stateFileSandboxes: 'drop', stateFlushIntervalMs: 0 }));
    expect((await app.inject({ url: '/_emulator/health' })).statusCode).toBe(200);
  });
});
