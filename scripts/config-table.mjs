// Prints the configuration table (Markdown) of docs/running.md from the settings schema
// (run `npm run build` first; `npm run docs:config` does both).
import { configTable } from '../dist/options.js';

process.stdout.write(configTable());
