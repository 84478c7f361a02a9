// The in-process cost of sandboxes, without HTTP: run by bench/sandboxes.mjs as
// `node --expose-gc bench/sandbox-inproc.mjs` against the built package, it prints one JSON line.
// A create here is what PUT /_emulator/sandboxes/<name> does once its request is parsed: a new
// World from the seed (fresh stores, built over the seed that every world shares).
//
// Environment: BATCH (creates per batch, default 50), BATCHES (default 20), HELD (sandboxes held
// for the heap measure, default 100), FIXTURES_DIR (default the bundled demo seed).
import { buildApp, loadConfig, loadFixtures } from '../dist/index.js';

const BATCH = Number(process.env.BATCH ?? 50);
const BATCHES = Number(process.env.BATCHES ?? 20);
const HELD = Number(process.env.HELD ?? 100);
const GRID = '/concerto/services/rest/CloudService/v1/grid/101';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const config = loadConfig({ FIXTURES_DIR: process.env.FIXTURES_DIR }, { maxSandboxes: Math.max(BATCH, HELD), logLevel: 'silent' });
const app = await buildApp({ config, fixtures: await loadFixtures(config.fixturesDir) });
await app.ready();
const { sandboxes } = app;

const namesOf = (n) => Array.from({ length: n }, (_, i) => `inproc-${i}`);
const names = namesOf(BATCH);
const createAll = (list = names) => {
  for (const name of list) sandboxes.put(name);
};
const deleteAll = (list = names) => {
  for (const name of list) if (!sandboxes.delete(name)) throw new Error(`no sandbox ${name} to delete`);
};

// Warm-up, so that what is timed is the work and not the compiler.
for (let i = 0; i < 3; i++) {
  createAll();
  deleteAll();
}

let createMs = 0;
let deleteMs = 0;
const batchMs = [];
for (let b = 0; b < BATCHES; b++) {
  const t0 = performance.now();
  createAll();
  const t1 = performance.now();
  deleteAll();
  const t2 = performance.now();
  createMs += t1 - t0;
  deleteMs += t2 - t1;
  batchMs.push(t1 - t0);
}

// Live heap per sandbox: collected before and after, so only what the sandboxes keep counts.
// Each is read once (a grid read in it), as the RSS measure over HTTP does.
globalThis.gc();
const heapBefore = process.memoryUsage().heapUsed;
const held = namesOf(HELD);
createAll(held);
for (const name of held) {
  const res = await app.inject({ method: 'GET', url: `/sandbox/${name}${GRID}`, headers: { 'x-auth-token': 'demo-token' } });
  if (res.statusCode !== 200) throw new Error(`GET ${GRID} in sandbox ${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
}
globalThis.gc();
const heapAfter = process.memoryUsage().heapUsed;
deleteAll(held);
await app.close();

const creates = BATCH * BATCHES;
process.stdout.write(
  `${JSON.stringify({
    creates,
    batch: BATCH,
    createMsEach: createMs / creates,
    deleteMsEach: deleteMs / creates,
    slowestBatchMsEach: Math.max(...batchMs) / BATCH,
    heapBytesPerSandbox: (heapAfter - heapBefore) / HELD,
  })}\n`,
);
