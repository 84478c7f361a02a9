import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startEmulator, ManualClock, type RunningEmulator } from '../../src/index.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ROOT } from '../docs/markdown.js';
import { START_GRID_101, call, ok } from './helpers.js';

/** `cloud-emulator mcp` as an agent's client starts it: the built command, spoken to over stdio. */

const CLI = join(ROOT, 'dist', 'cli', 'cli.js');
const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const ADMIN = 'stdio-admin-secret';

beforeAll(async () => {
  // Builds only when a source is newer than dist/ (CI builds just before the tests).
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT });
}, 600_000);

let emu: RunningEmulator | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await emu?.close();
  emu = undefined;
});

async function connect(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'test', version: '1.0.0' });
  // The environment the command gets: none of the test runner's, so that ADMIN_TOKEN comes only from `env`.
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' }));
  return c;
}

describe('cloud-emulator mcp (stdio)', () => {
  it('steers the emulator at --url in a sandbox of its own, with the admin token from the environment, and deletes the sandbox at the end', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0), adminToken: ADMIN });
    client = await connect(['--url', emu.url], { ADMIN_TOKEN: ADMIN });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['set_next_start', 'advance_clock', 'get_lifecycle', 'wait_for', 'request', 'use_sandbox']));
    await ok(client, 'set_next_start', { kind: 'grid', id: 101, body: { outcome: 'ALLOCATE_FAILED' } });
    await ok(client, 'request', START_GRID_101);
    await ok(client, 'advance_clock', { body: { until: { kind: 'grid', id: 101 } } });
    expect(await ok(client, 'get_lifecycle', { kind: 'grid', id: 101 })).toMatchObject({ state: 'ALLOCATE_FAILED' });
    const [sandbox] = emu.app.sandboxes.list();
    expect(sandbox.name).toMatch(/^mcp-/);
    expect(emu.world.stores.provisioning.position('grid', 101)?.state).not.toBe('ALLOCATE_FAILED');

    await client.close();
    client = undefined;
    await expect.poll(() => emu!.app.sandboxes.list()).toEqual([]);
  });

  it('answers 401 as a failed call without the admin token', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0), adminToken: ADMIN });
    client = await connect(['--url', emu.url, '--default-world']);
    const answer = await call(client, 'get_clock');
    expect(answer.isError).toBe(true);
    expect(answer.content[0].text).toMatch(/401/);
  });
});

describe('the built server', () => {
  it('loads no code of the MCP SDK at start: only a session of the endpoint or the mcp command does', () => {
    const read = (file: string) => readFileSync(join(ROOT, 'dist', 'cli', file), 'utf8');
    /** Every bundle file the entry imports before it runs, following static imports only. */
    const loadedAtStart = (entry: string, seen = new Set<string>()): Set<string> => {
      seen.add(entry);
      for (const [, file] of read(entry).matchAll(/(?:^|[;}\s])import(?:[^"'();]*?from)?\s*"\.\/(bundle-[A-Za-z0-9]+\.js)"/g)) if (!seen.has(file)) loadedAtStart(file, seen);
      return seen;
    };
    const atStart = [...loadedAtStart('server.js')];
    expect(atStart.length).toBeGreaterThan(1);
    for (const file of atStart) expect(read(file), file).not.toMatch(/StreamableHTTPServerTransport|StdioServerTransport|isInitializeRequest/);
    // The SDK is in the bundle all the same, in a file loaded when it is asked for.
    const bundles = readdirSync(join(ROOT, 'dist', 'cli')).filter((f) => /^bundle-.*\.js$/.test(f));
    expect(bundles.filter((f) => /StreamableHTTPServerTransport/.test(read(f))).length).toBe(1);
  });
});

