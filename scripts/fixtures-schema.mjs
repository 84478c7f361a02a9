// Writes fixtures/fixture.schema.json from the compiled schema (run `npm run build` first;
// `npm run fixtures:schema` does both).
import { writeFileSync } from 'node:fs';
import { helpIfAsked } from '../bench/help.mjs';

helpIfAsked(import.meta.url);
const { fixtureJsonSchemaText } = await import('../dist/fixture-schema.js');

const target = new URL('../fixtures/fixture.schema.json', import.meta.url);
writeFileSync(target, fixtureJsonSchemaText());
process.stdout.write('wrote fixtures/fixture.schema.json\n');
