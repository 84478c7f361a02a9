import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
const storageLedgerOf = (_c: unknown) => ({ usedBytes: (_k: string) => 0 });
import { makeDemoApp } from '../helpers/app.js';

const ALERTS = '/concerto/mpulse/api/alerts';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const UID = '5f0c7a2e-9d41-4b7a-8c3e-1a2b3c4d5e6f';
const DEMO = { 'x-auth-token': 'demo-token' };
const JSON_TYPE = { 'content-type': 'application/json' };

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function demo(config: Partial<Config> = {}): Promise<FastifyInstance> {
  // Sandboxes are swept on real time: none may go while a test runs.
  ({ app } = await makeDemoApp({ sandboxIdleTimeoutMs: 0, ...config }));
  return app;
}

const at = (world: string) => (world ? `/sandbox/${world}` : '');
const fire = (a: FastifyInstance, message: string, world = '') =>
  a.inject({ method: 'POST', url: `${at(world)}${ALERTS}/${UID}/fire`, headers: JSON_TYPE, payload: JSON.stringify({ message }) });
const history = async (a: FastifyInstance, world = '') => (await a.inject({ url: `${at(world)}/_emulator/alerts/${UID}` })).json() as { state: string; history: unknown[] };
const annotate = (a: FastifyInstance, text: string, world = '', headers: Record<string, string> = DEMO) =>
  a.inject({ method: 'POST', url: `${at(world)}${ANNOTATIONS}`, headers: { ...headers, ...JSON_TYPE }, payload: JSON.stringify({ title: 'Deploy', start: 1_700_000_000_000, text }) });
const annotationCount = async (a: FastifyInstance, world = '') => (await a.inject({ url: `${at(world)}${ANNOTATIONS}`, headers: DEMO })).json().length as number;
const putObject = (a: FastifyInstance, name: string, body: string, world = '') =>
  a.inject({ method: 'PUT', url: `${at(world)}${REPO}/Objects`, headers: { ...DEMO, ...JSON_TYPE }, payload: JSON.stringify({ type: 'boomerang', name, body }) });
const objectNames = async (a: FastifyInstance, world = '') =>
  ((await a.inject({ url: `${at(world)}${REPO}/Objects/boomerang`, headers: DEMO })).json().objects as Array<{ name: string }>).map((o) => o.name);

describe('alert fires', () => {
  it('refuses a message or subject past ALERT_TEXT_MAX_BYTES with 400, keeping nothing', async () => {
    const a = await demo();
    const before = await history(a);
    const big = await fire(a, 'x'.repeat(1024 * 1024 - 100));
    expect(big.statusCode).toBe(400);
    expect(big.json().message).toBe('the message is 1048476 bytes long (UTF-8); ALERT_TEXT_MAX_BYTES allows at most 8192');
    // Counted in UTF-8: 3,000 characters of three bytes each are 9,000 bytes.
    const wide = await a.inject({ method: 'POST', url: `${ALERTS}/${UID}/fire`, headers: JSON_TYPE, payload: JSON.stringify({ subject: '€'.repeat(3000) }) });
    expect(wide.statusCode).toBe(400);
    expect(wide.json().message).toMatch(/^the subject is 9000 bytes long/);
    expect(await history(a)).toEqual(before);
    expect((await fire(a, 'x'.repeat(8192))).statusCode).toBe(204);
  });

  it('bounds the bytes of a world\'s histories (ALERT_HISTORY_WORLD_MAX_BYTES): past it 507, and the alert stays as it was', async () => {
    const a = await demo({ alertHistoryWorldMaxBytes: 10_000 });
    for (let i = 0; i < 4; i++) expect((await fire(a, 'x'.repeat(2000))).statusCode).toBe(204);
    await a.inject({ method: 'POST', url: `${ALERTS}/${UID}/clear` });
    const before = await history(a);
    expect(before.state).toBe('cleared');
    const refused = await fire(a, 'x'.repeat(2000));
    expect(refused.statusCode).toBe(507);
    expect(refused.json()).toEqual({
      statusCode: 507,
      error: 'Insufficient Storage',
      message: expect.stringMatching(/^this world holds \d+ bytes of alert history added since it was loaded and ALERT_HISTORY_WORLD_MAX_BYTES is 10000: \d+ bytes more do not fit/),
    });
    expect(await history(a)).toEqual(before);
    // A reset gives the world its room back.
    await a.inject({ method: 'POST', url: '/_emulator/reset' });
    expect((await fire(a, 'x'.repeat(2000))).statusCode).toBe(204);
  });

  it('bounds every world\'s histories together (ALERT_HISTORY_MAX_BYTES): a new sandbox is refused 507, and a deleted one gives its bytes back', async () => {
    const a = await demo({ alertHistoryMaxBytes: 14_000 });
    for (const world of ['s1', 's2', 's3']) for (let i = 0; i < 2; i++) expect((await fire(a, 'x'.repeat(1900), world)).statusCode).toBe(204);
    const refused = await fire(a, 'x'.repeat(1900), 's4');
    expect(refused.statusCode).toBe(507);
    expect(refused.json().message).toMatch(/^the emulator holds \d+ bytes of alert history over all worlds and ALERT_HISTORY_MAX_BYTES is 14000/);
    expect((await history(a, 's4')).history).toEqual([]);
    expect((await a.inject({ method: 'DELETE', url: '/_emulator/sandboxes/s1' })).statusCode).toBe(204);
    expect((await fire(a, 'x'.repeat(1900), 's4')).statusCode).toBe(204);
  });

  it('keeps at most 1,000 events of an alert, and the bytes of those dropped are given back', async () => {
    const a = await demo({ rateLimitMax: 10_000, alertHistoryWorldMaxBytes: 1000 * (192 + 10 + 34) + 100 });
    for (let i = 0; i < 1200; i++) {
      const res = await fire(a, `${i}`.padStart(10, '0'));
      expect(res.statusCode, `fire ${i}`).toBe(204);
    }
    expect((await history(a)).history).toHaveLength(1000);
  });
});

describe('annotations', () => {
  it('refuses a create past ANNOTATIONS_WORLD_MAX with 507, and a delete makes room', async () => {
    const a = await demo({ annotationsWorldMax: 3 });
    const count = await annotationCount(a);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await annotate(a, `note ${i}`);
      expect(res.statusCode).toBe(200);
      ids.push(res.json().id);
    }
    const refused = await annotate(a, 'one more');
    expect(refused.statusCode).toBe(507);
    expect(refused.json().message).toMatch(/^this world holds 3 annotations created through the interface and ANNOTATIONS_WORLD_MAX is 3/);
    expect(await annotationCount(a)).toBe(count + 3);
    expect((await a.inject({ method: 'DELETE', url: `${ANNOTATIONS}/${ids[0]}`, headers: DEMO })).statusCode).toBe(204);
    expect((await annotate(a, 'now it fits')).statusCode).toBe(200);
  });

  it('bounds the bytes creates and updates add, per world (ANNOTATIONS_WORLD_MAX_BYTES) and for every world (ANNOTATIONS_MAX_BYTES)', async () => {
    const a = await demo({ annotationsWorldMaxBytes: 250_000, annotationsMaxBytes: 500_000 });
    const text = 'x'.repeat(100_000);
    expect((await annotate(a, text)).statusCode).toBe(200);
    const second = await annotate(a, text);
    expect(second.statusCode).toBe(200);
    const count = await annotationCount(a);
    const refused = await annotate(a, text);
    expect(refused.statusCode).toBe(507);
    expect(refused.json().message).toMatch(/ANNOTATIONS_WORLD_MAX_BYTES is 250000/);
    // An update that grows the text past the bound is refused too, and changes nothing.
    const id = second.json().id as number;
    const update = await a.inject({ method: 'PUT', url: `${ANNOTATIONS}/${id}`, headers: { ...DEMO, ...JSON_TYPE }, payload: JSON.stringify({ text: text.repeat(2) }) });
    expect(update.statusCode).toBe(507);
    expect((await a.inject({ url: `${ANNOTATIONS}/${id}`, headers: DEMO })).json().text).toBe(text);
    expect(await annotationCount(a)).toBe(count);
    // Two sandboxes fill the rest of the process's bound: the third world is refused.
    for (const world of ['s1', 's2']) expect((await annotate(a, text, world)).statusCode).toBe(200);
    const full = await annotate(a, text, 's3');
    expect(full.statusCode).toBe(507);
    expect(full.json().message).toMatch(/ANNOTATIONS_MAX_BYTES is 500000/);
    expect(await annotationCount(a, 's3')).toBe(count - 2);
  });
});

describe('repository objects', () => {
  it('bound all worlds together (REPOSITORY_PROCESS_MAX_BYTES): past it 507 with nothing written; a deleted sandbox gives its bytes back', async () => {
    const a = await demo({ repositoryProcessMaxBytes: 50_000 });
    const body = 'x'.repeat(10_000);
    for (const world of ['s1', 's2']) for (const name of ['one', 'two']) expect((await putObject(a, name, body, world)).statusCode).toBe(200);
    const names = await objectNames(a, 's3');
    const refused = await putObject(a, 'three', `${body}${body}`, 's3');
    expect(refused.statusCode).toBe(507);
    expect(refused.json().message).toMatch(/^the emulator holds \d+ bytes of repository objects over all worlds and REPOSITORY_PROCESS_MAX_BYTES is 50000/);
    expect(await objectNames(a, 's3')).toEqual(names);
    expect((await a.inject({ method: 'DELETE', url: '/_emulator/sandboxes/s1' })).statusCode).toBe(204);
    expect((await putObject(a, 'three', `${body}${body}`, 's3')).statusCode).toBe(200);
  });

  it('a reset of a world gives back what it held', async () => {
    const a = await demo({ repositoryProcessMaxBytes: 30_000 });
    const body = 'x'.repeat(10_000);
    expect((await putObject(a, 'one', body)).statusCode).toBe(200);
    expect((await putObject(a, 'two', body)).statusCode).toBe(200);
    expect((await putObject(a, 'three', body, 's1')).statusCode).toBe(507);
    await a.inject({ method: 'POST', url: '/_emulator/reset' });
    expect((await putObject(a, 'three', body, 's1')).statusCode).toBe(200);
    expect(storageLedgerOf(a.world.config).usedBytes('repository')).toBeLessThan(11_000);
  });
});

describe('the state file', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('is never switched off by a flood of fires: a fire that would pass STATE_FILE_WORLD_MAX_BYTES is refused (507), and the file goes on being written', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-bounds-'));
    const a = await demo({ stateFile: join(dir, 'state.json'), stateFlushIntervalMs: 0, stateFileWorldMaxBytes: 200_000, stateFileMaxBytes: 1_000_000 });
    let refused;
    for (let i = 0; i < 100 && !refused; i++) {
      const res = await fire(a, 'x'.repeat(8000));
      if (res.statusCode !== 204) refused = res;
    }
    expect(refused?.statusCode).toBe(507);
    expect(refused?.json().message).toMatch(/^keeping \d+ bytes more would take the default world past STATE_FILE_WORLD_MAX_BYTES \(200000 bytes\) in the state file/);
    await a.statePersistence!.flush();
    expect(a.statePersistence!.status().ok).toBe(true);
    expect((await a.inject({ url: '/_emulator/health' })).statusCode).toBe(200);
    // Later changes are still written.
    await a.inject({ method: 'POST', url: `${ALERTS}/${UID}/clear` });
    const writes = a.statePersistence!.writes;
    await a.statePersistence!.flush();
    expect(a.statePersistence!.writes).toBe(writes + 1);
    expect(a.statePersistence!.status().ok).toBe(true);
  });

  it('refuses what would take the whole file past STATE_FILE_MAX_BYTES, spread over sandboxes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-bounds-'));
    const a = await demo({ stateFile: join(dir, 'state.json'), stateFlushIntervalMs: 0, stateFileMaxBytes: 600_000 });
    let refused;
    let kept = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      const res = await fire(a, 'x'.repeat(8000), `s${i % 3}`);
      if (res.statusCode !== 204) refused = res;
      else kept++;
    }
    expect(refused?.statusCode).toBe(507);
    expect(refused?.json().message).toMatch(/past STATE_FILE_MAX_BYTES \(600000 bytes; about \d+: 4 worlds of \d+ bytes, \d+ added by requests\)/);
    // Four copies of the demo seed (about 47 KB each, indented as sandboxes) leave room for about
    // 45 copies of an 8 KB message: about 15 fires, each keeping it three times (in the history,
    // and in the payloads of the alert's e-mail and webhook deliveries).
    expect(kept).toBeGreaterThan(10);
    await a.statePersistence!.flush();
    expect(a.statePersistence!.status().error).toBeUndefined();
    expect(a.statePersistence!.status().ok).toBe(true);
  });
});

describe('the rate limit of annotations', () => {
  it('counts per user and world: logging in again does not give a new budget, another world has its own', async () => {
    const a = await demo({ rateLimitMax: 3 });
    const login = async () => {
      const res = await a.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'demo@example.com', password: 'demo' } });
      return { 'x-auth-token': res.json().token as string };
    };
    const first = await login();
    for (let i = 0; i < 3; i++) expect((await a.inject({ url: ANNOTATIONS, headers: first })).statusCode).toBe(200);
    expect((await a.inject({ url: ANNOTATIONS, headers: first })).statusCode).toBe(429);
    const again = await login();
    const limited = await a.inject({ url: ANNOTATIONS, headers: again });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().message).toMatch(/^rate limit exceeded: at most 3 requests per 1 minute per user;/);
    // The seed's token is the same user's: the same budget.
    expect((await a.inject({ url: ANNOTATIONS, headers: DEMO })).statusCode).toBe(429);
    expect((await annotate(a, 'x', '', again)).statusCode).toBe(429);
    // Another user, and the same user in a sandbox, count on their own.
    const other = await a.inject({ method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'john.smith@example.com', password: 's3cret!' } });
    expect((await a.inject({ url: ANNOTATIONS, headers: { 'x-auth-token': other.json().token } })).statusCode).toBe(200);
    expect((await a.inject({ url: `/sandbox/s1${ANNOTATIONS}`, headers: DEMO })).statusCode).toBe(200);
  });
});
