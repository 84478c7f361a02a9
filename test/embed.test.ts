import http from 'node:http';
import { Writable } from 'node:stream';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, FixtureError, ManualClock, startEmulator, type RunningEmulator } from '../src/index.js';
import { T0 } from './helpers/app.js';

const REPO = '/concerto/services/rest/RepositoryService/v1';
const USER = { userName: 'embed@example.com', password: 'pw', tenant: 'Default' };
const seed = { users: [USER], tokens: [{ token: 'embed-token', userName: USER.userName, neverExpires: false }] };

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe('startEmulator', () => {
  it('listens on a free port and answers real HTTP requests at its url', async () => {
    emu = await startEmulator({ port: 0, fixtures: seed });
    expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(emu.url).port)).toBeGreaterThan(0);
    const health = await fetch(`${emu.url}/_emulator/health`);
    expect(health.status).toBe(200);
    const objects = await fetch(`${emu.url}${REPO}/Objects/grid`, { headers: { 'X-Auth-Token': 'embed-token' } });
    expect(objects.status).toBe(200);
    expect(emu.provisioningUrl).toBe(`${emu.url}/concerto/services/rest/CloudService/v1`);
    expect(emu.rumUrl).toBe(`${emu.url}/concerto/mpulse`);
  });

  it('resets to real time, and loads an export on its clock or on real time, when asked', async () => {
    const wall = T0 + 1000;
    const clock = new ManualClock(T0, () => wall);
    emu = await startEmulator({ port: 0, fixtures: seed, clock });
    emu.advance(60_000);
    const saved = emu.state();
    expect(saved.clock).toMatchObject({ now: T0 + 60_000 });
    emu.advance(2 * 86_400_000);
    emu.reset();
    expect(emu.now()).toBe(T0 + 60_000 + 2 * 86_400_000);
    emu.reset({ clock: 'real' });
    expect(emu.now()).toBe(wall);
    emu.load(saved, { clock: 'real' });
    expect(emu.now()).toBe(wall);
    emu.load(saved);
    expect(emu.now()).toBe(T0 + 60_000);
  });

  it('seeds from the bundled demo fixtures by default, so the demo token works', async () => {
    emu = await startEmulator();
    const res = await fetch(`${emu.url}${REPO}/Objects/grid`, { headers: { 'X-Auth-Token': 'demo-token' } });
    expect(res.status).toBe(200);
    expect(emu.state().users.some((u) => u.userName === 'demo@example.com')).toBe(true);
  });

  it('seeds from a fixture folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'embed-fixtures-'));
    try {
      await writeFile(join(dir, 'users.json'), JSON.stringify(seed));
      emu = await startEmulator({ fixtures: dir });
      expect(emu.state().tokens.map((t) => t.token)).toEqual(['embed-token']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps STATE_FILE out of a fixture folder given as `fixtures`, so the next start still loads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emu-fixtures-'));
    try {
      await writeFile(join(dir, 'users.json'), JSON.stringify(seed));
      // Before, the guard checked the bundled folder: the state file was written among these
      // fixtures, and the next start failed with "... is also defined in users.json".
      await expect(startEmulator({ fixtures: dir, stateFile: join(dir, 'state.json') })).rejects.toThrow(FixtureError);
      await expect(startEmulator({ fixtures: dir, stateFile: join(dir, 'state.json') })).rejects.toThrow(/is inside the fixtures folder/);
      emu = await startEmulator({ fixtures: dir });
      const objects = await fetch(`${emu.url}${REPO}/Objects/grid`, { headers: { 'X-Auth-Token': 'embed-token' } });
      expect(objects.status).toBe(200);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs on the given clock: advance() moves time for token expiry', async () => {
    const clock = new ManualClock(T0);
    emu = await startEmulator({ fixtures: seed, clock, tokenIdleTimeoutMs: 60_000 });
    expect(emu.clock).toBe(clock);
    expect(emu.now()).toBe(T0);
    const get = () => fetch(`${emu!.url}${REPO}/Objects/grid`, { headers: { 'X-Auth-Token': 'embed-token' } });
    emu.advance(59_000);
    expect((await get()).status).toBe(200);
    emu.advance(60_000);
    expect(emu.now()).toBe(T0 + 119_000);
    expect((await get()).status).toBe(401);
  });

  it('reset() returns to the seed; load() replaces the state', async () => {
    emu = await startEmulator({ fixtures: seed });
    const logout = await fetch(`${emu.url}${REPO}/Tokens/embed-token`, { method: 'DELETE' });
    expect(logout.status).toBe(204);
    const objects = (token: string) => fetch(`${emu!.url}${REPO}/Objects/grid`, { headers: { 'X-Auth-Token': token } });
    expect((await objects('embed-token')).status).toBe(401);
    emu.reset();
    expect((await objects('embed-token')).status).toBe(200);
    emu.load({ users: [USER], tokens: [{ token: 'other', userName: USER.userName, neverExpires: true }] });
    expect((await objects('other')).status).toBe(200);
    expect((await objects('embed-token')).status).toBe(401);
    expect(() => emu!.load({ tokens: [{ token: 'x', userName: 'ghost', neverExpires: true }] })).toThrow(FixtureError);
  });

  it('hands out the default world as `world`, and as the deprecated `emulator` and `app.emulator`', async () => {
    emu = await startEmulator({ fixtures: seed });
    expect(emu.world).toBe(emu.app.world);
    expect(emu.emulator).toBe(emu.world);
    expect(emu.app.emulator).toBe(emu.world);
    expect(Object.keys(emu.world.stores)).toEqual(['repository', 'provisioning', 'annotations', 'compositions', 'query', 'alerts']);
    expect(emu.world.stores.repository.auth.use('embed-token')?.userName).toBe(USER.userName);
  });

  it('takes any setting as an option and refuses bad ones with ConfigError', async () => {
    emu = await startEmulator({ fixtures: seed, alertsRequireToken: true });
    expect(emu.config.alertsRequireToken).toBe(true);
    await expect(startEmulator({ port: -1 })).rejects.toThrow(ConfigError);
    // A typo in plain JavaScript is refused with the nearest name, not silently ignored.
    await expect(startEmulator({ timescale: 0 } as never)).rejects.toThrow("unknown option 'timescale' (did you mean 'timeScale'?)");
    await expect(startEmulator({ fixtures: { tokens: [{ token: 't', userName: 'ghost', neverExpires: true }] } })).rejects.toThrow("no user 'ghost'");
  });

  it('close() lets an in-flight request finish, then stops listening', async () => {
    emu = await startEmulator({ fixtures: seed });
    const { url } = emu;
    // A log-in whose body is still arriving when close() is called.
    const body = JSON.stringify({ userName: USER.userName, password: USER.password });
    const request = http.request(`${url}${REPO}/Tokens`, {
      method: 'PUT',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      request.on('error', reject);
    });
    // Closed once the server has the request's headers (not after a fixed wait, which a busy
    // machine can outlast before the connection is even accepted).
    const seen = new Promise((r) => emu!.app.server.once('request', r));
    request.write(body.slice(0, 10));
    await seen;
    const closing = emu.close();
    emu = undefined;
    await new Promise((r) => setTimeout(r, 50));
    request.end(body.slice(10));
    const answer = await response;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).token).toEqual(expect.any(String));
    await closing;
    await expect(fetch(`${url}/_emulator/health`)).rejects.toThrow();
  });

  it('runs the README example of embedding: a demo grid comes up when time is advanced', async () => {
    emu = await startEmulator({ port: 0, clock: new ManualClock() });
    const headers = { 'X-Auth-Token': 'demo-token', 'Content-Type': 'application/json' };
    const start = await fetch(`${emu.provisioningUrl}/grid/101/action`, { method: 'POST', headers, body: '{"action":"start"}' });
    expect((await start.json()).state).toBe('ALLOCATING');
    emu.advance(60_000);
    const grid = await (await fetch(`${emu.provisioningUrl}/grid/101`, { headers })).json();
    expect(grid.state).toBe('CHECKED');
  });

  it('fails clearly when the port is taken', async () => {
    emu = await startEmulator({ fixtures: seed });
    const port = Number(new URL(emu.url).port);
    await expect(startEmulator({ fixtures: seed, port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

/** A log stream that keeps each JSON line it is given, parsed. */
function logCapture(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('logs', () => {
  it('writes one JSON line per request with its request id, method, url, status and time', async () => {
    const { lines, stream } = logCapture();
    emu = await startEmulator({ fixtures: seed, logger: { level: 'info', stream } });
    const res = await fetch(`${emu.url}/_emulator/health`, { headers: { 'X-Request-Id': 'trace-42' } });
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    await fetch(`${emu.url}/no/such/path`);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ reqId: 'trace-42', method: 'GET', url: '/_emulator/health', statusCode: 200 });
    expect(requests[0].responseTime).toEqual(expect.any(Number));
    expect(requests[1]).toMatchObject({ method: 'GET', url: '/no/such/path', statusCode: 404 });
    expect(requests[1].reqId).toEqual(expect.any(String));
    expect(lines.filter((l) => l.reqId === 'trace-42')).toHaveLength(1);
  });

  it('names the sandbox on the line of a request to /sandbox/<name>/, with the path as sent', async () => {
    const { lines, stream } = logCapture();
    emu = await startEmulator({ fixtures: seed, logger: { level: 'info', stream } });
    await fetch(`${emu.url}/sandbox/w7/_emulator/health`);
    await fetch(`${emu.url}/_emulator/health`);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests[0]).toMatchObject({ sandbox: 'w7', url: '/sandbox/w7/_emulator/health', statusCode: 200 });
    expect(requests[1]).not.toHaveProperty('sandbox');
  });
});
