'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module on purpose, see below */
// Plain CommonJS, copied as it is into both builds (dist/ and dist/cjs/): `import.meta.url` is
// a syntax error in CommonJS and `__dirname` is undefined in an ES module, while an ES module
// can import a CommonJS one. Types: package-root.d.cts.
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

let root;

/**
 * The folder of this package, found from this module's own place: the first folder above it
 * whose package.json names the package. The module sits in src/core (tests), dist/core and
 * dist/cjs/core, at different depths.
 */
function packageRoot() {
  if (root !== undefined) return root;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name === 'cloud-emulator') return (root = dir);
    } catch {
      // No package.json here: go on up. (dist/cjs/package.json has no name, so it is passed too.)
    }
    if (dirname(dir) === dir) throw new Error(`cannot find the cloud-emulator package folder above ${__dirname}`);
  }
}

/** The top of the code tree this module is part of: src/, dist/ or dist/cjs/. */
function codeRoot() {
  return dirname(__dirname);
}

module.exports = { packageRoot, codeRoot };
