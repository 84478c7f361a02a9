import { MASK } from '../core/secrets.js';

/**
 * The differences of two JSON values by path, and the glob-like JSON paths that say which
 * differences do not count. Used by `verify`: the recorded answer is what the service said,
 * the other what the emulator says.
 */

export type Segment = string | number;

export type DifferenceKind = 'status' | 'header' | 'missing' | 'extra' | 'type changed' | 'value changed';

export interface Difference {
  kind: DifferenceKind;
  /** `$.objects[0].name` for a JSON difference; `status`, or the header's name, otherwise. */
  path: string;
  /** What the recording has, shown as JSON (absent for `extra`). */
  recorded?: string;
  /** What the emulator answered, shown as JSON (absent for `missing`). */
  actual?: string;
}

/** Deepest JSON a diff walks; below it, values are compared whole. */
export const MAX_DIFF_DEPTH = 64;
/** Longest value shown in a difference, in characters. */
const SHOWN = 120;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$.a[0]['b c']` from its segments. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s).replace(/^"|"$/g, "'")}]`;
  }
  return out;
}

export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

type PatternStep = { t: 'key'; key: string } | { t: 'index'; index: number } | { t: 'any' } | { t: 'deep' };

/** Longest JSON path pattern, in characters. */
export const MAX_JSON_PATTERN_LENGTH = 512;

/** A JSON path pattern that cannot be read: the message says where. */
export class JsonPatternError extends Error {}

/**
 * A glob-like JSON path: `$`, then `.name`, `['name']`, `[3]`, `[*]` or `.*` (any one key or
 * index), and `..` (any number of levels, none included) before a name, `*` or `[...]`. It
 * matches a difference at its path or anywhere below it: `$.servers` covers `$.servers[0].name`.
 */
export class JsonPathPattern {
  private readonly steps: PatternStep[];

  constructor(readonly text: string) {
    if (text.length > MAX_JSON_PATTERN_LENGTH) throw new JsonPatternError(`'${text.slice(0, 40)}…' is longer than ${MAX_JSON_PATTERN_LENGTH} characters`);
    if (!text.startsWith('$')) throw new JsonPatternError(`'${text}' does not start with '$'`);
    if (text.endsWith('..')) throw new JsonPatternError(`'${text}' ends with '..'`);
    this.steps = [];
    let i = 1;
    const fail = (why: string) => new JsonPatternError(`'${text}' at character ${i + 1}: ${why}`);
    while (i < text.length) {
      if (text.startsWith('..', i)) {
        this.steps.push({ t: 'deep' });
        i += 2;
        if (text[i] === '[') continue;
        i = this.readName(text, i, fail);
      } else if (text[i] === '.') {
        i = this.readName(text, i + 1, fail);
      } else if (text[i] === '[') {
        const close = text.indexOf(']', i);
        if (close < 0) throw fail("'[' without ']'");
        const inner = text.slice(i + 1, close);
        if (inner === '*') this.steps.push({ t: 'any' });
        else if (/^\d+$/.test(inner)) this.steps.push({ t: 'index', index: Number(inner) });
        else if (/^'[^']*'$/.test(inner) || /^"[^"]*"$/.test(inner)) this.steps.push({ t: 'key', key: inner.slice(1, -1) });
        else throw fail(`'[${inner}]' is neither [*], an index nor a quoted name`);
        i = close + 1;
      } else {
        throw fail(`expected '.', '..' or '['`);
      }
    }
  }

  private readName(text: string, at: number, fail: (why: string) => Error): number {
    let end = at;
    while (end < text.length && text[end] !== '.' && text[end] !== '[') end++;
    const name = text.slice(at, end);
    if (name === '') throw fail('a name is missing');
    this.steps.push(name === '*' ? { t: 'any' } : { t: 'key', key: name });
    return end;
  }

  /** Whether the pattern matches the path or a path above it. Work: pattern steps times path length. */
  matches(path: readonly Segment[]): boolean {
    // The positions in the pattern reached after each path segment, as a set of step indexes.
    let states = this.closure(new Set([0]));
    for (const segment of path) {
      if (states.has(this.steps.length)) return true;
      const next = new Set<number>();
      for (const s of states) {
        const step = this.steps[s];
        if (step === undefined) continue;
        if (step.t === 'deep') next.add(s);
        else if (step.t === 'any' || (step.t === 'key' && segment === step.key) || (step.t === 'index' && segment === step.index)) next.add(s + 1);
      }
      if (next.size === 0) return false;
      states = this.closure(next);
    }
    return states.has(this.steps.length);
  }

  /** A `..` may match no level: a state before one also stands after it. */
  private closure(states: Set<number>): Set<number> {
    for (const s of [...states]) {
      let at = s;
      while (this.steps[at]?.t === 'deep') states.add(++at);
    }
    return states;
  }
}

export interface DiffOptions {
  /** Whether a difference at this path does not count. */
  ignored(path: readonly Segment[]): boolean;
  /** Whether a recorded value and an answered one stand for the same thing (an id carried over). */
  same?(recorded: unknown, actual: unknown): boolean;
  /**
   * Compare shapes only: keys and types count, values of the same type do not, nor do the
   * lengths of arrays (elements are compared by index as far as both go).
   */
  typesOnly?: boolean;
}

export interface DiffResult {
  differences: Difference[];
  ignored: number;
}

/**
 * The differences of `actual` (the emulator's) from `recorded` (the service's), by path:
 * a key or element the recording has and the answer lacks is `missing`, the other way round
 * `extra`. A recorded value that was masked (`"***"`) is compared by type only. Arrays are
 * compared element by element. The walk is bounded by the two values' sizes and MAX_DIFF_DEPTH.
 */
export function diffJson(recorded: unknown, actual: unknown, options: DiffOptions): DiffResult {
  const result: DiffResult = { differences: [], ignored: 0 };
  const path: Segment[] = [];
  const add = (difference: Difference) => {
    if (options.ignored(path)) result.ignored++;
    else result.differences.push(difference);
  };
  const walk = (a: unknown, b: unknown, depth: number): void => {
    const ta = typeOf(a);
    const tb = typeOf(b);
    if (ta !== tb) {
      if (a === MASK && tb !== 'object' && tb !== 'array') return;
      add({ kind: 'type changed', path: formatPath(path), recorded: `${ta} ${show(a)}`, actual: `${tb} ${show(b)}` });
      return;
    }
    if (ta === 'object' || ta === 'array') {
      if (depth >= MAX_DIFF_DEPTH) {
        if (!options.typesOnly && JSON.stringify(a) !== JSON.stringify(b)) add({ kind: 'value changed', path: formatPath(path), recorded: show(a), actual: show(b) });
        return;
      }
      if (ta === 'array') {
        const ra = a as unknown[];
        const rb = b as unknown[];
        const n = Math.max(ra.length, rb.length);
        for (let i = 0; i < n; i++) {
          if (options.typesOnly && (i >= rb.length || i >= ra.length)) break;
          path.push(i);
          if (i >= rb.length) add({ kind: 'missing', path: formatPath(path), recorded: show(ra[i]) });
          else if (i >= ra.length) add({ kind: 'extra', path: formatPath(path), actual: show(rb[i]) });
          else walk(ra[i], rb[i], depth + 1);
          path.pop();
        }
        return;
      }
      const oa = a as Record<string, unknown>;
      const ob = b as Record<string, unknown>;
      for (const key of Object.keys(oa)) {
        path.push(key);
        if (!Object.hasOwn(ob, key)) add({ kind: 'missing', path: formatPath(path), recorded: show(oa[key]) });
        else walk(oa[key], ob[key], depth + 1);
        path.pop();
      }
      for (const key of Object.keys(ob)) {
        if (Object.hasOwn(oa, key)) continue;
        path.push(key);
        add({ kind: 'extra', path: formatPath(path), actual: show(ob[key]) });
        path.pop();
      }
      return;
    }
    if (a === b || a === MASK || options.typesOnly || options.same?.(a, b)) return;
    add({ kind: 'value changed', path: formatPath(path), recorded: show(a), actual: show(b) });
  };
  walk(recorded, actual, 0);
  return result;
}
