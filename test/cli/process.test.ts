import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, blocks, read } from '../docs/markdown.js';

/**
 * The command as a process started by another: however its starter stops (the Jest recipe's
 * teardown, npx sent SIGTERM, a parent killed outright), no server is left running on the
 * port. Runs the built command (built first when dist/ is older than a source).
 */

/** A process start on a busy machine can take seconds: these tests get longer. */
const PROCESS_TEST_MS = 60_000;
/** Far above the half-second parent poll and a close: only a server left running reaches it. */
const GONE_WITHIN_MS = 15_000;
const CLI = join(ROOT, 'dist', 'cli', 'cli.js');

beforeAll(async () => {
  // Builds only when a source is newer than dist/ (CI builds just before the tests).
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT });
}, 600_000);

let dir: string;
const started: number[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-process-'));
  // A project that installed the package: node_modules/cloud-emulator is this checkout.
  await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true });
  await symlink(ROOT, join(dir, 'node_modules', 'cloud-emulator'), 'dir');
  await writeFile(join(dir, 'package.json'), '{ "name": "a-project", "version": "1.0.0", "private": true }\n');
});
afterEach(() => {
  // A server a failed test left behind is stopped here, not by the next test's port.
  for (const pid of started.splice(0)) {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const healthy = (port: number) => fetch(`http://127.0.0.1:${port}/_emulator/health`).then((r) => r.ok, () => false);

/** Waits until `check` holds, polling every 50 ms (real processes: no clock to advance). */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = GONE_WITHIN_MS): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

/** Resolves once the port refuses connections: nothing listens on it any more. */
const refuses = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** Runs a Node script and collects its output; resolves once the script (not what it started) exits. */
interface NodeRun {
  child: ChildProcess;
  lines: string[];
  exit: Promise<number | null>;
}

function runNode(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): NodeRun {
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? dir, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let text = '';
  const collect = (d: Buffer) => {
    text += d;
    const parts = text.split('\n');
    text = parts.pop()!;
    lines.push(...parts);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exit };
}

describe('the Jest recipe', () => {
  const PAGE = 'docs/testing-recipes.md';
  const recipe = (name: string) => {
    const found = blocks(PAGE, read(PAGE)).filter((b) => b.recipe === name);
    if (found.length !== 1) throw new Error(`${PAGE}: expected one block marked <!-- recipe: ${name} -->, found ${found.length}`);
    return found[0].text;
  };

  it(
    'starts the emulator in its global setup, and its teardown leaves no process and no listening port',
    async () => {
      const port = await freePort();
      const setup = recipe('jest-setup');
      expect(setup).toContain('18080');
      // The files as a user saves them, on a port free here.
      await writeFile(join(dir, 'emulator-setup.mjs'), setup.replaceAll('18080', String(port)));
      await writeFile(join(dir, 'emulator-teardown.mjs'), recipe('jest-teardown'));
      // What Jest does with them: setup, the tests, teardown, in one process, which then exits.
      await writeFile(
        join(dir, 'jest-like.mjs'),
        `const setup = (await import('./emulator-setup.mjs')).default;
const teardown = (await import('./emulator-teardown.mjs')).default;
await setup();
console.log('pid ' + globalThis.emulator.pid);
const health = await fetch('http://127.0.0.1:${port}/_emulator/health');
console.log('health ' + health.status);
await teardown();
`,
      );
      const run = runNode(['jest-like.mjs']);
      const code = await run.exit;
      expect(code, run.lines.join('\n')).toBe(0);
      expect(run.lines).toContain('health 200');
      const pid = Number(run.lines.find((l) => l.startsWith('pid '))!.slice(4));
      started.push(pid);
      // Teardown waited for the exit: nothing is left the moment the run ends.
      expect(alive(pid)).toBe(false);
      expect(await refuses(port)).toBe(true);
    },
    PROCESS_TEST_MS,
  );
});

describe('a parent that goes away', () => {
  it(
    'npx stopped with SIGTERM: the server it started closes too and frees its port',
    async () => {
      // node_modules/.bin/cloud-emulator as an install makes it: a command running the CLI.
      const bin = join(dir, 'node_modules', '.bin', 'cloud-emulator');
      await writeFile(bin, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
      await chmod(bin, 0o755);
      const port = await freePort();
      const npx = spawn('npx', ['--offline', 'cloud-emulator', '--port', String(port), '--log-level', 'warn'], { cwd: dir, stdio: 'ignore' });
      const npxExit = new Promise((resolve) => npx.once('exit', resolve));
      try {
        await until(() => healthy(port), 'the emulator started through npx answers its health', 30_000);
        npx.kill('SIGTERM');
        await npxExit;
        await until(() => refuses(port), 'the port refuses connections after npx was stopped');
      } finally {
        if (npx.exitCode === null && npx.signalCode === null) npx.kill('SIGKILL');
      }
    },
    PROCESS_TEST_MS,
  );

  /** A parent process that starts the CLI with `args`, prints its pid, and waits to be killed. */
  function parentOf(args: string[]) {
    const script = `const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ${JSON.stringify([CLI, ...args])}, { stdio: 'ignore' });
console.log('pid ' + child.pid);
setInterval(() => {}, 1000);`;
    return runNode(['-e', script]);
  }

  it(
    'a parent killed outright (SIGKILL, no chance to stop its child): the server exits on its own',
    async () => {
      const port = await freePort();
      const parent = parentOf(['--port', String(port), '--log-level', 'warn']);
      await until(() => healthy(port), 'the emulator answers its health', 30_000);
      const pid = Number(parent.lines.find((l) => l.startsWith('pid '))!.slice(4));
      started.push(pid);
      parent.child.kill('SIGKILL');
      await parent.exit;
      await until(() => !alive(pid), 'the server process exits after its parent was killed');
      expect(await refuses(port)).toBe(true);
    },
    PROCESS_TEST_MS,
  );

  it(
    '--no-exit-with-parent: the server outlives its parent, as a server started to stay',
    async () => {
      const port = await freePort();
      const parent = parentOf(['--port', String(port), '--log-level', 'warn', '--no-exit-with-parent']);
      await until(() => healthy(port), 'the emulator answers its health', 30_000);
      const pid = Number(parent.lines.find((l) => l.startsWith('pid '))!.slice(4));
      started.push(pid);
      parent.child.kill('SIGKILL');
      await parent.exit;
      // Four parent polls: a server that watched its parent would have gone by then.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(alive(pid)).toBe(true);
      expect(await healthy(port)).toBe(true);
    },
    PROCESS_TEST_MS,
  );
});
