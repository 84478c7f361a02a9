import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, PATHS, authSeed, makeApp } from '../helpers/app.js';
import { ShutdownError, closeForExit } from '../../src/cli/serve.js';

/**
 * Shutdown: whatever requests are still in flight, the state file is written before the
 * process exits, and the exit code says whether that worked. In-process for closeForExit
 * itself, then end to end on the built server (built first when dist/ is older than a source).
 */

const { ANNOTATIONS, CLOUD } = PATHS;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Far above any grace used here: only a shutdown that hangs reaches it. */
const GIVE_UP_MS = 15_000;
/** A process start on a busy machine can take seconds: the tests that start one get longer. */
const PROCESS_TEST_MS = 60_000;

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-shutdown-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const annotation = { title: 'Kept over a shutdown', text: 'acknowledged before SIGTERM', start: 1_700_000_000_000 };
const latencyRule = (ms: number) => ({ path: `${CLOUD}/grid*`, action: { latencyMs: ms } });
const readState = async () => JSON.parse(await readFile(file, 'utf8'));
/** The path of the state file becomes a folder with something in it: renaming over it fails. */
const blockFile = async () => {
  await rm(file, { force: true });
  await mkdir(join(file, 'in-the-way'), { recursive: true });
};

/** Resolves with how a request ended: its status, or 'closed' when the server dropped it. */
function hangingRequest(base: string, headers: Record<string, string>): Promise<number | 'closed'> {
  return fetch(`${base}${CLOUD}/grid/`, { headers }).then(
    (res) => res.status,
    () => 'closed' as const,
  );
}

/** Waits until the latency rule has caught a request, so that the request is surely in flight. */
async function untilHeld(base: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const rules = (await (await fetch(`${base}/_emulator/faults`)).json()) as Array<{ fired: number }>;
    if (rules.some((r) => r.fired > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the slow request never reached the server');
}

describe('closeForExit', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function listening(): Promise<string> {
    ({ app } = await makeApp({ ...authSeed(), domains: [{ id: 1, name: 'www.example.com' }] }, { stateFile: file, stateFlushIntervalMs: 0, rateLimitMax: 1000 }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
  }

  it('closes a connection that outlives the grace, then writes the state file', async () => {
    const base = await listening();
    const created = await fetch(`${base}${ANNOTATIONS}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(annotation) });
    expect(created.status).toBe(200);
    const rule = await fetch(`${base}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(latencyRule(60_000)) });
    expect(rule.status).toBe(201);
    const held = hangingRequest(base, AUTH);
    await untilHeld(base);
    await closeForExit(app!, 100);
    expect(await held).toBe('closed');
    expect((await readState()).annotations.map((a: { title: string }) => a.title)).toContain(annotation.title);
  });

  it('lets a request that ends within the grace finish, and writes what it changed', async () => {
    const base = await listening();
    await fetch(`${base}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: `${ANNOTATIONS}*`, action: { latencyMs: 300 } }) });
    const created = fetch(`${base}${ANNOTATIONS}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(annotation) });
    await untilHeld(base);
    const forced = vi.spyOn(app!.server, 'closeAllConnections');
    await closeForExit(app!, GIVE_UP_MS);
    expect((await created).status).toBe(200);
    // Its connection, kept alive, was closed once idle: the grace never had to run out.
    expect(forced).not.toHaveBeenCalled();
    expect((await readState()).annotations).toHaveLength(1);
  });

  it('rejects with a ShutdownError naming the cause when the final write fails', async () => {
    const base = await listening();
    await fetch(`${base}${ANNOTATIONS}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(annotation) });
    await blockFile();
    const closing = closeForExit(app!, 100);
    await expect(closing).rejects.toThrow(ShutdownError);
    await expect(closing).rejects.toThrow(`the state file was not written at shutdown: cannot write ${file}: `);
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});

// ---------------------------------------------------------------------------------------------
// The process: SIGTERM, exit code, state file
// ---------------------------------------------------------------------------------------------

interface Server {
  child: ChildProcess;
  base: string;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const servers: Server[] = [];

async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'server.js')], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const server: Server = { child, base: '', output: () => output, exit };
  servers.push(server);
  // The ready line (JSON: the output is not a terminal) names the address it listens on.
  for (let i = 0; i < 2000 && !server.base; i++) {
    const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output);
    if (match) server.base = match[1];
    else if (child.exitCode !== null) break;
    else await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (!server.base) throw new Error(`the server did not start:\n${output}`);
  return server;
}

/** SIGTERM, then how the process ended (or 'hung' after GIVE_UP_MS). */
async function terminate(server: Server) {
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(resolve, GIVE_UP_MS, 'hung')));
  const ended = await Promise.race([server.exit, hung]);
  clearTimeout(timer);
  return ended;
}

describe('the process on SIGTERM', () => {
  beforeAll(async () => {
    // Builds only when a source is newer than dist/ (CI builds just before the tests).
    await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT });
  }, 180_000);
  afterAll(() => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  });

  const DEMO = { 'x-auth-token': 'demo-token' };
  const env = () => ({ STATE_FILE: file, STATE_FLUSH_INTERVAL_MS: '0', SHUTDOWN_GRACE_MS: '200' });

  it('writes the state file and exits 0 even while a request hangs past the grace', async () => {
    const server = await startServer(env());
    const created = await fetch(`${server.base}${ANNOTATIONS}`, { method: 'POST', headers: { ...DEMO, 'content-type': 'application/json' }, body: JSON.stringify(annotation) });
    expect(created.status).toBe(200);
    const rule = await fetch(`${server.base}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(latencyRule(60_000)) });
    expect(rule.status).toBe(201);
    const held = hangingRequest(server.base, DEMO);
    await untilHeld(server.base);

    expect(await terminate(server), server.output()).toEqual({ code: 0, signal: null });
    expect(await held).toBe('closed');
    expect((await readState()).annotations.map((a: { title: string }) => a.title)).toContain(annotation.title);
    expect(server.output()).toContain('requests still in flight after the grace: closing their connections');
  }, PROCESS_TEST_MS);

  it('exits 1, saying why, when the final write fails', async () => {
    const server = await startServer(env());
    await fetch(`${server.base}${ANNOTATIONS}`, { method: 'POST', headers: { ...DEMO, 'content-type': 'application/json' }, body: JSON.stringify(annotation) });
    await blockFile();
    expect(await terminate(server), server.output()).toEqual({ code: 1, signal: null });
    expect(server.output()).toContain('the state file was not written at shutdown');
    expect(await readdir(dir)).toEqual(['state.json']);
  }, PROCESS_TEST_MS);
});
