import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startEmulator, ManualClock, type RunningEmulator } from '../../src/index.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { START_GRID_101, call, ok } from './helpers.js';

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const ADMIN = 'mcp-admin-secret';

let emu: RunningEmulator | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await emu?.close();
  emu = undefined;
});

/** An SDK client connected to the emulator's /_emulator/mcp, with the admin token when given. */
async function connect(url: string, { token, query = '' }: { token?: string; query?: string } = {}): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/_emulator/mcp${query}`), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe('the MCP endpoint /_emulator/mcp', () => {
  it('lists the tools of the control API, annotated, and runs a failed grid start in a sandbox of its own', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0), adminToken: ADMIN });
    const client = await connect(emu.url, { token: ADMIN });

    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ['reset', 'advance_clock', 'set_clock', 'set_next_start', 'get_lifecycle', 'add_fault', 'add_incident', 'set_alert_enabled', 'count_requests', 'find_requests', 'put_sandbox', 'export_state', 'import_state', 'use_sandbox', 'wait_for', 'request']) {
      expect(byName.has(name), name).toBe(true);
    }
    expect(byName.get('get_lifecycle')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('reset')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('delete_sandbox')!.annotations).toMatchObject({ destructiveHint: true });
    // The route's schema: the body of next-start, the parameters of the path.
    expect(byName.get('set_next_start')!.inputSchema).toMatchObject({ required: ['kind', 'id'], properties: { body: { required: ['outcome'] } } });

    const sandbox = await ok(client, 'use_sandbox', { sandbox: 'agent-a' });
    expect(sandbox).toMatchObject({ world: 'sandbox', sandbox: 'agent-a', created: true });
    expect(await ok(client, 'set_next_start', { kind: 'grid', id: 101, body: { outcome: 'ALLOCATE_FAILED' } })).toMatchObject({ outcome: 'ALLOCATE_FAILED' });
    const started = await ok(client, 'request', START_GRID_101);
    expect(started.status).toBe(202);
    expect((await ok(client, 'advance_clock', { body: { until: { kind: 'grid', id: 101 } } })).advancedMs).toBeGreaterThan(0);
    expect(await ok(client, 'get_lifecycle', { kind: 'grid', id: '101' })).toMatchObject({ state: 'ALLOCATE_FAILED' });
    // The request was journaled in the sandbox, as the system under test's would be.
    expect(await ok(client, 'count_requests', { body: { method: 'POST', path: '*/grid/101/action' } })).toMatchObject({ count: 1 });

    // The default world saw none of it.
    const auth = { authorization: `Bearer ${ADMIN}` };
    const grid = (await (await fetch(`${emu.url}/_emulator/lifecycles/grid/101`, { headers: auth })).json()) as { state: string };
    expect(grid.state).not.toBe('ALLOCATE_FAILED');
    expect(emu.world.journal.total).toBe(0);
    expect((await (await fetch(`${emu.url}/_emulator/sandboxes/agent-a`, { headers: auth })).json()) as object).toMatchObject({ name: 'agent-a' });
  });

  it('answers errors of the routes as failed tool calls, with the route\'s message', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0) });
    const client = await connect(emu.url);
    const bad = await call(client, 'set_next_start', { kind: 'cloudServer', id: 1, body: { outcome: 'ALLOCATE_FAILED' } });
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toMatch(/400 .*not possible for a cloudServer/);
    const schema = await call(client, 'advance_clock', { body: { ms: -5 } });
    expect(schema.isError).toBe(true);
    expect(schema.content[0].text).toMatch(/400/);
    const unknown = await call(client, 'get_clock', { sandbox: 'x' });
    expect(unknown.content[0].text).toMatch(/unknown argument 'sandbox'/);
  });

  it('gives each session a sandbox of its own, made on its first call and deleted when it ends; ?world=default works in the default world', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0) });
    const a = await connect(emu.url);
    const b = await connect(emu.url);
    await ok(a, 'advance_clock', { body: { ms: 60_000 } });
    const whereA = await ok(a, 'use_sandbox');
    const whereB = await ok(b, 'use_sandbox');
    expect(whereA.sandbox).toMatch(/^mcp-/);
    expect(whereB.sandbox).not.toBe(whereA.sandbox);
    expect((await ok(a, 'get_clock')).now).toBe(T0 + 60_000);
    expect((await ok(b, 'get_clock')).now).toBe(T0);
    expect(emu.clock.now()).toBe(T0);
    expect(emu.app.sandboxes.list().map((s) => s.name).sort()).toEqual([whereA.sandbox, whereB.sandbox].sort());

    await (a.transport as StreamableHTTPClientTransport).terminateSession();
    await expect.poll(() => emu!.app.sandboxes.list().map((s) => s.name)).toEqual([whereB.sandbox]);

    const root = await connect(emu.url, { query: '?world=default' });
    expect(await ok(root, 'use_sandbox')).toMatchObject({ world: 'default', sandbox: null });
    await ok(root, 'advance_clock', { body: { ms: 1000 } });
    expect(emu.clock.now()).toBe(T0 + 1000);
  });

  it('makes sandboxes within MAX_SANDBOXES, saying so when there is no room', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0), maxSandboxes: 1 });
    const a = await connect(emu.url);
    await ok(a, 'get_clock');
    const b = await connect(emu.url);
    const refused = await call(b, 'get_clock');
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/^cannot create sandbox 'mcp-[0-9a-f]{8}': 503 .*MAX_SANDBOXES is 1.*\(use_sandbox with sandbox null works in the default world\)$/);
    expect(emu.app.sandboxes.list()).toHaveLength(1);
    // Told to, the session works in the default world instead (as it must with SANDBOXES=off).
    expect(await ok(b, 'use_sandbox', { sandbox: null })).toMatchObject({ world: 'default' });
    expect((await ok(b, 'get_clock')).now).toBe(T0);
  });

  it('with SANDBOXES=off, says so on the first call of a session that was not started in the default world', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0), sandboxes: 'off' });
    const refused = await call(await connect(emu.url), 'get_clock');
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(/^cannot create sandbox 'mcp-[0-9a-f]{8}': \d{3} /);
    expect((await ok(await connect(emu.url, { query: '?world=default' }), 'get_clock')).now).toBe(T0);
  });

  it('waits for a state, or an event, on the event stream', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0) });
    const client = await connect(emu.url);
    await ok(client, 'request', START_GRID_101);
    const waiting = call(client, 'wait_for', { kind: 'grid', id: 101, state: 'CHECKED', timeoutMs: 10_000 });
    // Until time passes, nothing comes; then the transition does.
    await new Promise((r) => setTimeout(r, 200));
    await ok(client, 'advance_clock', { body: { until: { kind: 'grid', id: 101 } } });
    const reached = await waiting;
    expect(reached.isError, reached.content[0]?.text).toBeFalsy();
    expect(reached.structuredContent).toMatchObject({ state: 'CHECKED' });
    const late = await call(client, 'wait_for', { kind: 'grid', id: 101, state: 'TERMINATED', timeoutMs: 300 });
    expect(late.isError).toBe(true);
    expect(late.content[0].text).toMatch(/waited 300 ms/);

    // An event: the next alert fired, fired through the alerts interface.
    const fired = call(client, 'wait_for', { types: ['alert.fired'], timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await ok(client, 'request', { method: 'POST', path: '/concerto/mpulse/api/alerts/demo-alert/fire', body: {} })).status).toBe(204);
    const event = await fired;
    expect(event.isError, event.content[0]?.text).toBeFalsy();
    expect(event.structuredContent).toMatchObject({ type: 'alert.fired', kind: 'alert', resourceId: 'demo-alert' });
  });

  it('reads the resources: the lifecycles, the world, the OpenAPI document, the behaviour reference', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, clock: new ManualClock(T0) });
    const client = await connect(emu.url, { query: '?sandbox=res' });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['emulator://behaviour-reference.md', 'emulator://openapi.json', 'emulator://world/lifecycles', 'emulator://world/summary']);
    const read = async (uri: string) => ((await client.readResource({ uri })).contents[0] as { text: string }).text;
    expect(JSON.parse(await read('emulator://world/lifecycles')).resources.length).toBeGreaterThan(0);
    expect(JSON.parse(await read('emulator://world/summary'))).toMatchObject({ world: 'sandbox', sandbox: 'res', baseUrl: `${emu.url}/sandbox/res` });
    expect(JSON.parse(await read('emulator://openapi.json')).openapi).toBe('3.1.0');
    expect(await read('emulator://behaviour-reference.md')).toMatch(/^# /);
  });

  it('refuses every request without the admin token when ADMIN_TOKEN is set', async () => {
    emu = await startEmulator({ fixtures: BUNDLED_FIXTURES_DIR, adminToken: ADMIN });
    await expect(connect(emu.url)).rejects.toThrow(/401/);
    await expect(connect(emu.url, { token: 'wrong' })).rejects.toThrow(/401/);
    const res = await fetch(`${emu.url}/_emulator/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(emu.app.sandboxes.list()).toEqual([]);
  });
});
