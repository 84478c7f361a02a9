// `--help` for the project's scripts: prints the comment that opens the script and exits 0.
// A script calls it after its imports, so `node <script> --help` also proves that every file
// it imports is where it says (test/docs/scripts.test.ts runs it for every documented script).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** When `url` is the script Node was started with and `--help` or `-h` was given: usage, exit 0. */
export function helpIfAsked(url) {
  const file = fileURLToPath(url);
  if (process.argv[1] !== file || !process.argv.slice(2).some((a) => a === '--help' || a === '-h')) return;
  const lines = readFileSync(file, 'utf8').split('\n');
  const opening = [];
  for (const line of lines) {
    if (!line.startsWith('//')) break;
    opening.push(line.replace(/^\/\/ ?/, ''));
  }
  process.stdout.write(`${opening.join('\n')}\n`);
  process.exit(0);
}
