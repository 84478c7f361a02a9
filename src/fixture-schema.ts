import { FixtureFileSchema } from './state.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A field with a default may be left out of a fixture file (the loader fills it in), so an
 * editor must not demand it even though the filled-in value is required.
 */
function relaxDefaults(node: Json): Json {
  if (Array.isArray(node)) return node.map(relaxDefaults);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key] = relaxDefaults(value);
  const properties = out.properties;
  if (Array.isArray(out.required) && properties && typeof properties === 'object' && !Array.isArray(properties)) {
    const required = out.required.filter((name) => {
      const property = properties[name as string];
      return !(property && typeof property === 'object' && !Array.isArray(property) && 'default' in property);
    });
    if (required.length) out.required = required;
    else delete out.required;
  }
  return out;
}

/** The JSON Schema of one fixture file, as written to fixtures/fixture.schema.json. */
export function fixtureJsonSchema(): Record<string, Json> {
  // JSON round trip: drops TypeBox's symbol keys, leaves plain JSON Schema.
  const schema = relaxDefaults(JSON.parse(JSON.stringify(FixtureFileSchema)) as Json) as Record<string, Json>;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'cloud-emulator fixture file',
    description:
      'One file of a fixture folder: any subset of the sections below. All *.json files of the folder are merged; an id may be defined in one file only. Generated from the emulator\'s own schema by `npm run fixtures:schema`.',
    ...schema,
  };
}

/** The file's exact text, so a test can tell whether the committed file is stale. */
export function fixtureJsonSchemaText(): string {
  return `${JSON.stringify(fixtureJsonSchema(), null, 2)}\n`;
}
