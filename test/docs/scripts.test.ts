import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, documents, read } from './markdown.js';

/**
 * Every npm script the README and docs/ tell a user to run, and every script file they name
 * (`node bench/startup.mjs`), is checked without the minutes most of them take: the script
 * exists in package.json, every file each of its commands runs or reads exists, every file
 * those import (statically or not, `dist/` read as the `src/` it is built from) exists, and
 * each script file of scripts/ and bench/ answers `--help`, which it does only once all of
 * its imports have loaded. So a moved file cannot break a documented command silently.
 */

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** Names `npm run` is given in the documentation that are not this package's scripts, and why. */
const FOREIGN: Record<string, string> = { dev: "the reader's own application, in a Playwright recipe" };

/** Script names and script files the documentation tells a user to run. */
function documented(): { scripts: Set<string>; files: Set<string> } {
  const scripts = new Set<string>();
  const files = new Set<string>();
  for (const doc of documents()) {
    const text = read(doc);
    for (const m of text.matchAll(/\bnpm (?:run(?: -s)? ([a-z][\w:-]*)|(test|start)\b)/g)) scripts.add(m[1] ?? m[2]);
    for (const m of text.matchAll(/\bnode ((?:bench|scripts)\/[\w.-]+\.mjs)\b/g)) files.add(m[1]);
  }
  for (const name of Object.keys(FOREIGN)) scripts.delete(name);
  return { scripts, files };
}

/** A file under dist/ as the source it is built from; any other path as it is. */
function source(path: string): string {
  const rel = relative(ROOT, path);
  if (!rel.startsWith(`dist/`)) return path;
  const inSrc = join(ROOT, 'src', rel.replace(/^dist\/(cjs\/)?/, ''));
  if (existsSync(inSrc)) return inSrc;
  return inSrc.replace(/\.js$/, '.ts');
}

/** Relative imports and `new URL('./x', import.meta.url)` references of a script file. */
function references(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [
    ...text.matchAll(/\bfrom\s*['"](\.\.?\/[^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"](\.\.?\/[^'"]+)['"]\s*\)/g),
    ...text.matchAll(/new URL\(\s*['"](\.\.?\/[^'"]+\.(?:m?js|cjs|ts))['"],\s*import\.meta\.url\)/g),
  ];
  return found.map((m) => normalize(join(dirname(file), m[1])));
}

/** Files a script file reaches through its references that do not exist, as "from -> to". */
function brokenReferences(start: string): string[] {
  const broken: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const target of references(file)) {
      const where = source(target);
      if (!existsSync(where)) broken.push(`${relative(ROOT, file)} -> ${relative(ROOT, target)}`);
      // Inside dist/ the build resolves imports; tsc checks those. Script files are followed.
      else if (/\.(mjs|js)$/.test(where) && !relative(ROOT, where).startsWith('src/')) visit(where);
    }
  };
  visit(start);
  return broken;
}

interface Step {
  script: string;
  command: string;
}

/** The commands a script runs, `npm run X` replaced by X's own. */
function steps(script: string, seen = new Set<string>()): Step[] {
  const body = pkg.scripts[script];
  if (body === undefined || seen.has(script)) return [];
  seen.add(script);
  return body.split('&&').flatMap((part) => {
    const command = part.trim();
    const npm = /^npm run(?: -s)? ([\w:-]+)/.exec(command);
    return npm ? steps(npm[1], seen) : [{ script, command }];
  });
}

/** What is wrong with one command: files it names that are missing, a shape not known here. */
function problems({ script, command }: Step): string[] {
  // Settings in front of a command (UPDATE_SCREENSHOTS=1 vitest ...) are not part of it.
  const words = command.replace(/^(\w+=\S*\s+)+/, '').split(/\s+/);
  const missing = (paths: string[]) => paths.filter((p) => !existsSync(source(join(ROOT, p)))).map((p) => `${script}: ${command}: no ${p}`);
  switch (words[0]) {
    case 'node':
      // A built file (dist/ read as src/) is TypeScript's to check; a script file is followed here.
      if (!existsSync(source(join(ROOT, words[1])))) return missing([words[1]]);
      return words[1].startsWith('dist/') ? [] : brokenReferences(join(ROOT, words[1])).map((b) => `${script}: ${b}`);
    case 'bash':
      return missing([words[1]]);
    case 'vitest':
      // The paths among its arguments (an option's value, as in --mode quick, is not one).
      return missing(words.slice(2).filter((w) => w.includes('/') || w.endsWith('.ts')));
    case 'tsc':
      return missing([words[words.indexOf('-p') + 1]]);
    case 'eslint':
      return missing(['eslint.config.js']);
    case 'depcruise':
      return missing([words[words.indexOf('--config') + 1]]);
    default:
      return [`${script}: ${command}: a command this test does not know how to check; teach it`];
  }
}

/** Script files (of scripts/ and bench/) that the documented commands run with node. */
function scriptFiles(): string[] {
  const { scripts, files } = documented();
  const fromScripts = [...scripts].flatMap((s) => steps(s)).flatMap(({ command }) => {
    const [tool, file] = command.split(/\s+/);
    return tool === 'node' && /^(scripts|bench)\//.test(file) ? [file] : [];
  });
  return [...new Set([...fromScripts, ...files])].sort();
}

describe('the npm scripts the documentation names', () => {
  it('finds them: the README and docs/ name the commands of development.md', () => {
    const { scripts } = documented();
    for (const name of ['test', 'test:quick', 'start', 'build', 'typecheck', 'soak', 'bench', 'fixtures:schema', 'fixtures:check', 'docs:config', 'test:container', 'test:browser', 'test:python']) {
      expect(scripts, name).toContain(name);
    }
  });

  it('are scripts of package.json, and every file their commands run or import is there', () => {
    const { scripts, files } = documented();
    expect([...scripts].filter((s) => pkg.scripts[s] === undefined)).toEqual([]);
    const found = [...scripts].flatMap((s) => steps(s)).flatMap(problems);
    for (const file of files) {
      if (!existsSync(join(ROOT, file))) found.push(`no ${file}`);
      else found.push(...brokenReferences(join(ROOT, file)));
    }
    expect(found).toEqual([]);
  });

  it('each script file they run answers --help once everything it imports has loaded', async () => {
    const files = scriptFiles();
    expect(files).toEqual(expect.arrayContaining(['scripts/build.mjs', 'scripts/fixtures-schema.mjs', 'scripts/soak.mjs', 'bench/run.mjs']));
    // Two at a time, one per core: a start of every script at once (a score of Node processes
    // loading their imports) took over 30 s on a machine whose cores were busy.
    const results: Array<{ file: string; ok: boolean; said: string }> = [];
    const queue = [...files];
    const worker = async () => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        try {
          const { stdout } = await run(process.execPath, [join(ROOT, file), '--help'], { cwd: ROOT, timeout: 60_000 });
          results.push({ file, ok: stdout.trim().length > 0, said: stdout.split('\n')[0] });
        } catch (err) {
          results.push({ file, ok: false, said: String((err as { stderr?: string }).stderr ?? err).slice(0, 400) });
        }
      }
    };
    await Promise.all([worker(), worker()]);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  }, 300_000);

  it('would catch a script that runs or imports a file that moved', () => {
    // The fault this test exists for: fixtures-schema.mjs once read a dist/ file no longer built.
    expect(problems({ script: 'x', command: 'node dist/fixture-schema.js' })).toEqual([]);
    expect(problems({ script: 'x', command: 'node dist/core/fixture-schema.js' })).toEqual(['x: node dist/core/fixture-schema.js: no dist/core/fixture-schema.js']);
    const dir = mkdtempSync(join(tmpdir(), 'scripts-test-'));
    try {
      writeFileSync(join(dir, 'a.mjs'), "import { b } from './b.mjs';\nconst { c } = await import('./c.mjs');\n");
      writeFileSync(join(dir, 'b.mjs'), 'export const b = 1;\n');
      expect(brokenReferences(join(dir, 'a.mjs')).map((b) => b.replace(/^.*\//, ''))).toEqual(['c.mjs']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
