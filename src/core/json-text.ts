/**
 * Positions in the text of a JSON document: where its first syntax error is, and where the
 * value at a JSON pointer starts. JSON.parse reads a document far faster, but names no line
 * and column (and on some Node versions no position at all); these are only run for a
 * document that has problems, once per document, however many problems it has.
 *
 * One pass over the text, iterative (a document nested thousands deep needs no stack), and
 * linear: strings and numbers are read character by character, never by a pattern that
 * could backtrack.
 */

/** A place in a text: 1-based line and column (columns count UTF-16 code units). */
export interface TextPosition {
  line: number;
  column: number;
}

/** The first syntax error of a JSON text: where it is and what is wrong. */
export interface JsonSyntaxError {
  offset: number;
  message: string;
}

/** The segments of JSON pointers, merged into a tree, so that one pass finds every one. */
interface PointerNode {
  children: Map<string, PointerNode>;
  /** The pointers that pass through (or end at) this node, by their index in the list given. */
  ids: number[];
}

function pointerTree(pointers: readonly (readonly string[])[]): PointerNode {
  const root: PointerNode = { children: new Map(), ids: [] };
  pointers.forEach((segments, id) => {
    let node = root;
    node.ids.push(id);
    for (const segment of segments) {
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = { children: new Map(), ids: [] }));
      child.ids.push(id);
      node = child;
    }
  });
  return root;
}

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const MINUS = 45;
const DOT = 46;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

function describe(text: string, at: number): string {
  if (at >= text.length) return 'end of the text';
  const ch = text[at];
  const c = ch.charCodeAt(0);
  // Characters that print as nothing (a byte-order mark, a control or zero-width character) are named by their code.
  const invisible = c < 32 || (c >= 0x7f && c <= 0xa0) || c === 0xfeff || (c >= 0x2000 && c <= 0x200f) || c === 0x2028 || c === 0x2029;
  return invisible ? `character U+${c.toString(16).toUpperCase().padStart(4, '0')}` : `'${ch}'`;
}

/**
 * Walks a JSON text. With `offsets`, records for each pointer of `tree` where the deepest part
 * of it that the document holds starts (an object member: its key; an array element: the
 * element). Answers the first syntax error, if any.
 */
function walk(text: string, tree?: PointerNode, offsets?: number[]): JsonSyntaxError | undefined {
  const n = text.length;
  let i = 0;
  const stack: Array<{ object: boolean; node: PointerNode | undefined; index: number }> = [];
  const fail = (message: string, offset = i): JsonSyntaxError => ({ offset: Math.min(offset, n), message });
  const skipSpace = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === SPACE || c === LF || c === CR || c === TAB) i++;
      else break;
    }
  };
  const mark = (node: PointerNode | undefined, at: number) => {
    if (node && offsets) for (const id of node.ids) offsets[id] = at;
  };
  /** Reads a string from its opening quote; an error, or undefined once past its closing quote. */
  const readString = (): JsonSyntaxError | undefined => {
    const start = i;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i++;
        return undefined;
      }
      if (c === BACKSLASH) {
        const e = text.charCodeAt(i + 1);
        if (e === 117 /* u */) {
          for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) return fail('a \\u escape needs four hexadecimal digits', i);
          i += 6;
        } else if (e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) i += 2;
        else return fail(`unknown escape '\\${text[i + 1] ?? ''}' in a string`, i);
        continue;
      }
      if (c < 32) return fail(`${c === LF ? 'a line break' : 'a control character'} inside a string (write it as an escape)`, i);
      i++;
    }
    return fail('a string is not closed (a " is missing)', start);
  };
  /** Reads a member's key and colon, and moves `node` to the member; an error or undefined. */
  let node = tree;
  const readMember = (top: { node: PointerNode | undefined }): JsonSyntaxError | undefined => {
    if (text.charCodeAt(i) !== QUOTE) return fail(`expected a property name in double quotes, found ${describe(text, i)}`);
    const keyAt = i;
    const error = readString();
    if (error) return error;
    const keyEnd = i - 1;
    skipSpace();
    if (text.charCodeAt(i) !== COLON) return fail(`expected ':' after the property name, found ${describe(text, i)}`);
    i++;
    if (top.node) {
      const quoted = text.slice(keyAt + 1, keyEnd);
      const key = quoted.includes('\\') ? (JSON.parse(`"${quoted}"`) as string) : quoted;
      node = top.node.children.get(key);
      mark(node, keyAt);
    } else node = undefined;
    return undefined;
  };
  mark(tree, 0);
  skipSpace();
  for (;;) {
    // A value is expected, for `node`.
    skipSpace();
    if (i >= n) return fail(stack.length ? 'the text ends where a value should be' : 'the text holds no JSON value');
    const c = text.charCodeAt(i);
    let closed = true;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const object = c === OPEN_BRACE;
      i++;
      skipSpace();
      if (text.charCodeAt(i) === (object ? CLOSE_BRACE : CLOSE_BRACKET)) i++;
      else {
        const frame = { object, node, index: 0 };
        stack.push(frame);
        if (object) {
          const error = readMember(frame);
          if (error) return error;
        } else {
          node = node?.children.get('0');
          mark(node, i);
        }
        closed = false;
      }
    } else if (c === QUOTE) {
      const error = readString();
      if (error) return error;
    } else if (c === MINUS || isDigit(c)) {
      const start = i;
      if (c === MINUS) i++;
      if (text.charCodeAt(i) === 48) i++;
      else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
      else return fail('a number needs digits', start);
      if (text.charCodeAt(i) === DOT) {
        i++;
        if (!isDigit(text.charCodeAt(i))) return fail('a number needs digits after its decimal point', start);
        while (isDigit(text.charCodeAt(i))) i++;
      }
      const e = text.charCodeAt(i);
      if (e === 101 || e === 69) {
        i++;
        const sign = text.charCodeAt(i);
        if (sign === 43 || sign === MINUS) i++;
        if (!isDigit(text.charCodeAt(i))) return fail('a number needs digits after its exponent', start);
        while (isDigit(text.charCodeAt(i))) i++;
      }
    } else if (text.startsWith('true', i)) i += 4;
    else if (text.startsWith('false', i)) i += 5;
    else if (text.startsWith('null', i)) i += 4;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) return fail(`unexpected ${describe(text, i)} where a value should be`);
    else return fail(`unexpected ${describe(text, i)}: a value is a string in double quotes, a number, true, false, null, an object or an array`);
    if (!closed) continue;
    // After a value: the next member or element, or the end of containers.
    for (;;) {
      // Where the value ends: a missing comma belongs here, on the value's line, not at the next token, often lines below.
      const end = i;
      skipSpace();
      const top = stack[stack.length - 1];
      if (!top) return i < n ? fail(`unexpected ${describe(text, i)} after the end of the JSON value`) : undefined;
      const d = text.charCodeAt(i);
      if (d === COMMA) {
        const comma = i;
        i++;
        skipSpace();
        const next = text.charCodeAt(i);
        if (next === (top.object ? CLOSE_BRACE : CLOSE_BRACKET)) return fail(`trailing comma: nothing follows it before '${text[i]}'`, comma);
        if (top.object) {
          const error = readMember(top);
          if (error) return error;
        } else {
          top.index++;
          node = top.node?.children.get(String(top.index));
          mark(node, i);
        }
        break;
      }
      if (d === (top.object ? CLOSE_BRACE : CLOSE_BRACKET)) {
        i++;
        stack.pop();
        continue;
      }
      if (i >= n) return fail(`the text ends before ${top.object ? 'an object is closed (a } is missing)' : 'an array is closed (a ] is missing)'}`);
      return fail(`expected ',' or '${top.object ? '}' : ']'}' after ${top.object ? 'a property value' : 'an array element'}, found ${describe(text, i)}`, end);
    }
  }
}

/** The first syntax error of a JSON text; undefined when it is valid JSON. */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  return walk(text);
}

/**
 * Where each JSON pointer (as segments) starts in a valid JSON text: the offset of its
 * deepest part the document holds (a missing property points at its object). One pass.
 */
export function locatePointers(text: string, pointers: readonly (readonly string[])[]): number[] {
  const offsets = pointers.map(() => 0);
  if (pointers.length) walk(text, pointerTree(pointers), offsets);
  return offsets;
}

/** The line and column of each offset of a text, counting its lines once. */
export function positionsOf(text: string, offsets: readonly number[]): TextPosition[] {
  const order = offsets.map((_, k) => k).sort((a, b) => offsets[a] - offsets[b]);
  const out: TextPosition[] = new Array(offsets.length);
  let line = 1;
  let lineStart = 0;
  let scanned = 0;
  for (const k of order) {
    const at = offsets[k];
    for (let nl = text.indexOf('\n', scanned); nl !== -1 && nl < at; nl = text.indexOf('\n', nl + 1)) {
      line++;
      lineStart = nl + 1;
    }
    scanned = Math.max(scanned, lineStart);
    out[k] = { line, column: at - lineStart + 1 };
  }
  return out;
}

/** "/grids/0/name" -> ["grids", "0", "name"] */
export function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** ["grids", "0", "name"] -> "/grids/0/name" */
export function pointerOf(segments: readonly string[]): string {
  return segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
