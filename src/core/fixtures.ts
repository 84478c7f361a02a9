import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TSchema, Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { DomainError } from './errors.js';

/** A seed, state file or posted state that is not a valid state; over HTTP, a 400. */
export class FixtureError extends DomainError {
  constructor(message: string) {
    super('invalid', message);
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
 * How many problems an error message lists. A state of many megabytes can hold millions of
 * mistakes; naming the first few is as useful to its author, and both finding and listing
 * them stays cheap however large it is.
 */
export const MAX_LISTED_PROBLEMS = 10;

/**
 * The message for a list of problems (each already prefixed), at most MAX_LISTED_PROBLEMS of
 * them. `unlisted` is how many more there are, or true when there are more but they were not
 * counted.
 */
export function problemMessage(where: string, listed: readonly string[], unlisted: number | boolean): string {
  const tail =
    unlisted === true ? [`${where}: and more problems, not listed`] : unlisted ? [`${where}: and ${unlisted} more problem${unlisted === 1 ? '' : 's'}, not listed`] : [];
  return [...listed.slice(0, MAX_LISTED_PROBLEMS), ...tail].join('\n');
}

const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();
/** A compiled checker: ten times faster than Value.Check on a state of a few megabytes. */
function checkerOf<T extends TSchema>(schema: T): TypeCheck<T> {
  let checker = checkers.get(schema);
  if (!checker) checkers.set(schema, (checker = TypeCompiler.Compile(schema)));
  return checker as TypeCheck<T>;
}

/**
 * Validates `data` against `schema` (after filling defaults) and returns it typed. Reports
 * the first few problems, each with its JSON path, prefixed by `where` (a file name).
 */
export function validate<T extends TSchema>(schema: T, data: unknown, where: string): Static<T> {
  let value: unknown;
  try {
    value = Value.Default(schema, Value.Clone(data));
    if (checkerOf(schema).Check(value)) return value as Static<T>;
  } catch (err) {
    // Cloning and checking recurse: data nested thousands deep overflows the stack.
    if (err instanceof RangeError) throw new FixtureError(`${where}: $: nested too deeply`);
    throw err;
  }
  // The errors come one at a time, so this stops after the first few distinct paths instead
  // of listing (and comparing) every error of a body that may hold hundreds of thousands.
  const paths = new Set<string>();
  const problems: string[] = [];
  let more = false;
  for (const error of checkerOf(schema).Errors(value)) {
    if (paths.has(error.path)) continue;
    if (problems.length === MAX_LISTED_PROBLEMS) {
      more = true;
      break;
    }
    paths.add(error.path);
    problems.push(`${where}: ${jsonPath(error.path)}: ${error.message}`);
  }
  throw new FixtureError(problemMessage(where, problems, more));
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
        // Editors on some systems start a UTF-8 file with a byte-order mark, which JSON.parse refuses.
        parsed = JSON.parse((await readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
      } catch (err) {
        throw new FixtureError(`${file}: $: not valid JSON: ${(err as Error).message}`);
      }
      return { file, data: validate(schema, parsed, file) };
    }),
  );
}
