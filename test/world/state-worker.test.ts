import { Readable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { ImportQueue, configureStateWorker, importsHeld, readBody, readStateBody, slicesOf, stateWorkersStarted, type StateBody } from '../../src/world/state-parser.js';
import { SECTION_NAMES, loadFixtures, parseState, type State } from '../../src/state.js';
import { makeApp } from '../helpers/app.js';
import { STATE_BODY_LIMIT } from '../../src/control/state-routes.js';

/**
 * A large posted state is parsed and validated in a worker thread. Here every body goes
 * there (the size from which it does is set to 0), the worker running the TypeScript sources
 * through a loader: its answers must be those of the same body read on the calling thread.
 */

beforeAll(() => {
  configureStateWorker({
    entry: {
      url: new URL('../../src/state-worker.ts', import.meta.url),
      execArgv: ['--import', new URL('../helpers/ts-worker-loader.mjs', import.meta.url).href],
    },
    minBytes: 0,
  });
});

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Waits until `n` bodies are waiting or being read in workers. */
async function untilHeld(n: number): Promise<void> {
  for (let i = 0; i < 2000 && importsHeld() < n; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(importsHeld()).toBe(n);
}

/** What reading a body gives, or the error it throws (class and message). */
async function outcome(read: () => StateBody | Promise<StateBody>): Promise<StateBody | { threw: string; fixture: boolean; message: string }> {
  try {
    return await read();
  } catch (err) {
    return { threw: (err as Error).name, fixture: err instanceof FixtureError, message: (err as Error).message };
  }
}

/** The demo seed with enough annotations for the state to come back in several slices. */
async function largeState(): Promise<State> {
  // The presenter view's title belongs to the fixtures the emulator started with (these tests start it with none): left out.
  const { demo: _title, ...demo } = await loadFixtures(BUNDLED_FIXTURES_DIR);
  const extra = Array.from({ length: 4000 }, (_, i) => ({ ...demo.annotations[0], id: 7_000_000 + i, title: `Deploy ${i}` }));
  return { ...demo, $schema: './fixture.schema.json', annotations: [...demo.annotations, ...extra] };
}

describe('a posted state read in a worker thread', () => {
  it('answers what the calling thread answers, for good bodies and every kind of bad one', async () => {
    const good = JSON.stringify(await largeState());
    const bodies = [
      good,
      `\uFEFF${good}`,
      '{"grids": [',
      'not json',
      '{"__proto__": {"x": 1}}',
      '{"constructor": {"prototype": {"x": 1}}}',
      'null',
      '""',
      '"text"',
      '[]',
      '5',
      '{"grids": [{"id": "x"}]}',
      '{"tokens": [{"token": "t", "userName": "ghost", "neverExpires": true}]}',
      '{"unknown": []}',
    ];
    for (const text of bodies) {
      const body = Buffer.from(text);
      const inWorker = await outcome(() => readStateBody(Buffer.from(body), 'body', parseState));
      expect(inWorker, text.slice(0, 60)).toEqual(await outcome(() => readBody(body, 'body', parseState)));
    }
  }, 120_000);

  it('hands a large state over in slices, whole and in order', async () => {
    const state = await largeState();
    const text = JSON.stringify(state);
    expect([...slicesOf(state, SECTION_NAMES)].filter((slice) => slice.name === 'annotations').length).toBeGreaterThan(1);
    const read = await readStateBody(Buffer.from(text), 'body', parseState);
    const inline = readBody(Buffer.from(text), 'body', parseState);
    if (read.kind !== 'state' || inline.kind !== 'state') throw new Error(`not read as a state: ${read.kind}, ${inline.kind}`);
    // The same keys in the same order ($schema first, as posted), the same entries.
    expect(Object.keys(read.state)).toEqual(Object.keys(inline.state));
    expect(read.state).toEqual(inline.state);
  }, 120_000);

  it('reads a body that came in many chunks, a character split across two, as the same body whole', async () => {
    const state = await largeState();
    state.annotations[0] = { ...state.annotations[0], title: 'Déploiement — ünïcode' };
    const whole = Buffer.from(JSON.stringify(state));
    // Chunks of 1,000 bytes: some end inside a multi-byte character.
    const chunks = Array.from({ length: Math.ceil(whole.length / 1000) }, (_, i) => whole.subarray(i * 1000, (i + 1) * 1000));
    const read = await readStateBody(chunks, 'body', parseState);
    const inline = readBody(whole, 'body', parseState);
    if (read.kind !== 'state' || inline.kind !== 'state') throw new Error(`not read as a state: ${read.kind}, ${inline.kind}`);
    expect(read.state).toEqual(inline.state);
    expect(read.state.annotations[0].title).toBe('Déploiement — ünïcode');
    // The chunks are copied, never moved: they are still whole.
    expect(Buffer.concat(chunks).equals(whole)).toBe(true);
  }, 120_000);

  it('imports a body streamed in many chunks, and answers 413 past the limit and 400 for a wrong Content-Length', async () => {
    ({ app } = await makeApp({}));
    const state = await largeState();
    const text = Buffer.from(JSON.stringify(state));
    const streamed = Readable.from(Array.from({ length: Math.ceil(text.length / 4096) }, (_, i) => text.subarray(i * 4096, (i + 1) * 4096)));
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: streamed, headers: { 'content-type': 'application/json' } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().counts.annotations).toBe(state.annotations.length);
    const huge = await app.inject({
      method: 'PUT',
      url: '/_emulator/sandboxes/big',
      payload: '{}',
      headers: { 'content-type': 'application/json', 'content-length': String(STATE_BODY_LIMIT + 1) },
    });
    expect(huge.statusCode).toBe(413);
    const short = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: '{}', headers: { 'content-type': 'application/json', 'content-length': '1' } });
    expect(short.statusCode).toBe(400);
    // Neither changed anything.
    expect((await app.inject({ url: '/_emulator/sandboxes/big' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/_emulator/state' })).json().annotations).toHaveLength(state.annotations.length);
  }, 120_000);

  it('keeps its worker for the next import, after a refused body as after a state', async () => {
    const good = Buffer.from(JSON.stringify(await largeState()));
    await readStateBody(Buffer.from('not json'), 'body', parseState);
    const before = stateWorkersStarted();
    expect((await readStateBody(Buffer.from(good), 'body', parseState)).kind).toBe('state');
    expect((await readStateBody(Buffer.from('{"grids": [{"id": "x"}]}'), 'body', parseState).catch((err: Error) => err)) instanceof FixtureError).toBe(true);
    const again = await readStateBody(Buffer.from(good), 'body', parseState);
    if (again.kind !== 'state') throw new Error(`not read as a state: ${again.kind}`);
    expect(again.state).toEqual((readBody(good, 'body', parseState) as { state: State }).state);
    // Not one worker started for those three imports: the one of the first was kept.
    expect(stateWorkersStarted()).toBe(before);
  }, 120_000);

  it('keeps the event loop turning while it reads', async () => {
    const body = Buffer.from(JSON.stringify(await largeState()));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      await readStateBody(body, 'body', parseState);
    } finally {
      clearInterval(timer);
    }
    // Read on the calling thread, the timer could not fire once before the answer.
    expect(ticks).toBeGreaterThan(0);
  }, 120_000);

  it('serves PUT /_emulator/state and a sandbox PUT from it, and answers 400s as before', async () => {
    ({ app } = await makeApp({}));
    const state = await largeState();
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
    expect(put.statusCode).toBe(200);
    expect(put.json().counts.annotations).toBe(state.annotations.length);
    const exported = (await app.inject({ url: '/_emulator/state' })).json();
    expect(exported.annotations).toHaveLength(state.annotations.length);

    const sandbox = await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1', payload: exported });
    expect(sandbox.statusCode).toBe(201);
    expect((await app.inject({ url: '/sandbox/w1/_emulator/state' })).body).toBe((await app.inject({ url: '/_emulator/state' })).body);
    // JSON null is the seed, as no body is.
    const fromNull = await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w2', payload: 'null', headers: { 'content-type': 'application/json' } });
    expect(fromNull.statusCode).toBe(201);
    expect(fromNull.json().counts.annotations).toBe(0);

    const bad = async (payload: string) => {
      const res = await app!.inject({ method: 'PUT', url: '/_emulator/state', payload, headers: { 'content-type': 'application/json' } });
      return { status: res.statusCode, message: res.json().message as string };
    };
    expect(await bad('{"grids": [')).toEqual({ status: 400, message: 'the body is not valid JSON' });
    expect(await bad('{"__proto__": {}}')).toEqual({ status: 400, message: 'the body is not valid JSON' });
    expect(await bad('[]')).toEqual({ status: 400, message: 'body: expected a JSON object with the state sections (users, tokens, grids, ...)' });
    expect(await bad('{"grids": [{"id": "x"}]}')).toMatchObject({ status: 400, message: expect.stringContaining('body: $.grids[0].id: Expected integer') });
    // Each problem on its own too, across the thread as on it.
    const refused = await app!.inject({ method: 'PUT', url: '/_emulator/state', payload: '{"grids": [{"id": "x"}]}', headers: { 'content-type': 'application/json' } });
    expect(refused.json().problems).toContainEqual({ path: '$.grids[0].id', message: 'Expected integer, got "x"', text: 'body: $.grids[0].id: Expected integer, got "x"' });
    expect((await bad('')).status).toBe(400);
    // The old state is kept after every refusal.
    expect((await app.inject({ url: '/_emulator/state' })).json().annotations).toHaveLength(state.annotations.length);
  }, 120_000);

  it("keeps one world's large import from holding up another world's", async () => {
    ({ app } = await makeApp({}));
    const { demo: _title, ...demo } = await loadFixtures(BUNDLED_FIXTURES_DIR);
    const many = Array.from({ length: 60_000 }, (_, i) => ({ ...demo.annotations[0], id: 9_000_000 + i, title: `Deploy ${i}` }));
    const big = JSON.stringify({ ...demo, annotations: [...demo.annotations, ...many] });
    const small = JSON.stringify(demo);
    const done: string[] = [];
    const put = (name: string, payload: string) =>
      app!
        .inject({ method: 'PUT', url: `/_emulator/sandboxes/${name}`, payload, headers: { 'content-type': 'application/json' } })
        .then((res) => {
          done.push(name);
          return res.statusCode;
        });
    const a = put('a', big);
    // The small one is sent once the large one is being read; which ends first is up to the
    // machine (the test below shows, without timing, that the lines are apart).
    await untilHeld(1);
    const b = put('b', small);
    expect(await Promise.all([a, b])).toEqual([201, 201]);
    expect(done.sort()).toEqual(['a', 'b']);
  }, 120_000);

  it('reads each world in its own line: one held import does not hold up another world, only its own', async () => {
    const queue = new ImportQueue();
    const bounds = { maxBodies: 10, maxBytes: 1000 };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const a1 = queue.run('a', 10, bounds, () => gate.then(() => order.push('a1')));
    const a2 = queue.run('a', 10, bounds, async () => order.push('a2'));
    const b = queue.run('b', 10, bounds, async () => order.push('b'));
    await b;
    expect(order).toEqual(['b']);
    expect(queue.held).toBe(2);
    release();
    await Promise.all([a1, a2]);
    expect(order).toEqual(['b', 'a1', 'a2']);
    expect(queue.held).toBe(0);
  });

  it('refuses an import past IMPORT_QUEUE_MAX with 503 and Retry-After, and changes nothing', async () => {
    ({ app } = await makeApp({}, { importQueueMax: 1 }));
    const state = await largeState();
    const payload = JSON.stringify(state);
    const headers = { 'content-type': 'application/json' };
    const first = app.inject({ method: 'PUT', url: '/_emulator/sandboxes/a', payload, headers });
    await untilHeld(1);
    const second = await app.inject({ method: 'PUT', url: '/_emulator/state', payload, headers });
    expect(second.statusCode).toBe(503);
    expect(second.headers['retry-after']).toBe('5');
    expect(second.json().message).toMatch(/too many state imports under way .*IMPORT_QUEUE_MAX is 1/);
    expect((await first).statusCode).toBe(201);
    // The refused one changed nothing; once the first is done, the same import goes through.
    expect((await app.inject({ url: '/_emulator/state' })).json().annotations).toHaveLength(0);
    const again = await app.inject({ method: 'PUT', url: '/_emulator/state', payload, headers });
    expect(again.statusCode).toBe(200);
  }, 120_000);
});
