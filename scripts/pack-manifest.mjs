// The package.json that goes into the tarball: this one without its scripts, which build,
// test and benchmark this repository and mean nothing to a project that installs the
// package (npm 11 warns about `prepare` on every install of a tarball that keeps it).
//   node scripts/pack-manifest.mjs strip     before packing (prepack): keeps the file aside
//   node scripts/pack-manifest.mjs restore   after packing (postpack): puts it back
// Both work on the package.json of the working folder, where npm runs a package's scripts.
// A strip left unrestored (a pack that failed) is undone by the next strip or restore.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);

/** The manifest as packed: everything but `scripts`. */
export function packedManifest(manifest) {
  const { scripts: _scripts, ...packed } = manifest;
  return packed;
}

export function strip(dir = process.cwd()) {
  const file = `${dir}/package.json`;
  const kept = `${dir}/package.json.unpacked`;
  if (existsSync(kept)) renameSync(kept, file);
  const text = readFileSync(file, 'utf8');
  writeFileSync(kept, text);
  writeFileSync(file, `${JSON.stringify(packedManifest(JSON.parse(text)), null, 2)}\n`);
}

export function restore(dir = process.cwd()) {
  const kept = `${dir}/package.json.unpacked`;
  if (existsSync(kept)) renameSync(kept, `${dir}/package.json`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command] = process.argv.slice(2);
  if (command === 'strip') strip();
  else if (command === 'restore') restore();
  else {
    process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
    process.exit(2);
  }
}
