import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * The first ```ts block of a README section (up to the next heading of the same or a higher
 * level), skipping lines inside other code blocks, where a shell comment looks like a heading.
 */
export function codeBlockUnder(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const level = heading.indexOf(' ');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`README has no heading '${heading}'`);
  let fence: string | undefined;
  let code: string[] | undefined;
  for (const line of lines.slice(start + 1)) {
    if (fence === undefined) {
      const heading = /^(#+) /.exec(line);
      if (heading && heading[1].length <= level) break;
      if (line.startsWith('```')) {
        fence = line;
        if (line === '```ts') code = [];
      }
    } else if (line === '```') {
      if (code) return code.join('\n');
      fence = undefined;
    } else {
      code?.push(line);
    }
  }
  throw new Error(`README section '${heading}' has no \`\`\`ts block`);
}

/**
 * Runs a README example as a test file would: the package name stands for the source, and the
 * test functions are the globals a Jest-style suite expects.
 */
async function runExample(heading: string, packages: Record<string, string>) {
  let code = codeBlockUnder(readFileSync('README.md', 'utf8'), heading);
  for (const [name, path] of Object.entries(packages)) code = code.replaceAll(`from '${name}'`, `from '${resolve(path)}'`);
  const dir = mkdtempSync(join(tmpdir(), 'readme-example-'));
  const file = join(dir, 'example.ts');
  writeFileSync(file, code);
  Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test: it });
  try {
    await import(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('README: Embedding in tests', async () => {
  await runExample('### Embedding in tests', { 'cloud-emulator': 'src/index.ts' });
});

describe('README: The control client', async () => {
  await runExample('### The control client', { 'cloud-emulator': 'src/index.ts', 'cloud-emulator/client': 'src/client/index.ts' });
});
