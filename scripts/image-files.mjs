// What the container image is made of, run inside the image build (see the Dockerfile) with
// nothing but Node: the base images may have no cp, find, strip or ldd.
//
//   node scripts/image-files.mjs prune DIR...   delete what Node never loads at run time
//   node scripts/image-files.mjs rootfs DIR     a root file system holding only the running Node:
//                                               its binary, the shared libraries it loads, the
//                                               CA bundle, /etc/passwd and /etc/group with the
//                                               user node, /tmp, /data and /home/node
//
// prune removes type declarations, source maps, TypeScript sources, Markdown, dot files, and
// the test, docs, example and benchmark folders at the top of each package. It keeps every
// .js/.cjs/.mjs/.json file outside those folders and every licence file, so it depends on no
// particular package's layout. The container test runs the result.
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, closeSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files no running program reads: declarations, source maps, TypeScript and Markdown. */
const DEAD_FILE = /(\.d\.[cm]?ts|\.[cm]?ts|\.map|\.md|\.markdown)$/i;
/** Folders at the top of a package that hold no code the package loads. */
const DEAD_PACKAGE_DIRS = new Set(['test', 'tests', '__tests__', 'benchmark', 'benchmarks', 'bench', 'docs', 'example', 'examples', 'coverage', 'e2e']);
/** What npm leaves in node_modules for itself. */
const NPM_ONLY = new Set(['.bin', '.package-lock.json', '.cache']);
const LICENCE = /^(licen[cs]e|notice|copying)/i;

function sizeOf(path) {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return { files: 1, bytes: stat.size };
  let files = 0;
  let bytes = 0;
  for (const name of readdirSync(path)) {
    const sub = sizeOf(join(path, name));
    files += sub.files;
    bytes += sub.bytes;
  }
  return { files, bytes };
}

export function prune(root) {
  const removed = { files: 0, bytes: 0 };
  const remove = (path) => {
    const { files, bytes } = sizeOf(path);
    removed.files += files;
    removed.bytes += bytes;
    rmSync(path, { recursive: true, force: true });
  };
  /** Returns whether dir is empty afterwards. */
  const walk = (dir) => {
    const isPackage = existsSync(join(dir, 'package.json'));
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (NPM_ONLY.has(entry.name) && dir.endsWith('node_modules')) remove(path);
      else if (entry.isDirectory()) {
        if (entry.name.startsWith('.') || (isPackage && DEAD_PACKAGE_DIRS.has(entry.name))) remove(path);
        else if (walk(path)) rmSync(path, { recursive: true });
      } else if (!LICENCE.test(entry.name) && (entry.name.startsWith('.') || DEAD_FILE.test(entry.name))) remove(path);
    }
    return readdirSync(dir).length === 0;
  };
  walk(resolve(root));
  return removed;
}

/** The interpreter an ELF executable names (PT_INTERP), e.g. /lib/ld-musl-x86_64.so.1. */
export function elfInterpreter(file) {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(64);
    readSync(fd, header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file} is not an ELF file`);
    const is64 = header[4] === 2;
    const little = header[5] === 1;
    const u16 = (b, o) => (little ? b.readUInt16LE(o) : b.readUInt16BE(o));
    const u32 = (b, o) => (little ? b.readUInt32LE(o) : b.readUInt32BE(o));
    const word = (b, o) => (is64 ? Number(little ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o)) : u32(b, o));
    const phoff = word(header, is64 ? 0x20 : 0x1c);
    const phentsize = u16(header, is64 ? 0x36 : 0x2a);
    const phnum = u16(header, is64 ? 0x38 : 0x2c);
    const table = Buffer.alloc(phentsize * phnum);
    readSync(fd, table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i++) {
      const ph = table.subarray(i * phentsize);
      if (u32(ph, 0) !== 3) continue; // PT_INTERP
      const offset = word(ph, is64 ? 8 : 4);
      const size = word(ph, is64 ? 32 : 16);
      const name = Buffer.alloc(size);
      readSync(fd, name, 0, size, offset);
      return name.toString('latin1').replace(/\0.*$/s, '');
    }
    return undefined; // a static executable
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies path into root under the same name, and every symbolic link on the way (a
 * /lib64 -> usr/lib64 folder link, an ld-linux.so.2 -> ld-2.36.so file link), so that the
 * name resolves in the new root as it does here.
 */
function replicate(path, root, seen = new Set()) {
  if (seen.has(path)) return;
  seen.add(path);
  const parts = path.split('/').filter(Boolean);
  let current = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = join(current, parts[i]);
    const stat = lstatSync(next);
    const target = join(root, next);
    if (stat.isSymbolicLink()) {
      const link = readlinkSync(next);
      if (!existsSync(target) && !isLink(target)) {
        mkdirSync(dirname(target), { recursive: true });
        symlinkSync(link, target);
      }
      // Go on from where the link points, then with the rest of the path.
      const pointed = resolve(dirname(next), link);
      replicate(join(pointed, ...parts.slice(i + 1)), root, seen);
      return;
    }
    if (i === parts.length - 1) {
      mkdirSync(dirname(target), { recursive: true });
      if (!existsSync(target)) copyFileSync(next, target);
      chmodSync(target, stat.mode & 0o7777);
    }
    current = next;
  }
}

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function resolvesTo(path, file) {
  try {
    return realpathSync(path) === file;
  } catch {
    return false; // a dangling link
  }
}

/** The files this process has mapped: the binary, the dynamic loader and every shared library. */
function mappedFiles() {
  const files = new Set();
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const path = line.split(/\s+/).slice(5).join(' ');
    if (path.startsWith('/') && !path.endsWith(' (deleted)') && !path.startsWith('/dev/') && !path.startsWith('/memfd:')) files.add(path);
  }
  return [...files];
}

export async function rootfs(root) {
  root = resolve(root);
  rmSync(root, { recursive: true, force: true });
  // What might load a library late: the user database, name resolution, threads, zlib, crypto.
  const os = await import('node:os');
  os.userInfo();
  await (await import('node:dns')).promises.lookup('localhost').catch(() => undefined);
  (await import('node:zlib')).gzipSync('x');
  (await import('node:crypto')).createHash('sha256').update('x').digest();
  const { Worker } = await import('node:worker_threads');
  await new Promise((done) => new Worker('0', { eval: true }).on('exit', done));

  const node = process.execPath;
  const libraries = mappedFiles().filter((file) => file !== realpathSync(node));
  mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
  copyFileSync(node, join(root, 'usr/local/bin/node'));
  chmodSync(join(root, 'usr/local/bin/node'), 0o755);
  const interpreter = elfInterpreter(node);
  for (const file of [...(interpreter ? [interpreter] : []), ...libraries]) replicate(file, root);
  // The maps name the files links point to (libstdc++.so.6.0.30); the loader looks for the
  // names the binary asks for (libstdc++.so.6): the links beside each library come along.
  for (const file of libraries) {
    for (const name of readdirSync(dirname(file))) {
      const path = join(dirname(file), name);
      if (isLink(path) && resolvesTo(path, file)) replicate(path, root);
    }
  }
  for (const bundle of ['/etc/ssl/certs/ca-certificates.crt']) if (existsSync(bundle)) replicate(bundle, root);

  mkdirSync(join(root, 'etc'), { recursive: true });
  // No login shell: the image has none.
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/home/node:/sbin/nologin\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
  for (const dir of ['tmp', 'data', 'home/node', 'app']) mkdirSync(join(root, dir), { recursive: true });
  // Owners and modes are set again in the image itself (COPY does not keep owners everywhere).
  chmodSync(join(root, 'tmp'), 0o1777);
  return { node, interpreter, libraries };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...dirs] = process.argv.slice(2);
  if (command === 'prune' && dirs.length > 0) {
    for (const dir of dirs) {
      const { files, bytes } = prune(dir);
      process.stdout.write(`prune ${dir}: removed ${files} files, ${(bytes / 1e6).toFixed(1)} MB\n`);
    }
  } else if (command === 'rootfs' && dirs.length === 1) {
    const { node, interpreter, libraries } = await rootfs(dirs[0]);
    process.stdout.write(`rootfs ${dirs[0]}: ${node} as /usr/local/bin/node; loader ${interpreter ?? 'none (static)'}; libraries ${libraries.join(' ')}\n`);
  } else {
    process.stderr.write('usage: node scripts/image-files.mjs prune DIR... | rootfs DIR\n');
    process.exit(2);
  }
}
