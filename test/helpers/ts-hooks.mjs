// Module hooks for a worker thread started by a test: lets it run the TypeScript sources
// (src/**/*.ts) as they are, which plain Node cannot. Imports written as `./x.js` find
// `./x.ts`; each .ts file is compiled on its own by TypeScript (types dropped, nothing
// checked), and kept in a cache folder by its content, so that the next worker does not
// load the compiler again. Registered by ts-worker-loader.mjs (node --import).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(tmpdir(), 'cloud-emulator-test-ts');

export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.endsWith('.ts') && /^\.\.?\//.test(specifier) && specifier.endsWith('.js')) {
    const js = new URL(specifier, context.parentURL);
    const source = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (!existsSync(fileURLToPath(js)) && existsSync(fileURLToPath(source))) return { url: source.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

async function compile(file, text) {
  const ts = (await import('typescript')).default;
  const { outputText } = ts.transpileModule(text, {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  return outputText;
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const text = await readFile(file, 'utf8');
  const cached = join(CACHE, `${createHash('sha256').update(file).update('\0').update(text).digest('hex')}.js`);
  let source;
  try {
    source = await readFile(cached, 'utf8');
  } catch {
    source = await compile(file, text);
    mkdirSync(CACHE, { recursive: true });
    // Renamed into place, so that a worker reading the cache never sees half a file.
    const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await writeFile(tmp, source);
    await rename(tmp, cached);
  }
  return { format: 'module', source, shortCircuit: true };
}
