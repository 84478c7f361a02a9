import { execFile, execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * scripts/image-files.mjs, as the Dockerfile runs it: `prune` decides which files of the
 * production dependencies reach the image, `rootfs` which files of the base image do. The
 * container test (npm run test:container) runs the image built from them.
 */
const SCRIPT = join(import.meta.dirname, '../../scripts/image-files.mjs');
const run = promisify(execFile);

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});
async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'image-files-'));
  dirs.push(dir);
  return dir;
}

async function files(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out.push(relative(root, path));
    }
  };
  await walk(root);
  return out.sort();
}

describe('prune', () => {
  it('drops what Node never loads and keeps code, data and licences, whatever folder they are in', async () => {
    const root = await tempDir();
    const nm = join(root, 'node_modules');
    const tree: Record<string, string> = {
      'pkg/package.json': '{}',
      'pkg/index.js': 'x',
      'pkg/index.d.ts': 'x',
      'pkg/index.js.map': 'x',
      'pkg/README.md': 'x',
      'pkg/CHANGELOG.markdown': 'x',
      'pkg/LICENSE': 'x',
      'pkg/LICENSE.md': 'x',
      'pkg/.npmignore': 'x',
      'pkg/test/index.test.js': 'x',
      'pkg/docs/guide.js': 'x',
      'pkg/benchmarks/run.js': 'x',
      'pkg/lib/test/helper.js': 'kept: not at the top of the package',
      'pkg/types/index.d.ts': 'x',
      'pkg/node_modules/inner/package.json': '{}',
      'pkg/node_modules/inner/main.cjs': 'x',
      'pkg/node_modules/inner/examples/e.js': 'x',
      // Run-time data in folders whose names look like documentation or types.
      'mime/package.json': '{}',
      'mime/types/standard.js': 'x',
      'yaml/package.json': '{}',
      'yaml/dist/doc/Document.js': 'x',
      '@scope/p/package.json': '{}',
      '@scope/p/lib/y.mjs': 'x',
      '@scope/p/src/x.ts': 'x',
      '@scope/p/src/y.mts': 'x',
      '@scope/p/.github/workflows/ci.yml': 'x',
      '@scope/p/static/app.css': 'x',
      '@scope/p/static/app.js.map': 'x',
      '.package-lock.json': '{}',
    };
    for (const [path, text] of Object.entries(tree)) {
      await mkdir(dirname(join(nm, path)), { recursive: true });
      await writeFile(join(nm, path), text);
    }
    await mkdir(join(nm, '.bin'));
    await symlink('../pkg/index.js', join(nm, '.bin/pkg'));

    const { stdout } = await run(process.execPath, [SCRIPT, 'prune', nm]);

    expect(await files(nm)).toEqual([
      '@scope/p/lib/y.mjs',
      '@scope/p/package.json',
      '@scope/p/static/app.css',
      'mime/package.json',
      'mime/types/standard.js',
      'pkg/LICENSE',
      'pkg/LICENSE.md',
      'pkg/index.js',
      'pkg/lib/test/helper.js',
      'pkg/node_modules/inner/main.cjs',
      'pkg/node_modules/inner/package.json',
      'pkg/package.json',
      'yaml/dist/doc/Document.js',
      'yaml/package.json',
    ]);
    // Folders left empty go too.
    await expect(stat(join(nm, 'pkg/types'))).rejects.toThrow();
    await expect(stat(join(nm, '@scope/p/src'))).rejects.toThrow();
    expect(stdout).toMatch(/^prune .*node_modules: removed 16 files, 0\.0 MB$/m);
  });

  it('refuses a call without a folder', async () => {
    await expect(run(process.execPath, [SCRIPT, 'prune'])).rejects.toMatchObject({ code: 2 });
  });
});

describe.skipIf(process.platform !== 'linux')('rootfs', () => {
  it('holds this node, its loader and libraries under the names the loader asks for, the users and /tmp', { timeout: 60_000 }, async () => {
    const root = join(await tempDir(), 'rootfs');
    const { stdout } = await run(process.execPath, [SCRIPT, 'rootfs', root]);
    const node = join(root, 'usr/local/bin/node');
    expect((await stat(node)).size).toBe((await stat(realpathSync(process.execPath))).size);
    expect((await stat(node)).mode & 0o777).toBe(0o755);
    const loader = /loader (\S+);/.exec(stdout)?.[1];
    const libraries = /libraries (.*)$/m.exec(stdout)?.[1].split(' ') ?? [];
    expect(loader).toMatch(/^\/.*ld-/);
    expect(libraries.some((lib) => /libc\b|ld-musl/.test(lib))).toBe(true);
    // The loader's name resolves inside the new root, through the same links as here.
    for (const file of [loader!, ...libraries]) expect((await stat(join(root, file))).isFile()).toBe(true);
    expect(await readFile(join(root, 'etc/passwd'), 'utf8')).toMatch(/^node:x:1000:1000:/m);
    expect(await readFile(join(root, 'etc/group'), 'utf8')).toMatch(/^root:x:0:$/m);
    expect((await lstat(join(root, 'tmp'))).mode & 0o7777).toBe(0o1777);
    for (const dir of ['data', 'home/node', 'app']) expect((await stat(join(root, dir))).isDirectory()).toBe(true);
    // Nothing else of this machine: no shell, no npm.
    await expect(lstat(join(root, 'bin/sh'))).rejects.toThrow();
    await expect(stat(join(root, 'usr/lib/node_modules/npm'))).rejects.toThrow();
  });

  it.skipIf(process.getuid?.() !== 0)('makes a file system that node starts in, as the only program there', { timeout: 60_000 }, async () => {
    const root = join(await tempDir(), 'rootfs');
    await run(process.execPath, [SCRIPT, 'rootfs', root]);
    const out = execFileSync('chroot', ['--userspec=1000:1000', root, '/usr/local/bin/node', '-p', 'process.version + " " + require("os").userInfo().username'], { encoding: 'utf8' });
    expect(out.trim()).toBe(`${process.version} node`);
  });
});
