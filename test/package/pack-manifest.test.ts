import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../docs/markdown.js';

/**
 * The tarball's package.json has no scripts: a project installing the package gets no
 * `prepare` (npm 11 warns of every install script it has not allowed) and none of the
 * repository's development scripts. Checked with npm itself on a small package that packs
 * the way this one does (packing this one builds it first, minutes on a busy machine).
 */

const run = promisify(execFile);
const PACK = join(ROOT, 'scripts', 'pack-manifest.mjs');
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the packed package.json', () => {
  it('this package packs through scripts/pack-manifest.mjs: strip before, restore after', async () => {
    const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(scripts.prepack).toMatch(/&& node scripts\/pack-manifest\.mjs strip$/);
    expect(scripts.postpack).toBe('node scripts/pack-manifest.mjs restore');
    expect(scripts.prepare).toBeDefined(); // a clone's npm ci still builds
  });

  it('npm pack writes a package.json without scripts into the tarball, and leaves the folder’s as it was', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pack-manifest-'));
    const manifest = {
      name: 'packed-like-this-one',
      version: '1.0.0',
      bin: { 'packed-like-this-one': 'cli.js' },
      files: ['cli.js'],
      scripts: {
        prepare: 'node -e 0',
        test: 'vitest run',
        prepack: `node ${JSON.stringify(PACK)} strip`,
        postpack: `node ${JSON.stringify(PACK)} restore`,
      },
    };
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    await writeFile(join(dir, 'package.json'), text);
    await writeFile(join(dir, 'cli.js'), '#!/usr/bin/env node\n');
    const { stdout } = await run('npm', ['pack', '--json', '--silent'], { cwd: dir, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
    const { stdout: packed } = await run('tar', ['-xzOf', join(dir, filename), 'package/package.json']);
    const inside = JSON.parse(packed);
    expect(inside.scripts).toBeUndefined();
    expect(inside).toMatchObject({ name: manifest.name, version: '1.0.0', bin: manifest.bin });
    expect(await readFile(join(dir, 'package.json'), 'utf8')).toBe(text);
  }, 60_000);
});
