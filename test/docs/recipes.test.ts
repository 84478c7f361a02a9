import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, startEmulator } from '../../src/index.js';
import { ROOT, blocks, read } from './markdown.js';

/**
 * The test-framework recipes of docs/testing-recipes.md that can run here do: the vitest
 * recipe as a test file of this suite, the vitest recipe of one sandbox per worker the same
 * way against an embedded emulator, the pytest recipe with Python against an embedded
 * emulator when Python has pytest, with the Python package of clients/python (its plugin
 * loaded with -p, the package found on PYTHONPATH as an installed one would be).
 */

const PAGE = 'docs/testing-recipes.md';
const recipe = (name: string): string => {
  const found = blocks(PAGE, read(PAGE)).filter((b) => b.recipe === name);
  if (found.length !== 1) throw new Error(`${PAGE}: expected one block marked <!-- recipe: ${name} -->, found ${found.length}`);
  return found[0].text;
};

// The vitest recipe, as a user would save it, with the package name pointing at this
// checkout; its describe() and it() register here, as if it were a file of this suite.
const vitestRecipe = recipe('vitest');
if (!vitestRecipe.includes("from 'cloud-emulator'")) throw new Error(`${PAGE}: the vitest recipe no longer imports from 'cloud-emulator'`);
const folder = join(ROOT, 'test-results', 'docs-recipes');
mkdirSync(folder, { recursive: true });
const file = join(folder, 'vitest-recipe.ts');
writeFileSync(file, vitestRecipe.replace("from 'cloud-emulator'", `from ${JSON.stringify(join(ROOT, 'src', 'index.ts'))}`));
await import(file);

// The sandbox-per-worker recipe, against one emulator started here as its global setup would
// start it; the recipe reads EMULATOR_URL once, when it is imported, and VITEST_POOL_ID, which
// vitest sets in every worker.
const sandboxRecipe = recipe('vitest-sandbox');
if (!sandboxRecipe.includes('process.env.VITEST_POOL_ID')) throw new Error(`${PAGE}: the sandbox recipe no longer names its sandbox after VITEST_POOL_ID`);
// The port is chosen in one place, the global setup (a free one), and handed on in EMULATOR_URL.
for (const [name, text] of [['vitest-sandbox', sandboxRecipe], ['vitest-concurrent', recipe('vitest-concurrent')]]) {
  if (/:\d{2,5}\b/.test(text)) throw new Error(`${PAGE}: the ${name} recipe writes a port of its own: read EMULATOR_URL only`);
}
const sandboxFile = join(folder, 'vitest-sandbox-recipe.ts');
writeFileSync(sandboxFile, sandboxRecipe);
/** Imports a recipe's file with EMULATOR_URL set to `url` (the recipe reads it once, when imported). */
async function importWith(url: string, file: string): Promise<void> {
  const before = process.env.EMULATOR_URL;
  process.env.EMULATOR_URL = url;
  try {
    await import(file);
  } finally {
    if (before === undefined) delete process.env.EMULATOR_URL;
    else process.env.EMULATOR_URL = before;
  }
}
const shared = await startEmulator({ clock: new ManualClock() });
afterAll(() => shared.close());
await importWith(shared.url, sandboxFile);

// The concurrent recipe, against an emulator of its own, so that its sandboxes can be counted.
const concurrentRecipe = recipe('vitest-concurrent');
if (!concurrentRecipe.includes('describe.concurrent')) throw new Error(`${PAGE}: the concurrent recipe no longer uses describe.concurrent`);
const concurrentFile = join(folder, 'vitest-concurrent-recipe.ts');
writeFileSync(concurrentFile, concurrentRecipe);
const concurrentEmu = await startEmulator({ clock: new ManualClock() });
afterAll(() => concurrentEmu.close());
await importWith(concurrentEmu.url, concurrentFile);

describe('the concurrent recipe', () => {
  it('left no sandbox behind and never touched the default world', async () => {
    const list = (await (await fetch(`${concurrentEmu.url}/_emulator/sandboxes`)).json()) as { sandboxes: unknown[] };
    expect(list.sandboxes).toEqual([]);
    const grid = await fetch(`${concurrentEmu.url}/concerto/services/rest/CloudService/v1/grid/101`, { headers: { 'X-Auth-Token': 'demo-token' } });
    expect(((await grid.json()) as { state: string }).state).toBe('LOADED');
  });
});

describe('the sandbox-per-worker recipe', () => {
  it("worked in the worker's own sandbox, not in the default world", async () => {
    const list = (await (await fetch(`${shared.url}/_emulator/sandboxes`)).json()) as { sandboxes: Array<{ name: string }> };
    expect(list.sandboxes.map((s) => s.name)).toEqual([process.env.VITEST_POOL_ID]);
  });
});

// Debian's python3 when there is one (where apt installs pytest), else the first on PATH.
const PYTHON = process.env.PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const python = spawnSync(PYTHON, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0;

describe('the pytest recipe', () => {
  it.skipIf(!python)(
    python ? 'passes against an embedded emulator' : `skipped: ${PYTHON} with pytest is not installed here`,
    async () => {
      const emu = await startEmulator({ port: 0 });
      const dir = mkdtempSync(join(tmpdir(), 'docs-pytest-'));
      try {
        const text = recipe('pytest');
        if (!text.includes('def test_') || !text.includes('(emulator)')) throw new Error(`${PAGE}: the pytest recipe no longer uses the plugin's emulator fixture`);
        writeFileSync(join(dir, 'test_emulator.py'), text);
        const result = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
          const child = spawn(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'cloud_emulator.pytest_plugin', 'test_emulator.py'], {
            cwd: dir,
            env: { ...process.env, CLOUD_EMULATOR_URL: emu.url, PYTHONPATH: join(ROOT, 'clients', 'python', 'src') },
          });
          let output = '';
          child.stdout.on('data', (d) => (output += d));
          child.stderr.on('data', (d) => (output += d));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, output }));
        });
        expect(result.code, result.output).toBe(0);
        expect(result.output).toMatch(/4 passed/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await emu.close();
      }
    },
    60_000,
  );
});
