import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliOutput } from '../../src/cli/run.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { ManualClock } from '../../src/core/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { openSse } from '../helpers/sse.js';

/**
 * A start on a broken fixtures folder: refused (exit 2) without WATCH; with it, the emulator
 * starts on an empty seed, shows the problems, and loads the folder once it is fixed.
 */

let dirs: string[] = [];
let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'watch-start-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const usersFile = (...names: string[]) => JSON.stringify({ users: names.map((n) => ({ userName: `${n}@example.com`, password: 'x' })) }, null, 2);
const BROKEN = '{\n  "users": [\n    { "userName": "a@example.com", "password": "x" },\n  ]\n}\n';

/** Polls `check` every 10 ms until it holds, for at most `ms`. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const health = async (e: RunningEmulator) => (await fetch(`${e.url}/_emulator/health`)).json();
const userNames = (e: RunningEmulator) => e.state().users.map((u) => u.userName);

describe('a broken fixtures folder at start', () => {
  it('without --watch: refused, exit 2, naming the problem', async () => {
    const dir = await folder({ 'users.json': BROKEN });
    await expect(startEmulator({ fixtures: dir })).rejects.toBeInstanceOf(FixtureError);
    let err = '';
    const output: CliOutput = { out: () => undefined, err: (t) => void (err += t) };
    expect(await runCli(['--fixtures', dir, '--port', '0', '--log-level', 'silent'], {}, output)).toBe(2);
    expect(err).toContain(`${join(dir, 'users.json')}:3:53: $: not valid JSON: trailing comma`);
  });

  it('with --watch: starts on an empty seed, shows the problems in health, and loads the folder once fixed', async () => {
    const dir = await folder({ 'users.json': BROKEN, 'domains.json': JSON.stringify({ domains: [{ id: 1, name: 'www.example.com' }] }) });
    emu = await startEmulator({ fixtures: dir, watch: true, clock: new ManualClock(Date.UTC(2026, 0, 1)) });
    const answer = await fetch(`${emu.url}/_emulator/health`);
    // The emulator itself is fine: it serves an empty world.
    expect(answer.status).toBe(200);
    const { status, seed, counts } = await answer.json();
    expect(status).toBe('ok');
    expect(counts).toMatchObject({ grids: 0, domains: 0 });
    expect(seed).toMatchObject({
      status: 'error',
      serving: 'empty',
      watching: true,
      problems: [{ file: join(dir, 'users.json'), line: 3, column: 53, path: '$', message: "not valid JSON: trailing comma: nothing follows it before ']'" }],
    });
    expect(userNames(emu)).toEqual([]);

    const stream = await openSse(`${emu.url}/_emulator/events?types=world.reloaded,seed.refused`);
    try {
      // Still broken: told again.
      await writeFile(join(dir, 'users.json'), '{"users": [}');
      expect((await stream.next(10_000)).event).toBe('seed.refused');
      await writeFile(join(dir, 'users.json'), usersFile('a'));
      expect((await stream.next(10_000)).event).toBe('world.reloaded');
    } finally {
      stream.close();
    }
    expect(userNames(emu)).toEqual(['a@example.com']);
    expect((await health(emu)).seed).toMatchObject({ status: 'ok', serving: 'fixtures', problems: [] });
    expect((await health(emu)).counts.domains).toBe(1);
  });

  it('with --watch: a folder that does not exist yet starts an empty world, loaded once it is made', async () => {
    const parent = await folder({});
    const dir = join(parent, 'later');
    emu = await startEmulator({ fixtures: dir, watch: true, watchPollMs: 50 });
    expect((await health(emu)).seed).toMatchObject({
      status: 'error',
      serving: 'empty',
      problems: [{ path: '$', message: expect.stringContaining(`cannot read fixtures folder ${dir}`) }],
    });
    await mkdir(dir);
    await writeFile(join(dir, 'users.json'), usersFile('b'));
    await within(10_000, () => userNames(emu!).includes('b@example.com'));
    expect((await health(emu)).seed).toMatchObject({ status: 'ok', serving: 'fixtures' });
  });
});
