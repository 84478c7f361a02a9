import { constants, type Stats } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Kind, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import { DomainError } from './errors.js';
import { didYouMean } from './suggest.js';
import { isEmulatedTime } from './time-shift.js';
import { jsonSyntaxError, locatePointers, pointerOf, pointerSegments, positionsOf } from './json-text.js';

/**
 * One problem of a seed, a state file or a posted state: where it is (the file, when it came
 * from one; the JSON pointer in it; line and column, worked out only for the problems
 * listed), and what is wrong. A duplicate names the other place too (`also`).
 */
export interface Problem {
  /** The file, as named to the loader; absent for a posted state (then `where` says what it was). */
  file?: string;
  /** JSON pointer ("/grids/0/name") of the value in its file or body. */
  pointer: string;
  message: string;
  line?: number;
  column?: number;
  also?: { file?: string; pointer: string; line?: number; column?: number };
}

/** A seed, state file or posted state that is not a valid state; over HTTP, a 400. */
export class FixtureError extends DomainError {
  constructor(
    message: string,
    /** The problems listed in the message, when it lists problems. */
    readonly problems: readonly Problem[] = [],
    /** How many more there are, not listed (true: more, not counted). */
    readonly unlisted: number | boolean = 0,
  ) {
    super('invalid', message);
    this.name = 'FixtureError';
  }
}

/** "/grids/0/servers/1/cloudType" -> "$.grids[0].servers[1].cloudType" */
export function jsonPath(pointer: string): string {
  if (!pointer) return '$';
  return (
    '$' +
    pointerSegments(pointer)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
      .join('')
  );
}

/**
 * "$.grids[0].servers[1].cloudType" -> "/grids/0/servers/1/cloudType": the path at the start
 * of a problem's text, as the interfaces' reference checks write it. Undefined when `text`
 * does not start with one.
 */
export function leadingPath(text: string): { pointer: string; note?: string; message: string } | undefined {
  if (!text.startsWith('$')) return undefined;
  const segments: string[] = [];
  let i = 1;
  while (i < text.length) {
    if (text[i] === '.') {
      const m = /^[A-Za-z_$][\w$]*/.exec(text.slice(i + 1, i + 201));
      if (!m) break;
      segments.push(m[0]);
      i += 1 + m[0].length;
    } else if (text[i] === '[') {
      const close = text.indexOf(']', i);
      if (close === -1) break;
      const inner = text.slice(i + 1, close);
      if (/^\d+$/.test(inner)) segments.push(inner);
      else if (inner.startsWith('"')) {
        try {
          segments.push(JSON.parse(inner) as string);
        } catch {
          break;
        }
      } else break;
      i = close + 1;
    } else break;
  }
  const rest = text.slice(i);
  // "$.annotations[3] (id 7): ..." -- a note on the entry before the colon.
  const m = /^(?: \(([^)]{0,200})\))?: /.exec(rest);
  if (!m) return undefined;
  return { pointer: pointerOf(segments), ...(m[1] !== undefined ? { note: m[1] } : {}), message: rest.slice(m[0].length) };
}

/**
 * How many problems an error message lists. A state of many megabytes can hold millions of
 * mistakes; naming the first few is as useful to its author, and both finding and listing
 * them stays cheap however large it is.
 */
export const MAX_LISTED_PROBLEMS = 10;

/**
 * How many `cloud-emulator check` lists: a person fixing a folder wants to see every problem
 * of it in one run, and a check serves nobody else meanwhile.
 */
export const MAX_CHECKED_PROBLEMS = 200;

/**
 * The message for a list of problems (each already prefixed), at most MAX_LISTED_PROBLEMS of
 * them. `unlisted` is how many more there are, or true when there are more but they were not
 * counted.
 */
export function problemMessage(where: string, listed: readonly string[], unlisted: number | boolean, max = MAX_LISTED_PROBLEMS): string {
  const tail =
    unlisted === true ? [`${where}: and more problems, not listed`] : unlisted ? [`${where}: and ${unlisted} more problem${unlisted === 1 ? '' : 's'}, not listed`] : [];
  return [...listed.slice(0, max), ...tail].join('\n');
}

/** "FILE:LINE:COLUMN" (or what it has of them), or `where` for a problem of no file. */
function placeOf(p: { file?: string; line?: number; column?: number }, where: string): string {
  const file = p.file ?? where;
  return p.line === undefined ? file : `${file}:${p.line}:${p.column}`;
}

/**
 * One problem as a line: `FILE:LINE:COLUMN: $.path: message`, the form editors and terminals
 * make clickable; a posted state has no file, and is named by `where` (`body: $.path: ...`).
 */
export function formatProblem(p: Problem, where = ''): string {
  const also = p.also ? `; also at ${p.also.file === undefined ? '' : `${placeOf(p.also, where)} `}${jsonPath(p.also.pointer)}` : '';
  return `${placeOf(p, where)}: ${jsonPath(p.pointer)}: ${p.message}${also}`;
}

/** Collects problems: the first `max` in full, the rest only counted. */
export class ProblemList {
  readonly listed: Problem[] = [];
  /** More were found than listed, and not all were counted. */
  uncounted = false;
  private total = 0;
  constructor(readonly max = MAX_LISTED_PROBLEMS) {}

  get full(): boolean {
    return this.listed.length >= this.max;
  }
  get count(): number {
    return this.total;
  }
  get unlisted(): number | boolean {
    return this.uncounted ? true : this.total - this.listed.length;
  }
  /** A list as another thread found it: its listed problems, how many there were, whether all were counted. */
  static of(listed: readonly Problem[], count: number, uncounted: boolean, max = MAX_LISTED_PROBLEMS): ProblemList {
    const list = new ProblemList(max);
    list.listed.push(...listed);
    list.total = count;
    list.uncounted = uncounted;
    return list;
  }
  /** `make` runs only for a problem that is listed. */
  add(make: () => Problem): void {
    if (this.total++ < this.max) this.listed.push(make());
  }
  /** The error that lists them, prefixed by `where` where a problem has no file of its own. */
  error(where: string): FixtureError {
    const lines = this.listed.map((p) => formatProblem(p, where));
    return new FixtureError(problemMessage(where, lines, this.unlisted, this.max), this.listed, this.unlisted);
  }
}

/** A value as a problem quotes it: JSON, shortened to about `max` characters. */
export function preview(value: unknown, max = 60): string {
  const shallow = (v: unknown, depth: number): string => {
    if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? String(v);
    if (depth > 1) return Array.isArray(v) ? '[…]' : '{…}';
    if (Array.isArray(v)) return `[${v.slice(0, 4).map((e) => shallow(e, depth + 1)).join(',')}${v.length > 4 ? ',…' : ''}]`;
    const keys = Object.keys(v);
    const shown = keys.slice(0, 4).map((k) => `${JSON.stringify(k)}:${shallow((v as Record<string, unknown>)[k], depth + 1)}`);
    return `{${shown.join(',')}${keys.length > 4 ? ',…' : ''}}`;
  };
  const text = shallow(value, 0);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a schema accepts, as a problem says it: `"A", "B"` for constants, else types. */
function accepted(schema: TSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).map(accepted).join(' or ');
  const type = schema[Kind] === 'Integer' ? 'integer' : schema.type ?? String(schema[Kind] ?? 'value').toLowerCase();
  if (type === 'string' && schema.pattern) return `a string matching ${schema.pattern}`;
  if (type === 'array' || type === 'object' || type === 'integer') return `an ${type}`;
  return `a ${type}`;
}

/** A TypeBox error as a person reads it: the allowed values of a choice, a near key for an unknown one, the value given. */
function describeError(error: ValueError): string {
  const got = error.value === undefined ? '' : `, got ${preview(error.value)}`;
  if (error.type === ValueErrorType.Union && Array.isArray(error.schema.anyOf)) {
    const members = error.schema.anyOf as TSchema[];
    if (members.every((m) => m.const !== undefined)) {
      const values = members.map((m) => m.const as unknown);
      const near = typeof error.value === 'string' ? didYouMean(error.value, values.filter((v): v is string => typeof v === 'string')) : '';
      return `expected one of ${values.map((v) => JSON.stringify(v)).join(', ')}${got}${near}`;
    }
    return `expected ${accepted(error.schema)}${got}`;
  }
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const key = pointerSegments(error.path).pop() ?? '';
    const known = Object.keys((error.schema.properties as Record<string, unknown> | undefined) ?? {});
    const near = didYouMean(key, known);
    return `unknown key ${JSON.stringify(key)}${near || (known.length && known.length <= 12 ? ` (allowed: ${known.join(', ')})` : '')}`;
  }
  if ((error.type === ValueErrorType.Integer || error.type === ValueErrorType.Number) && isTime(error.schema)) {
    // A date written as text ("2026-11-22T09:00:00Z") is the usual mistake: say what a time is here.
    const key = pointerSegments(error.path).pop() ?? '';
    const relative = RELATIVE_TIMES.has(key) ? `, or give ${key}AgoMs instead: how many ms before the load` : '';
    return `expected a time: an integer of UTC epoch milliseconds (such as 1795338000000 for 2026-11-22T09:00:00Z)${relative}${got}`;
  }
  return `${error.message}${got}`;
}

/** The times a fixture may also give relative to the load, as `<name>AgoMs`. */
const RELATIVE_TIMES = new Set(['start', 'end', 'started']);

/** An instant: marked as an emulated time, or described as epoch milliseconds. */
function isTime(schema: TSchema): boolean {
  return isEmulatedTime(schema) || /epoch (ms|milliseconds)/.test(String(schema.description ?? ''));
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
  // A value that is no object is its own clone, and nothing is merged under it.
  if (!isObject(fallback)) return (value) => (value === undefined ? fallback : value);
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
          const current = filled[keys[i]];
          const next = fills[i](current);
          // Written only when it changed: a value filled in place (an object, an array) is already there.
          if (next !== current && next !== undefined) filled[keys[i]] = next;
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
 * Reports the schema problems of a value (defaults already filled in) through `add`, until
 * `full()`: whether there are more is then answered as true without counting them. The errors
 * come one at a time, so this stops after the first few distinct paths instead of listing (and
 * comparing) every error of a body that may hold hundreds of thousands. Answers whether the
 * value is valid.
 */
export function schemaProblems(
  schema: TSchema,
  value: unknown,
  add: (pointer: string, message: string) => void,
  full: () => boolean,
  { compiled = true }: { compiled?: boolean } = {},
): { valid: boolean; more: boolean } {
  // Uncompiled for a small value: compiling the whole state's schema takes longer than
  // Value.Check takes over a few hundred entries. The errors are the same either way (a
  // compiled checker lists them with Value.Errors too).
  const checker = compiled ? checkerOf(schema) : undefined;
  if (checker ? checker.Check(value) : Value.Check(schema, value)) return { valid: true, more: false };
  const paths = new Set<string>();
  for (const error of checker ? checker.Errors(value) : Value.Errors(schema, value)) {
    if (paths.has(error.path)) continue;
    if (full()) return { valid: false, more: true };
    paths.add(error.path);
    add(error.path, describeError(error));
  }
  return { valid: false, more: false };
}

/** Whether a value (defaults filled in) is valid, by the compiled checker. */
export function isValid(schema: TSchema, value: unknown): boolean {
  return checkerOf(schema).Check(value);
}

/** A RangeError from cloning or checking data nested thousands deep, as a problem. */
export function tooDeep(where: string): FixtureError {
  return new FixtureError(`${where}: $: nested too deeply`, [{ pointer: '', message: 'nested too deeply' }]);
}

/**
 * Validates `data` against `schema` (after filling defaults) and returns it typed. Reports
 * the first few problems, each with its JSON path, prefixed by `where` (a file name). Unless
 * `owned` (data nobody else holds, such as a file just parsed), the defaults go into a copy.
 */
export function validate<T extends TSchema>(schema: T, data: unknown, where: string, { owned = false } = {}): Static<T> {
  let value: unknown;
  const problems = new ProblemList();
  try {
    value = fillDefaults(schema, owned ? data : Value.Clone(data));
    const { valid, more } = schemaProblems(schema, value, (pointer, message) => problems.add(() => ({ pointer, message })), () => problems.full);
    if (valid) return value as Static<T>;
    problems.uncounted = more;
  } catch (err) {
    // Cloning and checking recurse: data nested thousands deep overflows the stack.
    if (err instanceof RangeError) throw tooDeep(where);
    throw err;
  }
  throw problems.error(where);
}

/** A fixture file as read: its text, without a leading byte-order mark. */
export interface FixtureText {
  file: string;
  text: string;
}

/** An entry of a fixtures folder named like a fixture file that is not a regular file (a FIFO, a folder, a device): never read. */
export interface IgnoredEntry {
  file: string;
  /** What it is: 'a FIFO', 'a folder', ... */
  kind: string;
}

/** How a warning names an entry that is not read. */
export const ignoredText = (entry: IgnoredEntry): string => `${entry.file}: not a regular file (${entry.kind}): ignored`;

function kindOf(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO';
  if (s.isDirectory()) return 'a folder';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  return 'not a file';
}

/**
 * The text of every *.json file of `dir` (except *.schema.json), in name order. Throws a
 * FixtureError when the folder cannot be read; a file that cannot be read is a problem of its
 * own. Only regular files are read (a symbolic link is followed): anything else named *.json
 * (a FIFO, whose read waits for a writer forever; a device, whose read may never end; a
 * folder) is listed in `ignored`. Each is opened without waiting (O_NONBLOCK) and judged by
 * what was opened, so that one made between the listing and the read is never read either.
 */
export async function readFixtureTexts(dir: string, signal?: AbortSignal): Promise<{ files: FixtureText[]; unreadable: Problem[]; ignored: IgnoredEntry[] }> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort();
  } catch (err) {
    throw new FixtureError(`cannot read fixtures folder ${dir}: ${(err as Error).message}`);
  }
  const unreadable: Problem[] = [];
  const ignored: IgnoredEntry[] = [];
  const read = await Promise.all(
    names.map(async (name): Promise<FixtureText | undefined> => {
      const file = fileIn(dir, name);
      let handle: FileHandle | undefined;
      try {
        handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
        const stats = await handle.stat();
        if (!stats.isFile()) {
          ignored.push({ file, kind: kindOf(stats) });
          return undefined;
        }
        // Editors on some systems start a UTF-8 file with a byte-order mark, which JSON.parse refuses.
        // Decoded whole: read with an encoding, a large file comes as a string of pieces, which
        // the first look at it (the replace, JSON.parse) copies into one (~25 ms of 19 MB).
        return { file, text: (await handle.readFile(signal ? { signal } : {})).toString('utf8').replace(/^\uFEFF/, '') };
      } catch (err) {
        // A file removed between the listing and the read (an editor saving it) is simply not there.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') unreadable.push({ file, pointer: '', message: `cannot be read: ${(err as Error).message}` });
        return undefined;
      } finally {
        await handle?.close();
      }
    }),
  );
  ignored.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { files: read.filter((f): f is FixtureText => f !== undefined), unreadable, ignored };
}

/** A file of the folder as the folder was written: `./fixtures` gives `./fixtures/a.json`, as typed, not `fixtures/a.json`. */
function fileIn(dir: string, name: string): string {
  const file = join(dir, name);
  return /^\.[/\\]/.test(dir) || dir === '.' ? `.${dir.includes('\\') && !dir.includes('/') ? '\\' : '/'}${file}` : file;
}

/** Parses a JSON text; when it is not JSON, the problem with its line and column. */
export function parseJsonText(file: string | undefined, text: string): { data: unknown } | { problem: Problem } {
  try {
    return { data: JSON.parse(text) as unknown };
  } catch (err) {
    const syntax = jsonSyntaxError(text);
    const offset = syntax?.offset ?? 0;
    const [{ line, column }] = positionsOf(text, [offset]);
    return { problem: { file, pointer: '', message: `not valid JSON: ${syntax?.message ?? (err as Error).message}`, line, column } };
  }
}

/** Fills in the line and column of the problems listed that lie in `text` (one pass over it). */
export function locateProblems(text: string, problems: ReadonlyArray<{ pointer: string; line?: number; column?: number }>): void {
  const todo = problems.filter((p) => p.line === undefined);
  if (!todo.length) return;
  const offsets = locatePointers(text, todo.map((p) => pointerSegments(p.pointer)));
  positionsOf(text, offsets).forEach((position, k) => Object.assign(todo[k], position));
}
