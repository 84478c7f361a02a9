import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TSchema, Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export class FixtureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FixtureError';
  }
}

/** "/grids/0/servers/1/cloudType" -> "$.grids[0].servers[1].cloudType" */
export function jsonPath(pointer: string): string {
  if (!pointer) return '$';
  return (
    '$' +
    pointer
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
      .join('')
  );
}

/**
 * Validates `data` against `schema` (after filling defaults) and returns it typed. Reports
 * the first few problems, each with its JSON path, prefixed by `where` (a file name).
 */
export function validate<T extends TSchema>(schema: T, data: unknown, where: string): Static<T> {
  let value: unknown;
  try {
    value = Value.Default(schema, Value.Clone(data));
    if (Value.Check(schema, value)) return value as Static<T>;
  } catch (err) {
    // Cloning and checking recurse: data nested thousands deep overflows the stack.
    if (err instanceof RangeError) throw new FixtureError(`${where}: $: nested too deeply`);
    throw err;
  }
  const problems = [...Value.Errors(schema, value)]
    .filter((e, i, all) => all.findIndex((o) => o.path === e.path) === i)
    .slice(0, 5)
    .map((e) => `${where}: ${jsonPath(e.path)}: ${e.message}`);
  throw new FixtureError(problems.join('\n'));
}

/** Reads every *.json file of `dir` (in name order), each validated against `schema`. */
export async function readFixtureFiles<T extends TSchema>(
  dir: string,
  schema: T,
): Promise<Array<{ file: string; data: Static<T> }>> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort();
  } catch (err) {
    throw new FixtureError(`cannot read fixtures folder ${dir}: ${(err as Error).message}`);
  }
  return Promise.all(
    names.map(async (name) => {
      const file = join(dir, name);
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readFile(file, 'utf8'));
      } catch (err) {
        throw new FixtureError(`${file}: $: not valid JSON: ${(err as Error).message}`);
      }
      return { file, data: validate(schema, parsed, file) };
    }),
  );
}
