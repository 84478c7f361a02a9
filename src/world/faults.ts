import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { FaultAction, FaultRule, FaultRuleInput } from '../control/schemas.js';

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

/**
 * The classic shape of a regular expression that backtracks catastrophically: a repeated
 * group that itself contains a repetition, as in (a+)+, (.*)* or (?:[a-z]+-?)+. Other slow
 * shapes, such as (a|aa)+ or .*a.*a.*b, are not detected: a regular expression runs as given,
 * so keep it plain (a glob is always safe).
 */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)(?:[*+]|\{\d+,\d*\})/;

/** Why a valid regular expression could backtrack catastrophically, or undefined. */
export function backtrackingProblem(pattern: string): string | undefined {
  return NESTED_QUANTIFIER.test(pattern)
    ? 'a nested quantifier: a repeated group that itself contains a repetition (as in (a+)+)'
    : undefined;
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
