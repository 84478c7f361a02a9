// The configuration table of docs/configuration.md, from the settings schema (run
// `npm run build` first; `npm run docs:config` does both). Prints the table; with --write,
// puts it into docs/configuration.md between its markers. A test holds the page to the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);
const { configTable } = await import('../dist/cli/args.js');

const PAGE = new URL('../docs/configuration.md', import.meta.url);
const START = '<!-- generated: npm run docs:config -- --write -->';
const END = '<!-- end of generated table -->';

if (process.argv.includes('--write')) {
  const page = readFileSync(PAGE, 'utf8');
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from === -1 || to < from) throw new Error(`docs/configuration.md has lost its markers: ${START} ... ${END}`);
  writeFileSync(PAGE, `${page.slice(0, from + START.length)}\n\n${configTable()}\n${page.slice(to)}`);
  process.stdout.write('docs/configuration.md: table written\n');
} else {
  process.stdout.write(configTable());
}
