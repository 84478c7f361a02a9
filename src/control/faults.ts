import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { FaultAction, FaultRule, FaultRuleInput } from './schemas.js';

/** Why a rule could not be created; the route answers it as a 400 or 409. */
export class FaultRuleError extends Error {
  constructor(
    readonly statusCode: 400 | 409,
    message: string,
  ) {
    super(message);
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

/** Longer path patterns are refused: a real one names a route, it does not spell out a book. */
export const MAX_PATH_PATTERN_LENGTH = 512;

/** What a rule's path pattern is: it says whether a request path matches. */
export interface PathMatcher {
  test(path: string): boolean;
}

/**
 * A path pattern: a string starting with `^` is a regular expression; anything else is a
 * glob where `*` matches any run of characters (slashes included) and `?` one character.
 * Patterns run on every request, so a regular expression that could backtrack for minutes
 * is refused (FaultRuleError naming the reason). A glob with one `*` at most becomes a
 * regular expression (linear, and the fastest); one with more is walked by globMatches,
 * since as a regular expression `*a*a*a*b` would be such a pattern.
 */
export function compilePathPattern(pattern: string): PathMatcher {
  if (pattern.length > MAX_PATH_PATTERN_LENGTH) {
    throw new FaultRuleError(400, `body field 'path': longer than ${MAX_PATH_PATTERN_LENGTH} characters`);
  }
  if (!pattern.startsWith('^')) {
    if (pattern.indexOf('*') !== pattern.lastIndexOf('*')) return { test: (path) => globMatches(pattern, path) };
    const body = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return new RegExp(`^${body}$`);
  }
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch (err) {
    throw new FaultRuleError(400, `body field 'path': not a valid regular expression: ${(err as Error).message}`);
  }
  const problem = backtrackingProblem(pattern);
  if (problem) throw new FaultRuleError(400, `body field 'path': ${problem}; such a pattern can take minutes on one path`);
  return regex;
}

/**
 * The whole of `text` against a glob, by the usual two-pointer walk that goes back only to
 * the last `*`: at worst glob length times text length steps, never exponential.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = glob.charCodeAt(g);
    if (c === 42 /* * */) {
      star = g++;
      resume = t;
    } else if (g < glob.length && (c === 63 /* ? */ || c === text.charCodeAt(t))) {
      g++;
      t++;
    } else if (star >= 0) {
      // The last * takes one more character, and the rest of the glob tries again after it.
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (glob.charCodeAt(g) === 42) g++;
  return g === glob.length;
}

// ---------------------------------------------------------------------------------------
// Regular expressions that backtrack catastrophically
// ---------------------------------------------------------------------------------------
//
// JavaScript's engine backtracks, so some patterns take exponential or high polynomial time
// on a path that almost matches. The usual culprits are found on a small syntax tree of the
// pattern (which already compiled, so its syntax is valid):
// - a repeated group that itself contains a repetition: (a+)+, (a*)*, (.*)*, (\d+-?)+;
// - a repeated group whose alternatives can begin with the same character: (a|aa)+, (\d|1)*;
// - three or more unbounded repetitions in a row that can all match the same text, each
//   able to swallow what lies between it and the next: .*a.*a.*b, \d+\d+\d+ (time grows
//   with the cube of the path length). Two are allowed: ^/a/.*/b/.* stays fast.
// Character sets are compared on ASCII (URL paths) plus one stand-in for any other character.

/** Characters an atom can match: 128 ASCII flags and one for everything else. */
type CharSet = Uint8Array;
const SET_SIZE = 129;
const NON_ASCII_SAMPLES = ['\u00e9', '\u4e2d', '\ud83d'];

interface Item {
  atom: Atom;
  min: number;
  max: number;
}
type Atom =
  /** One character: a literal, `.`, an escape such as `\d`, or a class `[...]`; `src` is its source. */
  | { kind: 'char'; src: string }
  | { kind: 'group'; alternatives: Item[][]; zeroWidth: boolean }
  /** An anchor or a word boundary: matches no character. */
  | { kind: 'assertion' }
  /** A back-reference: could be anything. */
  | { kind: 'backreference' };

/** A repetition with this much room or more counts as unbounded (`.{0,100}` is `.*` in effect). */
const WIDE_REPEAT = 32;
/** Unbounded repetitions in a row that may all take the same text; more is refused. */
const MAX_AMBIGUOUS_RUN = 2;

class PatternParser {
  private i = 0;
  constructor(private readonly p: string) {}

  parse(): Item[][] {
    return this.alternatives();
  }

  private alternatives(): Item[][] {
    const alternatives = [this.sequence()];
    while (this.p[this.i] === '|') {
      this.i++;
      alternatives.push(this.sequence());
    }
    return alternatives;
  }

  private sequence(): Item[] {
    const items: Item[] = [];
    while (this.i < this.p.length && this.p[this.i] !== '|' && this.p[this.i] !== ')') {
      const atom = this.atom();
      items.push({ atom, ...this.quantifier() });
    }
    return items;
  }

  private atom(): Atom {
    const { p } = this;
    const c = p[this.i];
    if (c === '(') {
      let zeroWidth = false;
      if (p.startsWith('(?:', this.i)) this.i += 3;
      else if (p.startsWith('(?=', this.i) || p.startsWith('(?!', this.i)) [this.i, zeroWidth] = [this.i + 3, true];
      else if (p.startsWith('(?<=', this.i) || p.startsWith('(?<!', this.i)) [this.i, zeroWidth] = [this.i + 4, true];
      else if (p.startsWith('(?<', this.i)) this.i = p.indexOf('>', this.i) + 1;
      else this.i++;
      const alternatives = this.alternatives();
      this.i++; // ')'
      return { kind: 'group', alternatives, zeroWidth };
    }
    if (c === '[') {
      let j = this.i + 1;
      if (p[j] === '^') j++;
      while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : 1;
      const src = p.slice(this.i, j + 1);
      this.i = j + 1;
      return { kind: 'char', src };
    }
    if (c === '\\') {
      const next = p[this.i + 1] ?? '';
      if (next === 'b' || next === 'B') {
        this.i += 2;
        return { kind: 'assertion' };
      }
      if (/[1-9]/.test(next)) {
        this.i += 1 + /^[0-9]+/.exec(p.slice(this.i + 1))![0].length;
        return { kind: 'backreference' };
      }
      if (next === 'k' && p[this.i + 2] === '<') {
        this.i = p.indexOf('>', this.i) + 1;
        return { kind: 'backreference' };
      }
      const length = next === 'c' ? 3 : next === 'x' ? 4 : next === 'u' && /^[0-9a-fA-F]{4}/.test(p.slice(this.i + 2)) ? 6 : 2;
      const src = p.slice(this.i, this.i + length);
      this.i += length;
      return { kind: 'char', src };
    }
    this.i++;
    if (c === '^' || c === '$') return { kind: 'assertion' };
    return { kind: 'char', src: c === '.' ? '.' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') };
  }

  private quantifier(): { min: number; max: number } {
    const { p } = this;
    let bounds: { min: number; max: number };
    const c = p[this.i];
    if (c === '*') bounds = { min: 0, max: Infinity };
    else if (c === '+') bounds = { min: 1, max: Infinity };
    else if (c === '?') bounds = { min: 0, max: 1 };
    else if (c === '{') {
      const m = /^\{([0-9]+)(,([0-9]*))?\}/.exec(p.slice(this.i));
      // Not a quantifier: a literal brace, read as an atom by the caller.
      if (!m) return { min: 1, max: 1 };
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
      bounds = { min, max };
    } else return { min: 1, max: 1 };
    this.i++;
    if (p[this.i] === '?') this.i++; // lazy: the same backtracking, in another order
    return bounds;
  }
}

const charSetCache = new Map<string, CharSet>();

function charSetOf(src: string): CharSet {
  let set = charSetCache.get(src);
  if (set) return set;
  set = new Uint8Array(SET_SIZE);
  const regex = new RegExp(`^(?:${src})$`);
  for (let c = 0; c < 128; c++) set[c] = regex.test(String.fromCharCode(c)) ? 1 : 0;
  set[128] = NON_ASCII_SAMPLES.some((s) => regex.test(s)) ? 1 : 0;
  if (charSetCache.size < 10_000) charSetCache.set(src, set);
  return set;
}

const ALL: CharSet = new Uint8Array(SET_SIZE).fill(1);

function union(into: CharSet, from: CharSet): CharSet {
  for (let c = 0; c < SET_SIZE; c++) into[c] |= from[c];
  return into;
}
const overlaps = (a: CharSet, b: CharSet) => a.some((v, c) => v === 1 && b[c] === 1);
const within = (a: CharSet, b: CharSet) => a.every((v, c) => v === 0 || b[c] === 1);

/** Every character the atom can take. */
function charsOf(atom: Atom): CharSet {
  switch (atom.kind) {
    case 'char':
      return charSetOf(atom.src);
    case 'backreference':
      return ALL;
    case 'assertion':
      return new Uint8Array(SET_SIZE);
    case 'group': {
      const set = new Uint8Array(SET_SIZE);
      if (!atom.zeroWidth) for (const alternative of atom.alternatives) for (const item of alternative) union(set, charsOf(item.atom));
      return set;
    }
  }
}

function nullable(item: Item): boolean {
  if (item.min === 0) return true;
  const { atom } = item;
  if (atom.kind === 'assertion' || atom.kind === 'backreference') return true;
  if (atom.kind === 'char') return false;
  return atom.zeroWidth || atom.alternatives.some((alternative) => alternative.every(nullable));
}

/** Characters the sequence can begin with; all of them when it can match nothing at all. */
function firstChars(items: Item[]): CharSet {
  const set = new Uint8Array(SET_SIZE);
  for (const item of items) {
    const { atom } = item;
    if (atom.kind === 'char') union(set, charSetOf(atom.src));
    else if (atom.kind === 'backreference') return ALL;
    else if (atom.kind === 'group' && !atom.zeroWidth) for (const alternative of atom.alternatives) union(set, firstChars(alternative));
    if (!nullable(item)) return set;
  }
  return ALL;
}

/** A group that only wraps another, as in ((a|aa))+, stands for the inner one. */
function unwrap(atom: Atom): Atom {
  while (atom.kind === 'group' && atom.alternatives.length === 1 && atom.alternatives[0].length === 1) {
    const [only] = atom.alternatives[0];
    if (only.min !== 1 || only.max !== 1 || only.atom.kind !== 'group' || only.atom.zeroWidth) break;
    atom = only.atom;
  }
  return atom;
}

const varies = (item: Item) => item.max > 1 && item.max > item.min;

function containsRepetition(atom: Atom): boolean {
  return atom.kind === 'group' && atom.alternatives.some((alternative) => alternative.some((item) => varies(item) || containsRepetition(item.atom)));
}

/** The items of a sequence, with plain groups of one alternative, (?:a.*) say, opened up. */
function flatten(items: Item[]): Item[] {
  return items.flatMap((item) =>
    item.min === 1 && item.max === 1 && item.atom.kind === 'group' && !item.atom.zeroWidth && item.atom.alternatives.length === 1
      ? flatten(item.atom.alternatives[0])
      : [item],
  );
}

/** The longest run of unbounded repetitions of which each can take the text of the next and what lies between. */
function longestAmbiguousRun(items: Item[]): number {
  let longest = 0;
  let run = 0;
  let last: CharSet | undefined;
  let between = new Uint8Array(SET_SIZE);
  for (const item of flatten(items)) {
    const chars = charsOf(item.atom);
    if (item.max === Infinity || item.max - item.min >= WIDE_REPEAT) {
      run = last && within(between, last) && overlaps(chars, last) ? run + 1 : 1;
      longest = Math.max(longest, run);
      last = chars;
      between = new Uint8Array(SET_SIZE);
    } else {
      union(between, chars);
    }
  }
  return longest;
}

function problemIn(alternatives: Item[][]): string | undefined {
  for (const alternative of alternatives) {
    if (longestAmbiguousRun(alternative) > MAX_AMBIGUOUS_RUN) {
      return `more than ${MAX_AMBIGUOUS_RUN} repetitions in a row that can match the same text (as in .*a.*a.*b)`;
    }
    for (const item of alternative) {
      const atom = unwrap(item.atom);
      if (atom.kind !== 'group') continue;
      if (item.max > 1 && containsRepetition(atom)) return 'a nested quantifier: a repeated group that itself contains a repetition (as in (a+)+)';
      if (item.max > 1 && atom.alternatives.length > 1) {
        const firsts = atom.alternatives.map(firstChars);
        for (let a = 0; a < firsts.length; a++) {
          for (let b = a + 1; b < firsts.length; b++) {
            if (overlaps(firsts[a], firsts[b])) return 'a repeated group whose alternatives can begin with the same character (as in (a|aa)+)';
          }
        }
      }
      const inner = problemIn(atom.alternatives);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** Why a valid regular expression could backtrack catastrophically, or undefined. */
export function backtrackingProblem(pattern: string): string | undefined {
  return problemIn(new PatternParser(pattern).parse());
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
  pattern: PathMatcher;
  random: () => number;
}

/** More rules than this is a runaway test, not a scenario. */
export const MAX_RULES = 1000;

/** Fault-injection rules. Knows nothing of HTTP: it judges request facts. */
export class FaultStore {
  private rules: LiveRule[] = [];
  private counter = 0;

  constructor(private readonly clock: Clock) {}

  add(input: FaultRuleInput): FaultRule {
    const id = input.id ?? this.nextId();
    if (this.rules.some((r) => r.rule.id === id)) throw new FaultRuleError(409, `a fault rule with id '${id}' already exists`);
    if (this.rules.length >= MAX_RULES) throw new FaultRuleError(409, `there are already ${MAX_RULES} fault rules: delete some first`);
    const pattern = compilePathPattern(input.path);
    const action = normaliseAction(input.action);
    const now = this.clock.now();
    const seed = input.seed ?? randomInt(0, 2 ** 31);
    const rule: FaultRule = {
      id,
      method: (input.method ?? '*').toUpperCase(),
      path: input.path,
      ...(input.header ? { header: { name: input.header.name.toLowerCase(), ...(input.header.value !== undefined ? { value: input.header.value } : {}) } } : {}),
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
    this.rules.push({ rule, pattern, random: mulberry32(seed) });
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
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.rule.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
    this.counter = 0;
  }

  /**
   * Judges one request. Rules are tried in the order they were created: every matching
   * latency rule adds its delay, and the first matching status or drop rule answers.
   * A rule's random draw happens only when it matches, and only a rule that fires uses up
   * one of its `times`.
   */
  judge(facts: RequestFacts): FaultVerdict {
    const verdict: FaultVerdict = { latencyMs: 0, ruleIds: [] };
    if (this.rules.length === 0) return verdict;
    const now = this.clock.now();
    const method = facts.method.toUpperCase();
    for (const live of this.rules) {
      const { rule } = live;
      if (!isActive(rule, now)) continue;
      const isAnswer = !('latencyMs' in rule.action);
      if (isAnswer && verdict.answer) continue;
      if (rule.method !== '*' && rule.method !== method) continue;
      if (!live.pattern.test(facts.path)) continue;
      if (rule.header && !headerMatches(facts.headers[rule.header.name], rule.header.value)) continue;
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

function headerMatches(actual: string | string[] | undefined, expected: string | undefined): boolean {
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
