import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, blocks, read } from '../docs/markdown.js';

/** The code block of a documentation page marked `<!-- recipe: name -->`. */
function recipe(page: string, name: string): string {
  const found = blocks(page, read(page)).filter((b) => b.recipe === name);
  if (found.length !== 1) throw new Error(`${page}: expected one block marked <!-- recipe: ${name} -->, found ${found.length}`);
  return found[0].text;
}

/**
 * Runs a documented example as a user's file would: the package names stand for the source,
 * and the test functions are the globals a Jest-style suite expects.
 */
async function runExample(page: string, name: string, packages: Record<string, string>) {
  let code = recipe(page, name);
  for (const [pkg, path] of Object.entries(packages)) {
    if (!code.includes(`from '${pkg}'`)) throw new Error(`${page}: the ${name} example no longer imports from '${pkg}'`);
    code = code.replaceAll(`from '${pkg}'`, `from '${resolve(ROOT, path)}'`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'doc-example-'));
  const file = join(dir, 'example.ts');
  writeFileSync(file, code);
  Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test: it });
  try {
    await import(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docs/embedding.md: the example of startEmulator()', () => {
  // The example asserts, with node:assert, that the demo grid it starts is CHECKED a minute later.
  it('runs: a demo grid comes up when time is advanced', async () => {
    await runExample('docs/embedding.md', 'embedding', { 'cloud-emulator': 'src/index.ts' });
  });
});

describe('docs/client.md: The control client', async () => {
  await runExample('docs/client.md', 'client', { 'cloud-emulator': 'src/index.ts', 'cloud-emulator/client': 'src/client/index.ts' });
});
