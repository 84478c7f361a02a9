import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastJsonStringify from 'fast-json-stringify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { PATHS, makeApp } from '../helpers/app.js';
import { SECTION_NAMES, StateSchema, loadFixtures, type SectionName, type State } from '../../src/state.js';
import { exportText, stateFileText, type ListSerializer } from '../../src/world/export-stream.js';
import type { World } from '../../src/world/world.js';

/**
 * The export (GET /_emulator/state) and the state file are written in slices from a snapshot;
 * their bytes must be those the whole state serialised in one call gave: the response
 * schema's serializer for the export, JSON.stringify(file, null, 2) for the file.
 */

const { CLOUD, ANNOTATIONS, ALERTS, REPO } = PATHS;
const DEMO = { 'x-auth-token': 'demo-token' };
/** More annotations than one batch and one sort run hold, their ids in reverse order. */
const EXTRA = 3000;
/** Annotations enough for a write that takes many slices on any machine. */
const MANY = 30_000;

let dir: string;
let app: FastifyInstance;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emulator-export-'));
});
afterEach(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The demo seed plus EXTRA annotations in descending id order, some of them ranges. */
async function bigSeed(count = EXTRA): Promise<Partial<State>> {
  const demo = await loadFixtures(BUNDLED_FIXTURES_DIR);
  const extra = Array.from({ length: count }, (_, i) => ({
    id: 5_000_000 - i,
    title: `Deploy ${i} "quoted" \u00e9 \u2028`,
    text: `line one\nline two ${i}`,
    start: 1_700_000_000_000 + i * 60_000,
    ...(i % 3 === 0 ? { end: 1_700_000_000_000 + i * 60_000 + 1000 } : {}),
    domainIds: i % 5 === 0 ? [] : [demo.domains[i % demo.domains.length].id],
    user: 'someone@example.com',
  }));
  return { ...demo, annotations: [...demo.annotations, ...(extra as State['annotations'])] };
}

/**
 * Changes in every store: a grid, an RSDB and an environment started, a log-in, annotations
 * updated, added and deleted, an alert fired.
 */
async function changeEverything(a: FastifyInstance, prefix = ''): Promise<void> {
  const ok = async (opts: InjectOptions) => {
    const res = await a.inject(opts);
    expect(res.statusCode, `${JSON.stringify(opts)}: ${res.body}`).toBeLessThan(300);
    return res;
  };
  await ok({ method: 'POST', url: `${prefix}${CLOUD}/grid/101/action`, headers: DEMO, payload: { action: 'start' } });
  await ok({ method: 'POST', url: `${prefix}${CLOUD}/rsdb/202/action`, headers: DEMO, payload: { action: 'start' } });
  await ok({ method: 'POST', url: `${prefix}${CLOUD}/environment/301/action`, headers: DEMO, payload: { action: 'start' } });
  await ok({ method: 'PUT', url: `${prefix}${REPO}/Tokens`, payload: { userName: 'demo@example.com', password: 'demo' } });
  // A range added to an annotation that had none (its key goes last), one removed, a title changed.
  await ok({ method: 'PUT', url: `${prefix}${ANNOTATIONS}/4999999`, headers: DEMO, payload: { end: 1_700_000_100_000 } });
  await ok({ method: 'PUT', url: `${prefix}${ANNOTATIONS}/5000000`, headers: DEMO, payload: { end: null, title: 'changed' } });
  await ok({ method: 'PUT', url: `${prefix}${ANNOTATIONS}/4999998`, headers: DEMO, payload: { start: 1_600_000_000_000 } });
  await ok({ method: 'DELETE', url: `${prefix}${ANNOTATIONS}/4999990`, headers: DEMO });
  await ok({ method: 'POST', url: `${prefix}${ANNOTATIONS}`, headers: DEMO, payload: { title: 'new', text: 'added', start: 1_700_000_000_000 } });
  await ok({ method: 'POST', url: `${prefix}${ALERTS}/demo-alert/fire`, headers: DEMO, payload: { message: 'fired' } });
}

/** The serializer the export route had for the whole state: the response schema's. */
const wholeSerializer = fastJsonStringify(StateSchema);
const listSerializers = Object.fromEntries(SECTION_NAMES.map((n) => [n, fastJsonStringify(StateSchema.properties[n])])) as unknown as Record<
  SectionName,
  ListSerializer
>;

async function drain(pieces: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
}

/**
 * The state file as it is defined: the export's object with its clock last (and the real time
 * of the write, `realAt`), sandboxes added, JSON.stringify(_, null, 2).
 */
function fileTextOf(main: World, sandboxes: Array<{ name: string; createdAt: number; lastUsedAt: number; world: World }>, realAt: number): string {
  const withClockLast = (exported: object) => {
    const { clock, ...state } = exported as Record<string, unknown>;
    return { ...state, clock: { ...(clock as object), realAt } };
  };
  const file: Record<string, unknown> = withClockLast(main.exportState());
  if (sandboxes.length) {
    // A sandbox nobody changed since it was made from the seed is a reference to it, with its clock.
    const entry = ({ createdAt, lastUsedAt, world }: (typeof sandboxes)[number]) =>
      world.untouchedFrom() === world.seedState
        ? { createdAt, lastUsedAt, seed: 'fixtures', clock: { ...world.anchor(), realAt } }
        : { createdAt, lastUsedAt, state: withClockLast(world.exportState()) };
    file.sandboxes = Object.fromEntries(sandboxes.map((s) => [s.name, entry(s)]));
  }
  return `${JSON.stringify(file, null, 2)}\n`;
}

describe('GET /_emulator/state, streamed', () => {
  it('answers the bytes of the whole-state serializer, in the default world and in a sandbox', async () => {
    ({ app } = await makeApp(await bigSeed()));
    await changeEverything(app);
    const res = await app.inject({ url: '/_emulator/state' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(wholeSerializer(app.world.exportState()));
    // The annotations in id order, although the seed had them the other way round.
    const ids = (JSON.parse(res.body) as State).annotations.map((a) => a.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    await changeEverything(app, '/sandbox/w1');
    const inSandbox = await app.inject({ url: '/sandbox/w1/_emulator/state' });
    expect(inSandbox.body).toBe(wholeSerializer(app.sandboxes.entries()[0].world.exportState()));
    expect(inSandbox.body).not.toBe(res.body);
  });

  it('writes an empty state as the serializer does', async () => {
    ({ app } = await makeApp({}));
    expect((await app.inject({ url: '/_emulator/state' })).body).toBe(wholeSerializer(app.world.exportState()));
  });
});

describe('the state file, written in slices', () => {
  it('is byte for byte JSON.stringify(file, null, 2), sandboxes included, names of digits first', async () => {
    const file = join(dir, 'state.json');
    ({ app } = await makeApp(await bigSeed(), { stateFile: file, stateFlushIntervalMs: 0 }));
    await changeEverything(app);
    for (const name of ['w1', '10', '2', 'z-9']) expect((await app.inject({ method: 'PUT', url: `/_emulator/sandboxes/${name}` })).statusCode).toBe(201);
    await changeEverything(app, '/sandbox/10');
    await app.statePersistence!.flush();
    const text = await readFile(file, 'utf8');
    expect(text).toBe(fileTextOf(app.world, app.sandboxes.entries(), JSON.parse(text).clock.realAt));
    expect(Object.keys(JSON.parse(text).sandboxes)).toEqual(['2', '10', 'w1', 'z-9']);
    // Only the changed one is written whole; the others are references to the seed.
    expect(Object.values(JSON.parse(text).sandboxes).map((s) => Object.keys(s as object))).toEqual([
      ['createdAt', 'lastUsedAt', 'seed', 'clock'],
      ['createdAt', 'lastUsedAt', 'state'],
      ['createdAt', 'lastUsedAt', 'seed', 'clock'],
      ['createdAt', 'lastUsedAt', 'seed', 'clock'],
    ]);
  });

  it('holds the state of the moment the write began, whatever requests change meanwhile', async () => {
    ({ app } = await makeApp(await bigSeed()));
    const world = app.world;
    // The real time the file says it was written at is the snapshot's own (none here: a snapshot as the world takes it).
    const withoutReal = (text: string) => text.replace(/,\n {4}"realAt": \d+/, '');
    const before = withoutReal(fileTextOf(world, [], 0));
    const exportBefore = wholeSerializer(world.exportState());
    const snapshot = world.snapshot();
    // Both texts are produced after the changes, from the snapshot taken before them.
    await changeEverything(app);
    expect(withoutReal(fileTextOf(world, [], 0))).not.toBe(before);
    expect(await drain(stateFileText(snapshot, []))).toBe(before);
    expect(await drain(exportText(snapshot, SECTION_NAMES, (name) => listSerializers[name as SectionName]))).toBe(exportBefore);
  });

  it('lets timers and requests run while a large state is written out', async () => {
    ({ app } = await makeApp(await bigSeed(MANY)));
    const snapshot = app.world.snapshot();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      await drain(stateFileText(snapshot, []));
    } finally {
      clearInterval(timer);
    }
    // With slices of a few milliseconds the loop turns many times; in one piece it would not once.
    expect(ticks).toBeGreaterThan(0);
  });
});
