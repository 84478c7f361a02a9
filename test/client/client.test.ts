import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmulatorClient, EmulatorError } from '../../src/client/index.js';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/index.js';
import { T0 } from '../helpers/app.js';
import { INTERFACES } from '../../src/interfaces.js';

const ADMIN = 'client-test-admin';
let emu: RunningEmulator;
let client: EmulatorClient;

beforeAll(async () => {
  emu = await startEmulator({ clock: new ManualClock(T0), adminToken: ADMIN });
  client = new EmulatorClient(`${emu.url}/`, { adminToken: ADMIN });
});
afterAll(() => emu.close());
beforeEach(() => client.reset());

const demo = { 'X-Auth-Token': 'demo-token', 'Content-Type': 'application/json' };

describe('EmulatorClient against a running emulator', () => {
  it('reads health, resets, and exports and imports the state', async () => {
    expect((await client.health()).status).toBe('ok');
    const state = await client.exportState();
    expect(state.users.some((u) => u.userName === 'demo@example.com')).toBe(true);
    const replaced = await client.importState({ users: state.users, tokens: state.tokens });
    expect(replaced).toMatchObject({ status: 'replaced', counts: { grids: 0 } });
    expect((await client.reset()).status).toBe('reset');
    expect((await client.exportState()).grids.length).toBeGreaterThan(0);
  });

  it('drives the clock: advance, to an instant, to the next transition, until settled, scale and freeze', async () => {
    expect((await client.clock()).now).toBe(emu.now());
    const before = emu.now();
    expect((await client.advance(1000)).advancedMs).toBe(1000);
    expect((await client.advanceTo(new Date(before + 5000))).now).toBe(before + 5000);
    await fetch(`${client.urls.provisioning}/grid/101/action`, { method: 'POST', headers: demo, body: '{"action":"start"}' });
    const next = await client.advanceToNext();
    expect(next.advancedMs).toBeGreaterThan(0);
    const settled = await client.advanceUntilSettled('grid', 101);
    expect((await client.lifecycle('grid', 101)).state).toBe('CHECKED');
    expect(settled.nextTransitionAt).toBeUndefined();
    expect((await client.setScale(60)).scale).toBe(60);
    expect((await client.freeze()).frozen).toBe(true);
    expect((await client.unfreeze()).frozen).toBe(false);
  });

  it('steers lifecycles: next-start outcome, fail a server, externally terminate', async () => {
    expect((await client.setNextStart('grid', 101, 'ALLOCATE_FAILED')).outcome).toBe('ALLOCATE_FAILED');
    await fetch(`${client.urls.provisioning}/grid/101/action`, { method: 'POST', headers: demo, body: '{"action":"start"}' });
    await client.advanceUntilSettled('grid', 101);
    expect((await client.lifecycle('grid', 101)).state).toBe('ALLOCATE_FAILED');
    await client.setNextStart('rsdb', (await client.lifecycles()).resources.find((r) => r.kind === 'rsdb')!.id, 'ALLOCATED_DATABASE');
    await client.clearNextStart('grid', 101);
    const server = (await client.lifecycles()).resources.find((r) => r.kind === 'cloudServer' && r.state === 'RUNNING');
    expect(server).toBeDefined();
    expect((await client.failCloudServer(server!.id)).state).toBe('FAILED');
    const env = (await client.lifecycles()).resources.find((r) => r.kind === 'environment')!;
    await expect(client.externallyTerminate(env.id)).rejects.toBeInstanceOf(EmulatorError);
  });

  it('reads and disables alerts', async () => {
    const alerts = await client.alerts();
    const uid = alerts[0].uid;
    expect((await client.alert(uid)).uid).toBe(uid);
    expect((await client.setAlertEnabled(uid, false)).enabled).toBe(false);
  });

  it('reads the outbox of deliveries, filtered and a page at a time, and an alert\'s own', async () => {
    await fetch(`${client.urls.alerts}/demo-alert/fire`, { method: 'POST' });
    await fetch(`${client.urls.alerts}/demo-alert/clear`, { method: 'POST' });
    const page = await client.deliveries({ alert: 'demo-alert', channel: 'email', limit: 1 });
    expect(page.total).toBe(2);
    expect(page.deliveries).toMatchObject([{ alert: 'demo-alert', action: 'clear', channel: 'email', status: 'stored' }]);
    const rest = await client.deliveries({ alert: 'demo-alert', before: page.next });
    expect(rest.deliveries.map((d) => d.action)).toEqual(['fire']);
    expect((await client.alert('demo-alert')).deliveries.map((d) => d.action)).toEqual(['clear', 'fire']);
    await expect(client.deliveries({ status: 'lost' as never })).rejects.toMatchObject({ status: 400 });
  });

  it('adds, reads and removes faults', async () => {
    const rule = await client.addFault({ path: '/concerto/mpulse/api/annotations/v1*', method: 'POST', action: { status: 503 }, times: 1 });
    expect((await client.fault(rule.id)).remaining).toBe(1);
    expect(await client.faults()).toHaveLength(1);
    await client.deleteFault(rule.id);
    await client.addFault({ path: '/x', action: { drop: true } });
    await client.clearFaults();
    expect(await client.faults()).toEqual([]);
  });

  it('lists the apps and adds, reads and removes incidents', async () => {
    const shop = (await client.apps()).find((a) => a.name === 'shop.example.com');
    expect(shop?.apiKey).toBe('SHOP9-X4T7K-M2QRB-V8DNE-H5WZC');
    const incident = await client.addIncident({ domainId: 12346, startAgoMs: 600_000, endAgoMs: 0, loadTimeFactor: 2 });
    expect(await client.incidents()).toContainEqual(incident);
    await client.deleteIncident(incident.id);
    expect((await client.incidents()).map((i) => i.id)).not.toContain(incident.id);
  });

  it('asserts on the journal: count and find with a matcher, list and clear', async () => {
    const body = JSON.stringify({ title: 'Release 7', text: 'from the client test', start: T0 });
    await fetch(client.urls.annotations, { method: 'POST', headers: demo, body });
    await fetch(`${client.urls.annotations}?date-start=0`, { headers: demo });
    expect(await client.countRequests({ method: 'POST', path: '/concerto/mpulse/api/annotations/*', bodyJson: { title: 'Release 7' } })).toBe(1);
    expect(await client.countRequests({ query: { 'date-start': '0' } })).toBe(1);
    const [found] = await client.findRequests({ bodyContains: 'Release 7' });
    expect(found).toMatchObject({ method: 'POST', status: 200, headers: { 'x-auth-token': '***' } });
    expect((await client.journal({ method: 'GET', limit: 5 })).entries).toHaveLength(1);
    await client.clearJournal();
    expect(await client.countRequests()).toBe(0);
  });

  it('counts and finds across the pages of a journal larger than one call examines', async () => {
    // 40 bodies of 60 KB parsed for bodyJson are more than one call's work: the client follows the cursor.
    for (let i = 0; i < 40; i++) {
      const body = JSON.stringify({ title: `Big ${i}`, text: 'x'.repeat(60_000), start: T0 });
      expect((await fetch(client.urls.annotations, { method: 'POST', headers: demo, body })).status).toBe(200);
    }
    const once = await (await fetch(`${emu.url}/_emulator/journal/count`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"bodyJson":{"start":' + T0 + '}}' })).json();
    expect(once.next).toBeDefined();
    expect(await client.countRequests({ bodyJson: { start: T0 } })).toBe(40);
    expect(await client.findRequests({ bodyJson: { start: T0 } })).toHaveLength(40);
    expect(await client.findRequests({ bodyJson: { start: T0 }, limit: 3 })).toHaveLength(3);
  });

  it('throws EmulatorError with the status and the emulator’s message', async () => {
    const err = await client.lifecycle('grid', 999_999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmulatorError);
    expect(err).toMatchObject({ status: 404, body: { statusCode: 404, error: 'Not Found' } });
    expect((err as EmulatorError).message).toContain('grid 999999 does not exist');
    const bad = await client.countRequests({ path: `/${'x'.repeat(300)}` }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400 });

    const anonymous = new EmulatorClient(emu.url);
    expect((await anonymous.health()).status).toBe('ok');
    await expect(anonymous.reset()).rejects.toMatchObject({ status: 401, message: expect.stringContaining('Authorization') });

    const nowhere = new EmulatorClient('http://127.0.0.1:1');
    await expect(nowhere.health()).rejects.toMatchObject({ name: 'EmulatorError', status: 0 });
  });

  it('creates, lists, drives and deletes sandboxes on a running emulator, each on its own clock', async () => {
    const w1 = await client.createSandbox('client-w1');
    expect((await client.getSandbox('client-w1')).name).toBe('client-w1');
    expect((await client.sandboxes()).sandboxes.map((s) => s.name)).toContain('client-w1');
    const before = (await client.clock()).now;
    await w1.advance(60_000);
    expect((await w1.clock()).now).toBe(before + 60_000);
    expect((await client.clock()).now).toBe(before);
    await client.deleteSandbox('client-w1');
    await expect(client.getSandbox('client-w1')).rejects.toMatchObject({ name: 'EmulatorError', status: 404 });
  });

  it('has the base URL of every interface of the list, by its name', () => {
    const root = new EmulatorClient('http://emulator.test:8080');
    const urls: Record<string, string> = root.urls;
    for (const i of INTERFACES) expect(urls[i.name], `EmulatorClient.urls.${i.name}`).toBe(`http://emulator.test:8080${i.prefix}`);
  });

  it('binds to a sandbox: base URL plus /sandbox/<name>, while sandbox management stays on the root', async () => {
    const calls: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      calls.push(`${init?.method} ${String(input)}`);
      return new Response(JSON.stringify({ sandboxes: [], max: 8, status: 'ok' }), { status: 200 });
    };
    const root = new EmulatorClient('http://emulator.test:8080', { fetch: recording });
    const w3 = root.sandbox('w3');
    expect(w3.url).toBe('http://emulator.test:8080/sandbox/w3');
    expect(w3.urls.provisioning).toBe('http://emulator.test:8080/sandbox/w3/concerto/services/rest/CloudService/v1');
    await w3.advance(5);
    await w3.sandboxes();
    await root.createSandbox('w4');
    await root.getSandbox('w4');
    await new EmulatorClient('http://emulator.test:8080', { fetch: recording, sandbox: 'a b' }).health();
    expect(calls).toEqual([
      'POST http://emulator.test:8080/sandbox/w3/_emulator/clock/advance',
      'GET http://emulator.test:8080/_emulator/sandboxes',
      'PUT http://emulator.test:8080/_emulator/sandboxes/w4',
      'GET http://emulator.test:8080/_emulator/sandboxes/w4',
      'GET http://emulator.test:8080/sandbox/a%20b/_emulator/health',
    ]);
  });
});

describe('the client module itself', () => {
  /** Every module the client loads at run time, following relative imports from src/client/index.ts. */
  function runtimeImports(): { files: string[]; packages: string[] } {
    const files: string[] = [];
    const packages: string[] = [];
    const queue = [resolve('src/client/index.ts')];
    while (queue.length) {
      const file = queue.shift()!;
      if (files.includes(file)) continue;
      files.push(file);
      // What the compiler emits: type-only imports are gone.
      const js = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText;
      for (const [, spec] of js.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(?\s*['"]([^'"]+)['"]/g)) {
        if (spec === undefined) continue;
        if (spec.startsWith('.')) queue.push(join(dirname(file), spec.replace(/\.js$/, '.ts')));
        else packages.push(spec);
      }
    }
    return { files: files.map((f) => relative(process.cwd(), f)), packages };
  }

  it('loads no package and no Node module at run time, so it runs in a browser', () => {
    const { files, packages } = runtimeImports();
    expect(packages).toEqual([]);
    expect(files.every((f) => f.startsWith('src/client/') || f === 'src/http/paths.ts')).toBe(true);
  });
});
