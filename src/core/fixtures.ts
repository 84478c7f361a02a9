import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kind, type TSchema, type Static } from '@sinclair/typebox';
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

/** Fills the defaults of one schema into a value (in place where it can), as Value.Default does. */
type Filler = (value: unknown) => unknown;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';

/** Whether `default` appears anywhere in a schema. */
function mentionsDefault(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  if (!Array.isArray(schema) && 'default' in schema) return true;
  return Object.values(schema).some(mentionsDefault);
}

/** Value.Default's own rule for one node: the default when the value is missing, merged under an object. */
function ownDefault(schema: TSchema): Filler {
  const fallback: unknown = schema.default;
  return (value) => {
    if (value === undefined) return Value.Clone(fallback);
    return isObject(value) && isObject(fallback) ? Object.assign(Value.Clone(fallback), value) : value;
  };
}

/**
 * A filler that walks only the parts of a value where the schema has a default, with the
 * same result as Value.Default (valid input or not, since the errors are read off it). Value.Default
 * visits every node of the value: on a seed of 100,000 annotations that was most of the load
 * time, although defaults apply to three fields of each. Undefined: no default can apply
 * anywhere under this schema. Kinds the fixture schemas do not use are left to Value.Default.
 */
function fillerOf(schema: TSchema): Filler | undefined {
  const own = 'default' in schema;
  if (own && typeof schema.default === 'function') return (value) => Value.Default(schema, value);
  switch (schema[Kind]) {
    case 'Array': {
      const items = fillerOf(schema.items as TSchema);
      if (!own && !items) return undefined;
      const outer = own ? ownDefault(schema) : undefined;
      return (value) => {
        const filled = Array.isArray(value) || !outer ? value : outer(value);
        if (items && Array.isArray(filled)) for (let i = 0; i < filled.length; i++) filled[i] = items(filled[i]);
        return filled;
      };
    }
    case 'Object': {
      if ('default' in Object(schema.additionalProperties)) return (value) => Value.Default(schema, value);
      // Value.Default also copies a property an object inherits (`constructor`, say) onto it.
      const properties = Object.entries(schema.properties as Record<string, TSchema>)
        .map(([key, property]) => [key, fillerOf(property) ?? (key in Object.prototype ? (v: unknown) => Value.Default(property, v) : undefined)] as const)
        .filter((entry): entry is readonly [string, Filler] => entry[1] !== undefined);
      if (!own && properties.length === 0) return undefined;
      const outer = own ? ownDefault(schema) : undefined;
      const keys = properties.map(([key]) => key);
      const fills = properties.map(([, fill]) => fill);
      return (value) => {
        const filled = outer ? outer(value) : value;
        if (!isObject(filled)) return filled;
        // An array where an object belongs (invalid anyway): it inherits `at` and the like, as above.
        if (Array.isArray(filled)) return Value.Default(schema, filled);
        for (let i = 0; i < keys.length; i++) {
          const next = fills[i](filled[keys[i]]);
          if (next !== undefined) filled[keys[i]] = next;
        }
        return filled;
      };
    }
    case 'Union':
      // Value.Default tries each member on a copy; only worth imitating where a member has defaults.
      if ((schema.anyOf as TSchema[]).some((member) => fillerOf(member))) return (value) => Value.Default(schema, value);
      return own ? ownDefault(schema) : undefined;
    case 'Date':
    case 'Import':
    case 'Intersect':
    case 'Record':
    case 'Ref':
    case 'This':
    case 'Tuple':
      return mentionsDefault(schema) ? (value) => Value.Default(schema, value) : undefined;
    default:
      return own ? ownDefault(schema) : undefined;
  }
}

const fillers = new WeakMap<TSchema, Filler | null>();
/** Fills the defaults of `schema` into `value`, as Value.Default does, walking only where one can apply. */
export function fillDefaults(schema: TSchema, value: unknown): unknown {
  let filler = fillers.get(schema);
  if (filler === undefined) fillers.set(schema, (filler = fillerOf(schema) ?? null));
  return filler ? filler(value) : value;
}

/**
 * Validates `data` against `schema` (after filling defaults) and returns it typed. Reports
 * the first few problems, each with its JSON path, prefixed by `where` (a file name). Unless
 * `owned` (data nobody else holds, such as a file just parsed), the defaults go into a copy.
 */
export function validate<T extends TSchema>(schema: T, data: unknown, where: string, { owned = false } = {}): Static<T> {
  let value: unknown;
  try {
    value = fillDefaults(schema, owned ? data : Value.Clone(data));
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
      // Just parsed, so nobody else holds it: the defaults go in without a copy.
      return { file, data: validate(schema, parsed, file, { owned: true }) };
    }),
  );
}
