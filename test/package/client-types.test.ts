import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../docs/markdown.js';

/**
 * The typed client's declarations stand alone (docs/client.md): a project that installed the
 * package compiles `import { EmulatorClient } from 'cloud-emulator/client'` with the strictest
 * settings a consumer may have (no esModuleInterop, no skipLibCheck, so every declaration file
 * is checked), and the compilation reads no declaration of the server's packages (Fastify,
 * pino, light-my-request...), only the package's own and TypeBox's. Compiles the built
 * package (built first when dist/ is older than a source).
 */

const COMPILE_MS = 180_000;

/** A user's file: every type it names must be the client's own, not `any`. */
const CONSUMER = `
import { EmulatorClient, EmulatorError, type Health, type EmulatorEvent, type StateInput } from 'cloud-emulator/client';

export async function check(url: string): Promise<string> {
  const emu = new EmulatorClient(url, { adminToken: 'secret' });
  const health: Health = await emu.health();
  const state: StateInput = { grids: [] };
  await emu.importState(state);
  const exported = await emu.exportState();
  const names: string[] = exported.users.map((u) => u.userName);
  // @ts-expect-error a number of ms, not a word: the client's types are real ones, not any
  await emu.advance('soon');
  const events: AsyncIterable<EmulatorEvent> = emu.events();
  void events;
  try {
    await emu.fault('none');
  } catch (error) {
    if (error instanceof EmulatorError) return error.message;
  }
  return health.status + names.join(',');
}
`;

let dir: string;
beforeAll(async () => {
  // Builds only when a source is newer than dist/ (CI builds just before the tests).
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT });
  dir = await mkdtemp(join(tmpdir(), 'client-types-'));
  // A project that installed the package: node_modules/cloud-emulator is this checkout.
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await symlink(ROOT, join(dir, 'node_modules', 'cloud-emulator'), 'dir');
  await writeFile(join(dir, 'consumer.ts'), CONSUMER);
}, 600_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The package a file belongs to (the innermost node_modules folder of its path), or undefined for the project's and this package's own. */
function packageOf(file: string): string | undefined {
  const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match?.[1];
}

function compile(options: ts.CompilerOptions): { errors: string[]; packages: string[]; files: string[] } {
  const program = ts.createProgram([join(dir, 'consumer.ts')], {
    ...options,
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    // A browser project: fetch from the DOM library, and no @types package at all.
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    esModuleInterop: false,
    allowSyntheticDefaultImports: false,
    skipLibCheck: false,
  });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName}(${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}): ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
  const files = program.getSourceFiles().map((f) => f.fileName);
  const packages = [...new Set(files.map(packageOf).filter((p): p is string => p !== undefined && p !== 'typescript'))].sort();
  return { errors, packages, files };
}

describe('the declarations of cloud-emulator/client', () => {
  it.each([
    ['CommonJS (module commonjs, moduleResolution node10: typesVersions)', { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 }],
    ['ES modules (module nodenext: the import condition of exports)', { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }],
  ])(
    'compile in a project with %s, without esModuleInterop or skipLibCheck, reading no package but TypeBox',
    (_name, options) => {
      const { errors, packages, files } = compile(options);
      expect(errors).toEqual([]);
      expect(packages).toEqual(['@sinclair/typebox']);
      expect(files.filter((f) => /\/(fastify|@fastify|pino|light-my-request)[/-]/.test(f))).toEqual([]);
      // The client's declarations were read from the built package, not from its sources.
      expect(files.some((f) => /\/dist\/(cjs\/)?client\/index\.d\.ts$/.test(f))).toBe(true);
      expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && f !== join(dir, 'consumer.ts'))).toEqual([]);
    },
    COMPILE_MS,
  );
});
