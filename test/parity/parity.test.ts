import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { runCli } from '../../src/cli/run.js';
import { startRecorder, type Recorder } from '../../src/cli/record.js';
import type { RecordedExchange } from '../../src/cli/recording.js';
import { verifyRecording, verified, type VerifyReport } from '../../src/cli/verify.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { loadFixtures, parseState, emptyState, type State } from '../../src/state.js';
import { T0 } from '../helpers/app.js';

/**
 * Parity: a second emulator, seeded with other secrets and three planted differences, stands
 * in for the real service. A client's run is recorded against it through the recorder, and the
 * recording is verified against an emulator on the demo seed: exactly the planted differences
 * are reported, each at its JSON path. Every recording this file writes is searched for the
 * stand-in's secrets at the end.
 */

const REPO = '/concerto/services/rest/RepositoryService/v1';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';

/** The stand-in's secrets: what no recording may hold. */
const SECRETS = {
  passwords: ['stand-in-demo-pw', 'stand-in-john-pw', 'stand-in-ops-pw'],
  apiTokens: ['stand-in-demo-api-token', 'stand-in-john-api-token', 'stand-in-ops-api-token'],
  tokens: ['stand-in-session-token'],
};

let dir: string;
let demo: State;
let standIn: FastifyInstance;
let standInUrl: string;
let emulator: RunningEmulator;
/** Session tokens the stand-in handed out during the suite: secrets too. */
const handedOut: string[] = [];

/** The demo seed with the stand-in's secrets, one annotation retitled and one more (so the ids it makes differ). */
function standInSeed(): State {
  const seed = structuredClone(demo);
  seed.users = seed.users.map((u, i) => ({ ...u, password: SECRETS.passwords[i], apiToken: SECRETS.apiTokens[i] }));
  seed.tokens = seed.tokens.map((t) => ({ ...t, token: SECRETS.tokens[0] }));
  seed.annotations = seed.annotations.map((a) => (a.id === 1921101 ? { ...a, title: 'Stand-in title' } : a));
  const last = seed.annotations.at(-1)!;
  seed.annotations = [...seed.annotations, { ...last, id: 1930000, title: 'Only in the stand-in' }];
  return parseState({ ...emptyState(), ...seed }, 'stand-in seed');
}

/** Planted in the stand-in's answers: grid 101's `state` is called `gridState`; a created annotation's `start` is a string. */
function plantDifferences(app: FastifyInstance): void {
  app.addHook('onSend', async (request, _reply, payload) => {
    if (typeof payload !== 'string' || request.method !== 'GET') return payload;
    const path = request.url.split('?')[0];
    if (path === `${CLOUD}/grid/101`) {
      const body = JSON.parse(payload) as Record<string, unknown>;
      const { state, ...rest } = body;
      return JSON.stringify({ ...rest, gridState: state });
    }
    if (path.startsWith(`${ANNOTATIONS}/193`)) {
      const body = JSON.parse(payload) as Record<string, unknown>;
      return JSON.stringify({ ...body, start: String(body.start) });
    }
    return payload;
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parity-'));
  demo = await loadFixtures(BUNDLED_FIXTURES_DIR);
  standIn = await buildApp({ clock: new ManualClock(T0), fixtures: standInSeed() });
  plantDifferences(standIn);
  await standIn.listen({ port: 0, host: '127.0.0.1' });
  const address = standIn.server.address() as { port: number };
  standInUrl = `http://127.0.0.1:${address.port}`;
  emulator = await startEmulator({ clock: new ManualClock(T0) });
});

afterAll(async () => {
  await standIn?.close();
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

async function record(name: string, allowWrites: boolean, run: (url: string) => Promise<void>, options: { maxBytes?: number; maxBodyBytes?: number } = {}) {
  const out = join(dir, `${name}.jsonl`);
  const warnings: string[] = [];
  const recorder: Recorder = await startRecorder({ target: new URL(standInUrl), out, allowWrites, warn: (w) => warnings.push(w), ...options });
  try {
    await run(recorder.url);
  } finally {
    await recorder.close();
  }
  const lines = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
  return { out, warnings, stats: recorder.stats(), exchanges: lines.map((l) => JSON.parse(l) as RecordedExchange) };
}

const json = { 'content-type': 'application/json' };

/** A client's run: log in, read grids, create an annotation and read it back, read with an API token, log out. */
async function clientRun(url: string): Promise<{ statuses: number[]; created: number }> {
  const statuses: number[] = [];
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${url}${path}`, init);
    statuses.push(response.status);
    return response;
  };
  const login = await call(`${REPO}/Tokens`, { method: 'PUT', headers: json, body: JSON.stringify({ userName: 'demo@example.com', password: SECRETS.passwords[0] }) });
  const { token } = (await login.json()) as { token: string };
  handedOut.push(token);
  const auth = { 'x-auth-token': token };
  await (await call(`${CLOUD}/grid/101`, { headers: auth })).text();
  await (await call(`${ANNOTATIONS}/1921101`, { headers: auth })).text();
  const created = await call(`${ANNOTATIONS}/`, {
    method: 'POST',
    headers: { ...auth, ...json },
    body: JSON.stringify({ title: 'Deploy 4.15', text: 'from the recorder', start: T0 - 60_000, domainIds: [12346] }),
  });
  const { id } = (await created.json()) as { id: number };
  await (await call(`${ANNOTATIONS}/${id}`, { headers: auth })).text();
  await (await call(`${CLOUD}/grid/103`, { headers: { authorization: `Bearer ${SECRETS.apiTokens[0]}` } })).text();
  await (await call(`${REPO}/Tokens/${token}`, { method: 'DELETE' })).text();
  return { statuses, created: id };
}

const paths = (report: VerifyReport) => report.exchanges.flatMap((e) => e.differences.map((d) => `#${e.seq} ${d.kind} ${d.path}`));

describe('record and verify against a stand-in for the service', () => {
  let recording: string;

  it('passes every exchange through unchanged and records each, secrets masked', async () => {
    let run: Awaited<ReturnType<typeof clientRun>> | undefined;
    const { out, exchanges, stats } = await record('client-run', true, async (url) => {
      run = await clientRun(url);
    });
    recording = out;
    expect(run!.statuses).toEqual([200, 200, 200, 200, 200, 200, 204]);
    expect(run!.created).toBe(1930001);
    expect(stats).toMatchObject({ recorded: 7, dropped: 0, refused: 0, failed: 0 });
    expect(exchanges.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      `PUT ${REPO}/Tokens 200`,
      `GET ${CLOUD}/grid/101 200`,
      `GET ${ANNOTATIONS}/1921101 200`,
      `POST ${ANNOTATIONS}/ 200`,
      `GET ${ANNOTATIONS}/1930001 200`,
      `GET ${CLOUD}/grid/103 200`,
      `DELETE ${REPO}/Tokens/*** 204`,
    ]);
    const [login, grid] = exchanges;
    expect(JSON.parse(login.request.body!)).toEqual({ userName: 'demo@example.com', password: '***' });
    expect(JSON.parse(login.response.body!)).toEqual({ token: '***' });
    expect(grid.request.headers).toEqual({ accept: '*/*', 'x-auth-token': '***' });
    expect(grid.response.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(grid.response.body!)).toMatchObject({ gridState: 'LOADED' });
    expect(exchanges[5].request.headers).toEqual({ accept: '*/*', authorization: 'Bearer ***' });
    expect(grid.durationMs).toBeGreaterThan(0);
  });

  it('reports each planted difference at its JSON path, and nothing else', async () => {
    const report = await verifyRecording(recording, { url: emulator.url });
    expect(paths(report)).toEqual([
      // grid 101: the stand-in calls `state` `gridState`
      '#2 missing $.gridState',
      '#2 extra $.state',
      // annotation 1921101: the stand-in's seed titles it otherwise
      '#3 value changed $.title',
      // the annotation read back: its `start` is a string in the stand-in's answer
      '#5 type changed $.start',
    ]);
    expect(verified(report)).toBe(false);
    // The created annotation's id was carried: the read went to the emulator's own id.
    expect(report.exchanges[4].actualStatus).toBe(200);
    // The log-in was replayed with the emulator's password, the API-token read and the log-out with its session.
    expect(report.exchanges.map((e) => e.actualStatus)).toEqual([200, 200, 200, 200, 200, 200, 204]);
  });

  it('passes with an ignore file that covers the planted differences, and writes Markdown and JUnit', async () => {
    const ignore = join(dir, 'ignore.json');
    await writeFile(
      ignore,
      JSON.stringify({
        ignore: ['$..start'],
        rules: [
          { path: `${CLOUD}/grid/*`, method: 'GET', ignore: ['$.gridState', '$.state'] },
          { path: `${ANNOTATIONS}/19211??`, ignore: ['$.title'] },
        ],
      }),
    );
    const markdown = join(dir, 'report.md');
    const junit = join(dir, 'report.xml');
    let out = '';
    const code = await runCli(['verify', recording, '--url', emulator.url, '--ignore', ignore, '--markdown', markdown, '--junit', junit], {}, {
      out: (t) => void (out += t),
      err: (t) => void (out += t),
    });
    expect(out).toMatch(/7 exchanges, 7 as recorded, 0 differ, 0 skipped; 0 differences, 4 ignored/);
    expect(code).toBe(0);
    expect(await readFile(markdown, 'utf8')).toContain('No differences but ignored ones.');
    expect(await readFile(junit, 'utf8')).toContain('tests="7" failures="0"');
  });

  it('fails naming the JSON paths in its summary, Markdown and JUnit without an ignore file', async () => {
    const markdown = join(dir, 'report-fail.md');
    const junit = join(dir, 'report-fail.xml');
    let out = '';
    const code = await runCli(['verify', recording, '--url', emulator.url, '--markdown', markdown, '--junit', junit], {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
    expect(code).toBe(1);
    expect(out).toContain(`#2 GET ${CLOUD}/grid/101 (recorded 200, answered 200)\n  $.gridState: missing (recorded "LOADED")\n  $.state: extra (answered "LOADED")`);
    expect(out).toContain('$.title: value changed: recorded "Stand-in title", answered "Application update"');
    expect(out).toContain('$.start: type changed: recorded string');
    expect(await readFile(markdown, 'utf8')).toContain('| `$.gridState` | missing | `"LOADED"` |  |');
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('tests="7" failures="3"');
    expect(xml).toContain('<failure message="2 differences">$.gridState: missing');
  });

  it('refuses a mutating call without --allow-writes, with a JSON message saying why, and records only what passed', async () => {
    let status = 0;
    let body: { message?: string } = {};
    const before = standIn.world.exportState().annotations.length;
    const { exchanges, stats } = await record('read-only', false, async (url) => {
      const login = await fetch(`${url}${REPO}/Tokens`, { method: 'PUT', headers: json, body: JSON.stringify({ userName: 'demo@example.com', password: SECRETS.passwords[0] }) });
      const { token } = (await login.json()) as { token: string };
      handedOut.push(token);
      const refused = await fetch(`${url}${ANNOTATIONS}/`, { method: 'POST', headers: { 'x-auth-token': token, ...json }, body: JSON.stringify({ title: 'x', start: T0 }) });
      status = refused.status;
      body = (await refused.json()) as typeof body;
    });
    expect(status).toBe(403);
    expect(body.message).toMatch(/^the recorder passes only reads \(GET, HEAD\), the log-in and the log-out: POST .* start the recorder with --allow-writes to pass it$/);
    expect(stats).toMatchObject({ recorded: 1, refused: 1 });
    expect(exchanges.map((e) => e.method)).toEqual(['PUT']);
    // Nothing was created in the stand-in: the same annotations as before this test.
    expect(standIn.world.exportState().annotations.length).toBe(before);
  });

  it('keeps the recording within --max-bytes, and cuts bodies at --max-body-bytes, masking what is kept', async () => {
    const { exchanges, stats, out, warnings } = await record(
      'bounded',
      false,
      async (url) => {
        const login = await fetch(`${url}${REPO}/Tokens`, { method: 'PUT', headers: json, body: JSON.stringify({ userName: 'john.smith@example.com', password: SECRETS.passwords[1] }) });
        const { token } = (await login.json()) as { token: string };
        handedOut.push(token);
        for (let i = 0; i < 20; i++) await (await fetch(`${url}${CLOUD}/grid/101`, { headers: { 'x-auth-token': token } })).text();
      },
      { maxBytes: 4000, maxBodyBytes: 40 },
    );
    const size = (await readFile(out)).length;
    expect(size).toBeLessThanOrEqual(4000);
    expect(stats.recorded).toBe(exchanges.length);
    expect(stats.recorded + stats.dropped).toBe(21);
    expect(stats.dropped).toBeGreaterThan(0);
    expect(warnings).toEqual(['the recording reached its bound of 4000 bytes (--max-bytes): later exchanges are passed on but not recorded']);
    const grid = exchanges[1];
    expect(grid.response.bodyCut).toBe(true);
    expect(Buffer.byteLength(grid.response.body!)).toBeLessThanOrEqual(40 + 2);
    expect(grid.response.bodyBytes).toBeGreaterThan(40);
    // The log-in's body fits whole: its password masked.
    expect(exchanges[0].request.body).toBe('{"userName":"john.smith@example.com","password":"***"}'.slice(0, 40));
  });
});

describe('renaming one field in an emulator answer', () => {
  it('makes verify fail naming that JSON path', async () => {
    const plain = await startEmulator({ clock: new ManualClock(T0) });
    const renamed = await buildApp({ clock: new ManualClock(T0), fixtures: parseState({ ...emptyState(), ...demo }, 'demo') });
    renamed.addHook('onSend', async (request, _reply, payload) => {
      if (typeof payload !== 'string' || !request.url.startsWith(`${CLOUD}/grid/102`)) return payload;
      const { isFinal, ...rest } = JSON.parse(payload) as Record<string, unknown>;
      return JSON.stringify({ ...rest, final: isFinal });
    });
    await renamed.listen({ port: 0, host: '127.0.0.1' });
    try {
      const out = join(dir, 'plain.jsonl');
      const recorder = await startRecorder({ target: new URL(plain.url), out });
      for (const id of [101, 102]) await (await fetch(`${recorder.url}${CLOUD}/grid/${id}`, { headers: { 'x-auth-token': 'demo-token' } })).text();
      await recorder.close();
      const address = renamed.server.address() as { port: number };
      // The recording holds no log-in: the masked session token is replayed as --token gives it.
      const same = await verifyRecording(out, { url: plain.url, token: 'demo-token' });
      expect(paths(same)).toEqual([]);
      expect(verified(same)).toBe(true);
      const report = await verifyRecording(out, { url: `http://127.0.0.1:${address.port}`, token: 'demo-token' });
      expect(paths(report)).toEqual(['#2 missing $.isFinal', '#2 extra $.final']);
      expect(verified(report)).toBe(false);
    } finally {
      await renamed.close();
      await plain.close();
    }
  });
});

describe('masking', () => {
  it("no recording written by this file holds the stand-in's passwords, API tokens or session tokens", async () => {
    const files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    const secrets = [...SECRETS.passwords, ...SECRETS.apiTokens, ...SECRETS.tokens, ...handedOut];
    expect(handedOut.length).toBeGreaterThanOrEqual(3);
    for (const file of files) {
      const text = await readFile(join(dir, file), 'utf8');
      expect(text.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(text.includes(secret), `${file} holds ${secret}`).toBe(false);
    }
  });
});
