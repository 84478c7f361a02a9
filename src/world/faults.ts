import { randomInt } from 'node:crypto';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { RE2JS, RE2JSException, RE2Set } from 're2js';
import type { Clock } from '../core/clock.js';
import { MAX_MATCHED_PATH_LENGTH, MAX_PATH_PATTERN_LENGTH, type FaultAction, type FaultRule, type FaultRuleInput } from './fault-schemas.js';

export { MAX_MATCHED_PATH_LENGTH, MAX_PATH_PATTERN_LENGTH };
import { DomainError } from '../core/errors.js';

/** Why a rule could not be created; the route answers it as a 400 or 409. */
export class FaultRuleError extends DomainError {
  constructor(
    readonly statusCode: 400 | 409,
    message: string,
  ) {
    super(statusCode === 409 ? 'conflict' : 'invalid', message);
    this.name = 'FaultRuleError';
  }
}

/**
 * mulberry32: a tiny PRNG with a 32-bit state. Each rule owns one, seeded from the rule, so
 * the same requests in the same order draw the same numbers on every run.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}



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
    throw new FaultRuleError(400, `body field 'path': a glob of more than ${MAX_GLOB_STARS} '*' (this one has ${texts.length - 1})`);
  }
  const parts = texts.map((text) => new GlobPart(text));
  const first = parts[0];
  if (parts.length === 1) return { test: (path) => path.length === first.length && first.fitsAt(path, 0) };
  const lastPart = parts[parts.length - 1];
  const middle = parts.slice(1, -1);
  const tooLong = middle.find((part) => part.text.includes('?') && part.length > MAX_WILDCARD_PART_LENGTH);
  if (tooLong) {
    throw new FaultRuleError(
      400,
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
      throw new FaultRuleError(400, `body field 'path': not a regular expression the emulator can run: \\k<...> is a backreference${UNSUPPORTED}`);
    }
    i++;
  }
  try {
    const source = RE2JS.translateRegExp(pattern);
    return { source, size: RE2JS.compile(source).programSize() };
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    throw new FaultRuleError(
      400,
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
 * refused (FaultRuleError naming the reason).
 */
export function compilePathPattern(pattern: string): { glob: PathMatcher } | { regex: RegexPattern } {
  if (pattern.length > MAX_PATH_PATTERN_LENGTH) {
    throw new FaultRuleError(400, `body field 'path': longer than ${MAX_PATH_PATTERN_LENGTH} characters`);
  }
  if (!pattern.startsWith('^')) return { glob: compileGlob(pattern) };
  const regex = compileRegex(pattern);
  if (regex.size > MAX_REGEX_PROGRAM_SIZE) {
    throw new FaultRuleError(
      400,
      `body field 'path': the regular expression compiles to ${regex.size} instructions, more than the ${MAX_REGEX_PROGRAM_SIZE} all rules may use together; use a glob, or a shorter expression (a repeat such as {1000} counts once per repetition)`,
    );
  }
  return { regex };
}

/** What the request in hand should suffer. */
export interface FaultVerdict {
  /** Total delay of every matching latency rule, in real milliseconds. */
  latencyMs: number;
  /** Ids of the rules that fired. */
  ruleIds: string[];
  /** The first matching status or drop rule, if any: it answers instead of the route. */
  answer?: { ruleId: string; action: Exclude<FaultAction, { latencyMs: number }> };
}

export interface RequestFacts {
  method: string;
  /** The path as sent, without the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

interface LiveRule {
  rule: FaultRule;
  /** The path pattern: a glob's matcher, or a regular expression's place in the RegexSet. */
  glob?: PathMatcher;
  regex?: RegexPattern & { index: number };
  random: () => number;
}

/** More rules than this is a runaway test, not a scenario. */
export const MAX_RULES = 1000;

/** Fault-injection rules. Knows nothing of HTTP: it judges request facts. */
export class FaultStore {
  private rules: LiveRule[] = [];
  private counter = 0;
  /** The regular expressions of the rules, in one automaton; undefined when there are none. */
  private regexes?: RegexSet;
  private regexSize = 0;

  constructor(private readonly clock: Clock) {}

  add(input: FaultRuleInput): FaultRule {
    const id = input.id ?? this.nextId();
    if (this.rules.some((r) => r.rule.id === id)) throw new FaultRuleError(409, `a fault rule with id '${id}' already exists`);
    if (this.rules.length >= MAX_RULES) throw new FaultRuleError(409, `there are already ${MAX_RULES} fault rules: delete some first`);
    const pattern = compilePathPattern(input.path);
    if ('regex' in pattern && this.regexSize + pattern.regex.size > MAX_REGEX_PROGRAM_SIZE) {
      throw new FaultRuleError(
        409,
        `the regular expressions of the fault rules would compile to ${this.regexSize + pattern.regex.size} instructions together, more than ${MAX_REGEX_PROGRAM_SIZE} (this one: ${pattern.regex.size}): delete some rules first, or use a glob`,
      );
    }
    const value = input.header?.value;
    const header = input.header ? { name: input.header.name.toLowerCase(), ...(value !== undefined ? { value } : {}) } : undefined;
    const action = normaliseAction(input.action);
    const now = this.clock.now();
    const seed = input.seed ?? randomInt(0, 2 ** 31);
    const rule: FaultRule = {
      id,
      method: (input.method ?? '*').toUpperCase(),
      path: input.path,
      ...(header ? { header } : {}),
      action,
      ...(input.times !== undefined ? { times: input.times, remaining: input.times } : {}),
      ...(input.untilMs !== undefined ? { untilMs: input.untilMs, expiresAt: now + input.untilMs } : {}),
      probability: input.probability ?? 1,
      seed,
      createdAt: now,
      matched: 0,
      fired: 0,
      active: true,
    };
    const live: LiveRule = { rule, random: mulberry32(seed), ...('glob' in pattern ? { glob: pattern.glob } : { regex: { ...pattern.regex, index: -1 } }) };
    this.rules.push(live);
    if (live.regex) this.rebuildRegexes();
    return { ...rule };
  }

  list(): FaultRule[] {
    const now = this.clock.now();
    return this.rules.map(({ rule }) => ({ ...rule, active: isActive(rule, now) }));
  }

  /** How many rules can still fire, without copying them. */
  activeCount(): number {
    const now = this.clock.now();
    let count = 0;
    for (const { rule } of this.rules) if (isActive(rule, now)) count++;
    return count;
  }

  get(id: string): FaultRule | undefined {
    return this.list().find((r) => r.id === id);
  }

  delete(id: string): boolean {
    const gone = this.rules.find((r) => r.rule.id === id);
    if (!gone) return false;
    this.rules = this.rules.filter((r) => r !== gone);
    if (gone.regex) this.rebuildRegexes();
    return true;
  }

  clear(): void {
    this.rules = [];
    this.counter = 0;
    this.rebuildRegexes();
  }

  /** Whether there are no rules at all (active or not): then no request needs judging. */
  get isEmpty(): boolean {
    return this.rules.length === 0;
  }

  /**
   * Judges one request. Rules are tried in the order they were created: every matching
   * latency rule adds its delay, and the first matching status or drop rule answers.
   * A rule's random draw happens only when it matches, and only a rule that fires uses up
   * one of its `times`. A path longer than MAX_MATCHED_PATH_LENGTH matches no rule.
   */
  judge(facts: RequestFacts): FaultVerdict {
    const verdict: FaultVerdict = { latencyMs: 0, ruleIds: [] };
    if (this.rules.length === 0 || facts.path.length > MAX_MATCHED_PATH_LENGTH) return verdict;
    const now = this.clock.now();
    const method = facts.method.toUpperCase();
    // Every regular expression is matched in the same pass, the first time one is needed.
    let regexMatches: Set<number> | undefined;
    for (const live of this.rules) {
      const { rule } = live;
      if (!isActive(rule, now)) continue;
      const isAnswer = !('latencyMs' in rule.action);
      if (isAnswer && verdict.answer) continue;
      if (rule.method !== '*' && rule.method !== method) continue;
      if (live.glob) {
        if (!live.glob.test(facts.path)) continue;
      } else {
        regexMatches ??= this.regexes!.match(facts.path);
        if (!regexMatches.has(live.regex!.index)) continue;
      }
      if (rule.header && !headerMatches(facts.headers, rule.header.name, rule.header.value)) continue;
      rule.matched++;
      if (rule.probability < 1 && live.random() >= rule.probability) continue;
      rule.fired++;
      if (rule.remaining !== undefined) rule.remaining--;
      verdict.ruleIds.push(rule.id);
      if ('latencyMs' in rule.action) verdict.latencyMs += rule.action.latencyMs;
      else verdict.answer = { ruleId: rule.id, action: rule.action };
    }
    return verdict;
  }

  private rebuildRegexes(): void {
    const withRegex = this.rules.filter((live) => live.regex);
    withRegex.forEach((live, index) => (live.regex!.index = index));
    this.regexSize = withRegex.reduce((sum, live) => sum + live.regex!.size, 0);
    this.regexes = withRegex.length ? new RegexSet(withRegex.map((live) => live.regex!.source)) : undefined;
  }

  private nextId(): string {
    let id: string;
    do id = `fault-${++this.counter}`;
    while (this.rules.some((r) => r.rule.id === id));
    return id;
  }
}

function isActive(rule: FaultRule, now: number): boolean {
  if (rule.remaining !== undefined && rule.remaining <= 0) return false;
  if (rule.expiresAt !== undefined && now >= rule.expiresAt) return false;
  return true;
}

function headerMatches(headers: RequestFacts['headers'], name: string, expected: string | undefined): boolean {
  // Own headers only: '__proto__' or 'constructor' must not find what every object inherits.
  const actual = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (actual === undefined) return false;
  if (expected === undefined) return true;
  return Array.isArray(actual) ? actual.includes(expected) : actual === expected;
}

/** Far deeper than any real error body; serialising a rule recurses, so this bounds the stack. */
const MAX_BODY_DEPTH = 64;

function deeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels === 0) return true;
  return Object.values(value).some((v) => deeperThan(v, levels - 1));
}

/** Exactly one kind of action, so a rule never means two things. */
function normaliseAction(action: FaultRuleInput['action']): FaultAction {
  const kinds = (['status', 'latencyMs', 'drop'] as const).filter((k) => action[k] !== undefined);
  if (kinds.length !== 1) {
    throw new FaultRuleError(400, `body field 'action': give exactly one of status, latencyMs or drop (got ${kinds.length ? kinds.join(', ') : 'none'})`);
  }
  if (action.status !== undefined) {
    if (deeperThan(action.body, MAX_BODY_DEPTH)) {
      throw new FaultRuleError(400, `body field 'action.body': nested deeper than ${MAX_BODY_DEPTH} levels`);
    }
    if (action.headers !== undefined) checkResponseHeaders(action.headers);
    return {
      status: action.status,
      ...(action.body !== undefined ? { body: action.body } : {}),
      ...(action.headers !== undefined ? { headers: action.headers } : {}),
    };
  }
  if (action.body !== undefined || action.headers !== undefined) {
    throw new FaultRuleError(400, "body field 'action': body and headers go with status only");
  }
  if (action.latencyMs !== undefined) return { latencyMs: action.latencyMs };
  if (action.drop !== true) throw new FaultRuleError(400, "body field 'action.drop': must be true");
  return { drop: true };
}

/**
 * Headers Node would refuse to send (a name with a space or a line break, a value with one)
 * are refused when the rule is added: at every match they would make the answer fail.
 */
function checkResponseHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    try {
      validateHeaderName(name);
    } catch {
      throw new FaultRuleError(400, `body field 'action.headers': ${JSON.stringify(name)} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    }
    try {
      validateHeaderValue(name, value);
    } catch {
      throw new FaultRuleError(400, `body field 'action.headers': the value of '${name}' holds a character not allowed in a header (a line break, another control character, or one beyond Latin-1)`);
    }
  }
}
