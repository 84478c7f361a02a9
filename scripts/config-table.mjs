// Prints the configuration table (Markdown) of the README from the settings schema
// (run `npm run build` first; `npm run docs:config` does both).
import { configTable } from '../dist/options.js';

process.stdout.write(configTable());
