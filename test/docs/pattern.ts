/**
 * The outputs the documentation shows, as patterns an answer must match: JSON in which `...`
 * stands for what is left out.
 *
 * - `{"a":1,"b":2}`: exactly these keys; `{"a":1,...}` or `{...,"a":1}`: these and others.
 * - `"key":...`: the key is there, with any value.
 * - `[x, y]`: exactly these elements; `[x, ...]` starts with x, `[..., x]` ends with x,
 *   `[...]` any array.
 * - a string holding `...` matches any text in its place: `"token":"..."`.
 * - numbers, booleans and null: exactly.
 *
 * Text that is not JSON (an HTML page) is a string pattern the same way.
 */

export type Pattern =
  | { kind: 'any' }
  | { kind: 'object'; entries: Array<[string, Pattern]>; open: boolean }
  | { kind: 'array'; items: Array<Pattern | 'gap'> }
  | { kind: 'string'; text: string }
  | { kind: 'literal'; value: number | boolean | null };

export class PatternError extends Error {}

export function parsePattern(source: string): Pattern {
  let i = 0;
  const ws = () => {
    while (i < source.length && /\s/.test(source[i])) i++;
  };
  const fail = (what: string): never => {
    throw new PatternError(`${what} at character ${i} of: ${source}`);
  };
  const ellipsis = () => {
    ws();
    if (source.startsWith('...', i)) {
      i += 3;
      return true;
    }
    return false;
  };
  const comma = () => {
    ws();
    if (source[i] === ',') {
      i++;
      return true;
    }
    return false;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < source.length && source[i] !== '"') i += source[i] === '\\' ? 2 : 1;
    if (i >= source.length) fail('unterminated string');
    i++;
    return JSON.parse(source.slice(start, i)) as string;
  };
  const value = (): Pattern => {
    ws();
    if (ellipsis()) return { kind: 'any' };
    const c = source[i];
    if (c === '{') {
      i++;
      const entries: Array<[string, Pattern]> = [];
      let open = false;
      for (;;) {
        ws();
        if (source[i] === '}') {
          i++;
          return { kind: 'object', entries, open };
        }
        if (ellipsis()) {
          open = true;
          comma();
          continue;
        }
        if (source[i] !== '"') fail('expected a key');
        const key = string();
        ws();
        if (source[i] !== ':') fail(`expected ':' after "${key}"`);
        i++;
        entries.push([key, value()]);
        ws();
        if (!comma() && source[i] !== '}' && !source.startsWith('...', i)) fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items: Array<Pattern | 'gap'> = [];
      for (;;) {
        ws();
        if (source[i] === ']') {
          i++;
          return { kind: 'array', items };
        }
        if (ellipsis()) {
          items.push('gap');
          comma();
          continue;
        }
        items.push(value());
        ws();
        if (!comma() && source[i] !== ']') fail("expected ',' or ']'");
      }
    }
    if (c === '"') return { kind: 'string', text: string() };
    const literal = /^(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)/.exec(source.slice(i));
    if (!literal) return fail('expected a value');
    i += literal[0].length;
    return { kind: 'literal', value: JSON.parse(literal[0]) as number | boolean | null };
  };
  const result = value();
  ws();
  if (i !== source.length) fail('unexpected text after the value');
  return result;
}

/** Whether a pattern's text is complete JSON-with-ellipsis (brackets balanced outside strings). */
export function balanced(source: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return depth <= 0 && !inString;
}

/** `...` in a string pattern stands for any text. */
export function globMatches(glob: string, text: string): boolean {
  const parts = glob.split('...').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`).test(text);
}

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'nothing' : s.length > 160 ? `${s.slice(0, 160)}...` : s;
};

/** Where `actual` differs from `pattern`, or undefined when it matches. */
export function mismatch(pattern: Pattern, actual: unknown, path = '$'): string | undefined {
  switch (pattern.kind) {
    case 'any':
      return actual === undefined ? `${path}: missing` : undefined;
    case 'literal':
      return actual === pattern.value ? undefined : `${path}: expected ${show(pattern.value)}, got ${show(actual)}`;
    case 'string':
      return typeof actual === 'string' && globMatches(pattern.text, actual) ? undefined : `${path}: expected ${show(pattern.text)}, got ${show(actual)}`;
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${path}: expected an object, got ${show(actual)}`;
      const record = actual as Record<string, unknown>;
      for (const [key, p] of pattern.entries) {
        if (!(key in record)) return `${path}.${key}: missing`;
        const problem = mismatch(p, record[key], `${path}.${key}`);
        if (problem) return problem;
      }
      if (!pattern.open) {
        const shown = new Set(pattern.entries.map(([k]) => k));
        const extra = Object.keys(record).filter((k) => !shown.has(k));
        if (extra.length) return `${path}: has keys the example does not show (add them, or '...'): ${extra.join(', ')}`;
      }
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(actual)) return `${path}: expected an array, got ${show(actual)}`;
      return arrayMismatch(pattern.items, actual, path);
    }
  }
}

/** Matches items in order; a gap takes any number of elements. Bounded: documentation arrays are short. */
function arrayMismatch(items: Array<Pattern | 'gap'>, actual: unknown[], path: string): string | undefined {
  let steps = 0;
  let deepest: string | undefined;
  const fits = (p: number, a: number): boolean => {
    if (++steps > 100_000) throw new PatternError(`${path}: pattern too ambiguous to match`);
    if (p === items.length) {
      if (a !== actual.length) deepest ??= `${path}: has ${actual.length} elements, the example shows ${a} (show them, or end with '...')`;
      return a === actual.length;
    }
    const item = items[p];
    if (item === 'gap') {
      for (let k = a; k <= actual.length; k++) if (fits(p + 1, k)) return true;
      return false;
    }
    if (a >= actual.length) {
      deepest ??= `${path}: expected at least ${items.filter((x) => x !== 'gap').length} elements, got ${actual.length}`;
      return false;
    }
    const problem = mismatch(item, actual[a], `${path}[${a}]`);
    if (problem) {
      deepest = problem;
      return false;
    }
    return fits(p + 1, a + 1);
  };
  if (fits(0, 0)) return undefined;
  return deepest ?? `${path}: expected ${items.length} elements, got ${actual.length}`;
}
