import { RE2JS, RE2JSException, RE2Set } from 're2js';
import { invalid } from './errors.js';

/**
 * Path patterns: a glob or a regular expression, compiled to a matcher that takes time
 * proportional to the path whatever the pattern. Pure: fault rules match requests with it,
 * and the request journal searches with its globs.
 */

/** Longer path patterns are refused: a real one names a route, it does not spell out a book. */
export const MAX_PATH_PATTERN_LENGTH = 512;

/**
 * Paths longer than this are matched by no rule. No path of the emulated interfaces comes
 * near it (a path segment is at most 100 characters); the bound is what keeps the work of
 * matching every rule against one request small (see MAX_REGEX_PROGRAM_SIZE).
 */
export const MAX_MATCHED_PATH_LENGTH = 1024;

/**
 * How large the regular expressions of all rules may be together, in instructions of their
 * compiled programs. They are matched in one pass over the path, and in the worst case that
 * pass steps through every instruction at every character: this and MAX_MATCHED_PATH_LENGTH
 * bound the work a request can cost.
 */
export const MAX_REGEX_PROGRAM_SIZE = 500;

/**
 * The longest part between two `*` of a glob that may hold a `?`: such a part is searched for
 * with one machine word per step (a shift-and search), so its length is that of a word.
 */
export const MAX_WILDCARD_PART_LENGTH = 31;

/**
 * The most stars a glob may have (a run of stars counts as one). Real globs have a few; the
 * bound keeps the searches one request costs, and the memory of the rules, small.
 */
export const MAX_GLOB_STARS = 32;

/**
 * Memory the lazily built automaton of the regular expressions may take, in bytes. Typical
 * rules need a few kilobytes; a set built to defeat the automaton fills any amount in vain
 * before the engine falls back to stepping through the program, so more only costs memory
 * and makes that worst case slower.
 */
const REGEX_AUTOMATON_BYTES = 64 * 1024;

/** What a rule's path pattern is: it says whether a request path matches. */
export interface PathMatcher {
  test(path: string): boolean;
}

const QUESTION_MARK = 63;

/** A part of a glob between stars: literal characters and `?`, each standing for one. */
class GlobPart {
  readonly length: number;
  private readonly wild: boolean;
  /**
   * Shift-and masks, by character code: bit j is set where the part's character j is that
   * character or `?`. ASCII codes are looked up in a table, any other in a map, falling back
   * to the mask of the `?` alone.
   */
  private readonly ascii = new Int32Array(128);
  private readonly others = new Map<number, number>();
  private wildMask = 0;

  constructor(readonly text: string) {
    this.length = text.length;
    this.wild = text.includes('?');
    if (!this.wild) return;
    for (let j = 0; j < text.length; j++) if (text.charCodeAt(j) === QUESTION_MARK) this.wildMask |= 1 << j;
    this.ascii.fill(this.wildMask);
    for (let j = 0; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUESTION_MARK) continue;
      if (c < 128) this.ascii[c] |= 1 << j;
      else this.others.set(c, (this.others.get(c) ?? this.wildMask) | (1 << j));
    }
  }

  /** Whether the part matches `path` at `at`. */
  fitsAt(path: string, at: number): boolean {
    if (!this.wild) return path.startsWith(this.text, at);
    for (let j = 0; j < this.length; j++) {
      const c = this.text.charCodeAt(j);
      if (c !== QUESTION_MARK && c !== path.charCodeAt(at + j)) return false;
    }
    return true;
  }

  /** Where the part first matches `path` at or after `from`, ending by `end`; -1 if nowhere. */
  find(path: string, from: number, end: number): number {
    if (!this.wild) {
      const at = path.indexOf(this.text, from);
      return at >= 0 && at + this.length <= end ? at : -1;
    }
    // Shift-and: bit j of `state` says the part's first j+1 characters end at position i.
    // One step per character of the path, whatever the part holds.
    const last = 1 << (this.length - 1);
    let state = 0;
    for (let i = from; i < end; i++) {
      const c = path.charCodeAt(i);
      state = ((state << 1) | 1) & (c < 128 ? this.ascii[c] : (this.others.get(c) ?? this.wildMask));
      if (state & last) return i - this.length + 1;
    }
    return -1;
  }
}

/**
 * A glob (`*` any run of characters, slashes included; `?` one character) as a matcher that
 * takes time proportional to the path, whatever the glob: the first and last parts are
 * compared where they must stand, and each part between two stars is searched for once,
 * leftmost first, after the one before it (the leftmost place always leaves the most room to
 * the parts after it, so no other place needs trying).
 */
export function compileGlob(glob: string): PathMatcher {
  // A run of stars matches what one does.
  const texts = glob.split(/\*+/);
  if (texts.length - 1 > MAX_GLOB_STARS) {
    throw invalid(`body field 'path': a glob of more than ${MAX_GLOB_STARS} '*' (this one has ${texts.length - 1})`);
  }
  const parts = texts.map((text) => new GlobPart(text));
  const first = parts[0];
  if (parts.length === 1) return { test: (path) => path.length === first.length && first.fitsAt(path, 0) };
  const lastPart = parts[parts.length - 1];
  const middle = parts.slice(1, -1);
  const tooLong = middle.find((part) => part.text.includes('?') && part.length > MAX_WILDCARD_PART_LENGTH);
  if (tooLong) {
    throw invalid(
      `body field 'path': the part '${tooLong.text}' between two '*' holds a '?' and is longer than ${MAX_WILDCARD_PART_LENGTH} characters; split it with a '*' or spell the characters out`,
    );
  }
  const shortest = first.length + lastPart.length;
  return {
    test(path) {
      if (path.length < shortest || !first.fitsAt(path, 0) || !lastPart.fitsAt(path, path.length - lastPart.length)) return false;
      const end = path.length - lastPart.length;
      let from = first.length;
      for (const part of middle) {
        const at = part.find(path, from, end);
        if (at < 0) return false;
        from = at + part.length;
      }
      return true;
    },
  };
}

const UNSUPPORTED = ' (lookaround and backreferences are not supported: they need a backtracking engine, which one request could keep busy for minutes)';

/** A regular expression of a rule, checked and measured, ready to join the others. */
export interface RegexPattern {
  /** In the syntax of the linear-time engine (JavaScript escapes and named groups translated). */
  source: string;
  /** Instructions of its compiled program: what matching it can cost per path character. */
  size: number;
}

/**
 * A regular expression in JavaScript syntax, for the linear-time engine (RE2's semantics):
 * it never backtracks, so it matches in time proportional to the path times its size. What
 * only a backtracking engine can do, lookaround and backreferences, is refused.
 */
export function compileRegex(pattern: string): RegexPattern {
  // The translation below reads \k as a plain k, as JavaScript does without named groups; with
  // them \k<name> is a backreference, which must be refused rather than silently changed.
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] === 'k' && pattern[i + 2] === '<') {
      throw invalid(`body field 'path': not a regular expression the emulator can run: \\k<...> is a backreference${UNSUPPORTED}`);
    }
    i++;
  }
  try {
    const source = RE2JS.translateRegExp(pattern);
    return { source, size: RE2JS.compile(source).programSize() };
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    throw invalid(
      `body field 'path': not a regular expression the emulator can run: ${err.message}${/unsupported Perl syntax|escape sequence: `\\[1-9]/.test(err.message) ? UNSUPPORTED : ''}`,
    );
  }
}

/** Every rule's regular expression in one automaton, matched in one pass over a path. */
export class RegexSet {
  private readonly set: RE2Set;

  constructor(sources: readonly string[]) {
    // Every pattern starts with ^, so a match can only start at the start of the path.
    this.set = new RE2Set(RE2Set.ANCHOR_START, 0, REGEX_AUTOMATON_BYTES);
    for (const source of sources) this.set.add(source);
    this.set.compile();
  }

  /** Indexes (in the order given) of the expressions that match `path`. */
  match(path: string): Set<number> {
    return new Set(this.set.match(path));
  }
}

/**
 * A path pattern: a string starting with `^` is a regular expression; anything else is a
 * glob. Both run on every request, so both match in time proportional to the path: a glob
 * by compileGlob, a regular expression on a linear-time engine. A pattern that cannot is
 * refused (an `invalid` DomainError naming the reason).
 */
export function compilePathPattern(pattern: string): { glob: PathMatcher } | { regex: RegexPattern } {
  if (pattern.length > MAX_PATH_PATTERN_LENGTH) {
    throw invalid(`body field 'path': longer than ${MAX_PATH_PATTERN_LENGTH} characters`);
  }
  if (!pattern.startsWith('^')) return { glob: compileGlob(pattern) };
  const regex = compileRegex(pattern);
  if (regex.size > MAX_REGEX_PROGRAM_SIZE) {
    throw invalid(
      `body field 'path': the regular expression compiles to ${regex.size} instructions, more than the ${MAX_REGEX_PROGRAM_SIZE} all rules may use together; use a glob, or a shorter expression (a repeat such as {1000} counts once per repetition)`,
    );
  }
  return { regex };
}
