import { randomInt } from 'node:crypto';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Clock } from '../core/clock.js';
import { conflicting, invalid } from '../core/errors.js';
import { MAX_MATCHED_PATH_LENGTH, MAX_REGEX_PROGRAM_SIZE, RegexSet, compilePathPattern, type PathMatcher, type RegexPattern } from '../core/path-patterns.js';
import { DomainError } from '../core/errors.js';
import { didYouMean } from '../core/suggest.js';
import { FAULT_METHODS, type FaultAction, type FaultRule, type FaultRuleInput, type FaultScope } from './fault-schemas.js';

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

/** What the request in hand should suffer. */
export interface FaultVerdict {
  /** Total delay of every matching latency rule, in real milliseconds. */
  latencyMs: number;
  /** Ids of the rules that fired. */
  ruleIds: string[];
  /** The first matching status or drop rule, if any: it answers instead of the route. */
  answer?: { ruleId: string; action: Exclude<FaultAction, { latencyMs: unknown }> };
}

/**
 * Where a request lies, as the router matched it: `app` for the emulated interfaces (and paths
 * no route serves outside the emulator's own), `own` for the emulator's own paths (the control
 * API, health, dashboard, pages), `exempt` for the fault routes, which no rule ever strikes.
 */
export type FaultTarget = 'app' | 'own' | 'exempt';

export interface RequestFacts {
  method: string;
  /** The path as sent, without the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Default `app`. */
  target?: FaultTarget;
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
  /** Rules with scope `all`: without any, the emulator's own requests need no judging. */
  private allScoped = 0;

  constructor(private readonly clock: Clock) {}

  add(input: FaultRuleInput): FaultRule {
    const id = input.id ?? this.nextId();
    if (this.rules.some((r) => r.rule.id === id)) throw conflicting(`a fault rule with id '${id}' already exists`);
    if (this.rules.length >= MAX_RULES) throw conflicting(`there are already ${MAX_RULES} fault rules: delete some first`);
    const method = checkMethod(input.method);
    const pattern = compilePathPattern(input.path);
    if ('regex' in pattern && this.regexSize + pattern.regex.size > MAX_REGEX_PROGRAM_SIZE) {
      throw conflicting(
        `the regular expressions of the fault rules would compile to ${this.regexSize + pattern.regex.size} instructions together, more than ${MAX_REGEX_PROGRAM_SIZE} (this one: ${pattern.regex.size}): delete some rules first, or use a glob`,
      );
    }
    const value = input.header?.value;
    const header = input.header ? { name: input.header.name.toLowerCase(), ...(value !== undefined ? { value } : {}) } : undefined;
    const action = normaliseAction(input.action);
    const now = this.clock.now();
    const seed = input.seed ?? randomInt(0, 2 ** 31);
    const scope: FaultScope = input.scope ?? 'app';
    const rule: FaultRule = {
      id,
      method,
      path: input.path,
      ...(header ? { header } : {}),
      action,
      ...(input.times !== undefined ? { times: input.times, remaining: input.times } : {}),
      ...(input.untilMs !== undefined ? { untilMs: input.untilMs, expiresAt: now + input.untilMs } : {}),
      probability: input.probability ?? 1,
      seed,
      scope,
      createdAt: now,
      matched: 0,
      fired: 0,
      active: true,
    };
    const live: LiveRule = { rule, random: mulberry32(seed), ...('glob' in pattern ? { glob: pattern.glob } : { regex: { ...pattern.regex, index: -1 } }) };
    this.rules.push(live);
    if (live.regex) this.rebuildRegexes();
    if (scope === 'all') this.allScoped++;
    return { ...rule };
  }

  /**
   * Adds every rule of a state (the fixtures' `faults`, an imported or saved state's), in
   * order, replacing a rule already held under the same id; the others stay. All or nothing:
   * when one is refused, nothing changes and its error names it by its place in the list.
   */
  addAll(inputs: readonly FaultRuleInput[], where = '$.faults'): void {
    if (inputs.length === 0) return;
    const before = { rules: this.rules, regexSize: this.regexSize, allScoped: this.allScoped, counter: this.counter };
    const replaced = new Set(inputs.map((input) => input.id).filter((id) => id !== undefined));
    this.rules = this.rules.filter((live) => !replaced.has(live.rule.id));
    this.recount();
    try {
      inputs.forEach((input, i) => {
        try {
          this.add(input);
        } catch (err) {
          throw err instanceof DomainError ? new DomainError(err.kind, `${where}[${i}]${inFixture(err.message)}`) : err;
        }
      });
    } catch (err) {
      Object.assign(this, before);
      this.rebuildRegexes();
      throw err;
    }
  }

  /**
   * Every rule that can still fire, as a rule to add again (the `faults` section of an
   * export): what is left of its `times` and of its `untilMs`, the same seed. A rule added
   * from it starts its draws afresh, and its counts from zero.
   */
  export(): FaultRuleInput[] {
    const now = this.clock.now();
    const out: FaultRuleInput[] = [];
    for (const { rule } of this.rules) {
      if (!isActive(rule, now)) continue;
      out.push({
        id: rule.id,
        method: rule.method,
        path: rule.path,
        ...(rule.header ? { header: { ...rule.header } } : {}),
        action: structuredClone(rule.action),
        ...(rule.remaining !== undefined ? { times: rule.remaining } : {}),
        ...(rule.expiresAt !== undefined ? { untilMs: rule.expiresAt - now } : {}),
        probability: rule.probability,
        seed: rule.seed,
        scope: rule.scope,
      });
    }
    return out;
  }

  /**
   * What is wrong with a list of rules as a state holds them, each problem handed to
   * `problem` prefixed by its place (`$.faults[2].path: ...`): the checks of add(), and the
   * limits of all the rules together. More rules than a world may hold is one problem, found
   * without looking at each.
   */
  static check(inputs: readonly FaultRuleInput[], clock: Clock, problem: (text: () => string) => void): void {
    if (inputs.length > MAX_RULES) {
      problem(() => `$.faults: ${inputs.length} rules, more than the ${MAX_RULES} a world may hold`);
      return;
    }
    const trial = new FaultStore(clock);
    inputs.forEach((input, i) => {
      try {
        // Ids are checked for duplicates by the state format, which names both places.
        trial.add({ ...input, id: `#${i}`, seed: input.seed ?? 0 });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        problem(() => `$.faults[${i}]${inFixture(err.message)}`);
      }
    });
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
    if (gone.rule.scope === 'all') this.allScoped--;
    return true;
  }

  clear(): void {
    this.rules = [];
    this.counter = 0;
    this.allScoped = 0;
    this.rebuildRegexes();
  }

  /** Whether a request of this target could meet a rule at all (cheap; no facts needed). */
  mayStrike(target: FaultTarget): boolean {
    if (target === 'app') return this.rules.length > 0;
    return target === 'own' && this.allScoped > 0;
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
    const target = facts.target ?? 'app';
    if (!this.mayStrike(target) || facts.path.length > MAX_MATCHED_PATH_LENGTH) return verdict;
    const now = this.clock.now();
    const method = facts.method.toUpperCase();
    // Every regular expression is matched in the same pass, the first time one is needed.
    let regexMatches: Set<number> | undefined;
    for (const live of this.rules) {
      const { rule } = live;
      if (!isActive(rule, now)) continue;
      if (target === 'own' && rule.scope !== 'all') continue;
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
      if ('latencyMs' in rule.action) verdict.latencyMs += drawLatency(rule.action.latencyMs, live.random);
      else verdict.answer = { ruleId: rule.id, action: rule.action };
    }
    return verdict;
  }

  private recount(): void {
    this.allScoped = this.rules.filter((live) => live.rule.scope === 'all').length;
    this.rebuildRegexes();
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

/**
 * One delay of a latency action: the fixed number, or a whole number of ms from min to max
 * (both included) drawn from the rule's own generator, so a seed repeats the same delays.
 */
export function drawLatency(latency: number | { min: number; max: number }, random: () => number): number {
  if (typeof latency === 'number') return latency;
  return latency.min + Math.floor(random() * (latency.max - latency.min + 1));
}

/** A message of add() as a fixture or state names the field: "body field 'path': x" -> ".path: x". */
function inFixture(message: string): string {
  const field = /^body field '([^']+)':? /.exec(message);
  return field ? `.${field[1]}: ${message.slice(field[0].length)}` : `: ${message}`;
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

/** The rule's method, in capitals: `*` (also when absent) or one the routes answer. */
function checkMethod(given: string | undefined): string {
  const method = (given ?? '*').toUpperCase();
  if (method === '*' || (FAULT_METHODS as readonly string[]).includes(method)) return method;
  const shown = given!.length > 20 ? `${given!.slice(0, 20)}...` : given;
  throw invalid(`body field 'method': '${shown}' is not a method a rule can match${didYouMean(method, FAULT_METHODS)}; one of ${FAULT_METHODS.join(', ')}, or * for any`);
}

/** Exactly one kind of action, so a rule never means two things. */
function normaliseAction(action: FaultRuleInput['action']): FaultAction {
  const kinds = (['status', 'latencyMs', 'drop'] as const).filter((k) => action[k] !== undefined);
  if (kinds.length !== 1) {
    throw invalid(`body field 'action': give exactly one of status, latencyMs or drop (got ${kinds.length ? kinds.join(', ') : 'none'})`);
  }
  if (action.status !== undefined) {
    if (deeperThan(action.body, MAX_BODY_DEPTH)) {
      throw invalid(`body field 'action.body': nested deeper than ${MAX_BODY_DEPTH} levels`);
    }
    if (action.headers !== undefined) checkResponseHeaders(action.headers);
    return {
      status: action.status,
      ...(action.body !== undefined ? { body: action.body } : {}),
      ...(action.headers !== undefined ? { headers: action.headers } : {}),
    };
  }
  if (action.body !== undefined || action.headers !== undefined) {
    throw invalid("body field 'action': body and headers go with status only");
  }
  if (action.latencyMs !== undefined) {
    const latency = action.latencyMs;
    if (typeof latency === 'number') return { latencyMs: latency };
    if (latency.min > latency.max) throw invalid(`body field 'action.latencyMs': min (${latency.min}) is above max (${latency.max})`);
    return { latencyMs: { min: latency.min, max: latency.max } };
  }
  if (action.drop !== true) throw invalid("body field 'action.drop': must be true");
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
      throw invalid(`body field 'action.headers': ${JSON.stringify(name)} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    }
    try {
      validateHeaderValue(name, value);
    } catch {
      throw invalid(`body field 'action.headers': the value of '${name}' holds a character not allowed in a header (a line break, another control character, or one beyond Latin-1)`);
    }
  }
}
