import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { stopwatch } from '../core/clock.js';
import { compileGlob, type PathMatcher } from '../core/path-patterns.js';
import { MASK } from '../core/secrets.js';
import { PATHS } from '../http/paths.js';
import { diffJson, JsonPathPattern, JsonPatternError, show, type Difference, type Segment } from './json-diff.js';
import { isLogIn, isLogOut, ParityInputError, type RecordedExchange } from './recording.js';

/**
 * `verify`: replays a recording against an emulator and reports, per exchange, where the
 * emulator's answer differs from the recorded one. See docs/parity.md.
 */

/** Longest line of a recording verify reads, in bytes (a line holds two bodies of at most --max-body-bytes each, escaped). */
export const MAX_RECORDING_LINE_BYTES = 16 * 1024 * 1024;
/** Most bytes of an emulator's answer verify reads; the rest is not compared. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Most patterns an ignore file holds, all rules together. */
export const MAX_IGNORE_PATTERNS = 1000;
/** Most differences listed per exchange; the rest are counted. */
export const MAX_LISTED_DIFFERENCES = 50;

interface IgnoreRule {
  method?: string;
  path?: PathMatcher;
  skip: boolean;
  /** The recorded statuses it applies to (`404`, `"4xx"`); absent: all. */
  status?: (status: number) => boolean;
  /** `"values": false`: compare the shape of the answers only (keys and types). */
  typesOnly: boolean;
  patterns: JsonPathPattern[];
  /** `status` or header names (lower case) whose differences do not count. */
  words: Set<string>;
}

/** The ignore file, compiled: `ignore` for every exchange, `rules` for the exchanges they match. */
export class IgnoreRules {
  constructor(private readonly rules: IgnoreRule[]) {}

  static readonly none = new IgnoreRules([]);

  /** Reads and checks an ignore file; every mistake is a ParityInputError naming the file and the place. */
  static async load(file: string): Promise<IgnoreRules> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      throw new ParityInputError(`ignore file ${file}: ${(err as Error).message}`);
    }
    return IgnoreRules.from(parsed, file);
  }

  static from(parsed: unknown, file = 'ignore file'): IgnoreRules {
    const bad = (where: string, why: string) => new ParityInputError(`${file}: ${where}: ${why}`);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad('$', 'expected an object with "ignore" and "rules"');
    const top = parsed as Record<string, unknown>;
    unknownKeys(top, ['ignore', 'rules'], '$', bad);
    let count = 0;
    const compile = (list: unknown, where: string) => {
      if (list === undefined) return { patterns: [], words: new Set<string>() };
      if (!Array.isArray(list) || list.some((p) => typeof p !== 'string')) throw bad(where, 'expected an array of strings');
      count += list.length;
      if (count > MAX_IGNORE_PATTERNS) throw bad(where, `more than ${MAX_IGNORE_PATTERNS} patterns in all`);
      const patterns: JsonPathPattern[] = [];
      const words = new Set<string>();
      (list as string[]).forEach((text, i) => {
        if (!text.startsWith('$')) {
          words.add(text.toLowerCase());
          return;
        }
        try {
          patterns.push(new JsonPathPattern(text));
        } catch (err) {
          if (err instanceof JsonPatternError) throw bad(`${where}[${i}]`, err.message);
          throw err;
        }
      });
      return { patterns, words };
    };
    const rules: IgnoreRule[] = [{ skip: false, typesOnly: false, ...compile(top.ignore, '$.ignore') }];
    if (top.rules !== undefined) {
      if (!Array.isArray(top.rules)) throw bad('$.rules', 'expected an array of rules');
      top.rules.forEach((rule: unknown, i: number) => {
        const where = `$.rules[${i}]`;
        if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) throw bad(where, 'expected an object with "path", and "ignore" or "skip"');
        const r = rule as Record<string, unknown>;
        unknownKeys(r, ['path', 'method', 'status', 'ignore', 'skip', 'values', 'why'], where, bad);
        const status = statusMatcher(r.status);
        if (status === null) throw bad(`${where}.status`, 'expected a status (404) or a class of them ("4xx")');
        if (r.path !== undefined && typeof r.path !== 'string') throw bad(`${where}.path`, 'expected a path glob');
        if (r.method !== undefined && typeof r.method !== 'string') throw bad(`${where}.method`, 'expected a method');
        if (r.skip !== undefined && typeof r.skip !== 'boolean') throw bad(`${where}.skip`, 'expected true or false');
        if (r.values !== undefined && typeof r.values !== 'boolean') throw bad(`${where}.values`, 'expected true or false');
        if (r.why !== undefined && typeof r.why !== 'string') throw bad(`${where}.why`, 'expected a text saying why');
        let path: PathMatcher | undefined;
        if (typeof r.path === 'string') {
          try {
            path = compileGlob(r.path);
          } catch (err) {
            throw bad(`${where}.path`, (err as Error).message.replace("body field 'path': ", ''));
          }
        }
        const method = (r.method as string | undefined)?.toUpperCase();
        rules.push({ path, method, status, skip: r.skip === true, typesOnly: r.values === false, ...compile(r.ignore, `${where}.ignore`) });
      });
    }
    return new IgnoreRules(rules);
  }

  /** What applies to one exchange. */
  forExchange(
    method: string,
    path: string,
    status: number,
  ): { skip: boolean; typesOnly: boolean; ignoredPath(segments: readonly Segment[]): boolean; ignoredWord(word: string): boolean } {
    const applying = this.rules.filter(
      (r) => (r.method === undefined || r.method === '*' || r.method === method) && (r.path === undefined || r.path.test(path)) && (r.status?.(status) ?? true),
    );
    return {
      skip: applying.some((r) => r.skip),
      typesOnly: applying.some((r) => r.typesOnly),
      ignoredPath: (segments) => applying.some((r) => r.patterns.some((p) => p.matches(segments))),
      ignoredWord: (word) => applying.some((r) => r.words.has(word)),
    };
  }
}

/** A rule's `status`: 404 or "404" that status, "4xx" its class; undefined when absent, null when it is neither. */
function statusMatcher(spec: unknown): ((status: number) => boolean) | undefined | null {
  if (spec === undefined) return undefined;
  const text = String(spec);
  if (/^[1-5]xx$/.test(text)) return (status) => Math.floor(status / 100) === Number(text[0]);
  if (/^[1-5]\d\d$/.test(text) && (typeof spec === 'number' || typeof spec === 'string')) return (status) => status === Number(text);
  return null;
}

function unknownKeys(object: Record<string, unknown>, known: string[], where: string, bad: (where: string, why: string) => Error): void {
  for (const key of Object.keys(object)) if (!known.includes(key)) throw bad(where, `unknown key "${key}" (known: ${known.join(', ')})`);
}

/** One exchange's outcome. */
export interface ExchangeReport {
  seq: number;
  method: string;
  path: string;
  status: number;
  actualStatus?: number;
  skipped: boolean;
  differences: Difference[];
  /** Differences beyond MAX_LISTED_DIFFERENCES, counted only. */
  unlisted: number;
  ignored: number;
  /** Why the body was not compared, when it was not. */
  note?: string;
}

export interface VerifyReport {
  recording: string;
  url: string;
  exchanges: ExchangeReport[];
  durationMs: number;
}

export interface VerifyOptions {
  /** The emulator's base URL. */
  url: string;
  ignore?: IgnoreRules;
  /** A session token for masked tokens no replayed log-in has replaced yet. */
  token?: string;
  /** The emulator's ADMIN_TOKEN, to read whom a recorded log-in can be replayed as. */
  adminToken?: string;
  /** Where verify reads the recording's passwords from: the emulator's users, by default read from its control API. */
  users?: ReadonlyArray<{ userName: string; password: string; tenant?: string }>;
}

/** Reads a recording a line at a time, checking each line's shape. */
async function* readRecording(file: string): AsyncGenerator<RecordedExchange> {
  const input = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      if (line.length > MAX_RECORDING_LINE_BYTES) throw new ParityInputError(`${file}:${n}: a line longer than ${MAX_RECORDING_LINE_BYTES} bytes`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new ParityInputError(`${file}:${n}: not valid JSON: ${(err as Error).message}`);
      }
      const problem = shapeProblem(parsed);
      if (problem) throw new ParityInputError(`${file}:${n}: not a recorded exchange: ${problem}`);
      yield parsed as RecordedExchange;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ParityInputError(`no recording at ${file}`);
    throw err;
  } finally {
    lines.close();
    input.destroy();
  }
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected an object';
  const e = value as Record<string, unknown>;
  for (const key of ['method', 'path']) if (typeof e[key] !== 'string') return `"${key}" must be a string`;
  if (!(e.path as string).startsWith('/')) return '"path" must start with /';
  if (typeof e.status !== 'number') return '"status" must be a number';
  for (const key of ['request', 'response']) {
    const m = e[key] as Record<string, unknown> | undefined;
    if (typeof m !== 'object' || m === null) return `"${key}" must be an object`;
    if (typeof m.headers !== 'object' || m.headers === null) return `"${key}.headers" must be an object`;
    if (m.body !== undefined && typeof m.body !== 'string') return `"${key}.body" must be a string`;
  }
  return undefined;
}

function parseJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined || text === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const mediaType = (value: string | string[] | undefined | null): string | undefined => {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.split(';')[0].trim().toLowerCase() || undefined;
};

/** Reads at most MAX_ANSWER_BYTES of an answer. */
async function readAnswer(response: Response): Promise<{ text: string; cut: boolean }> {
  if (!response.body) return { text: '', cut: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return { text: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8'), cut: true };
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut: false };
}

/** What verify carries from one exchange to the next: the session token and the ids answers made. */
class Carried {
  token: string | undefined;
  /** A recorded id (as text) to the id the emulator made for the same request. */
  readonly ids = new Map<string, string>();

  constructor(token: string | undefined) {
    this.token = token;
  }

  path(path: string): string {
    if (this.ids.size === 0 && !path.includes(MASK)) return path;
    return path
      .split('/')
      .map((segment) => (segment === MASK && this.token !== undefined ? encodeURIComponent(this.token) : (this.ids.get(segment) ?? segment)))
      .join('/');
  }

  /** Learns the ids an answer made: its top-level `id`, and the last segment of its Location. */
  learn(recorded: unknown, actual: unknown, recordedLocation?: string, actualLocation?: string): void {
    const id = (v: unknown) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>).id : undefined);
    const a = id(recorded);
    const b = id(actual);
    if ((typeof a === 'string' || typeof a === 'number') && (typeof b === 'string' || typeof b === 'number') && String(a) !== String(b)) this.ids.set(String(a), String(b));
    const last = (location?: string) => location?.split('?')[0].replace(/\/+$/, '').split('/').pop();
    const la = last(recordedLocation);
    const lb = last(actualLocation);
    if (la && lb && la !== lb) this.ids.set(la, lb);
  }

  same(recorded: unknown, actual: unknown): boolean {
    return (typeof recorded === 'string' || typeof recorded === 'number') && this.ids.get(String(recorded)) === String(actual);
  }
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** The users a recorded log-in can be replayed as: the emulator's own, from its control API. */
async function emulatorUsers(url: string, adminToken?: string): Promise<Array<{ userName: string; password: string; tenant?: string }>> {
  try {
    const response = await fetch(`${url}${PATHS.control}/users`, { headers: adminToken ? { authorization: `Bearer ${adminToken}` } : {} });
    if (!response.ok) return [];
    const body = (await response.json()) as { users?: Array<{ userName: string; password: string; tenant?: string }> };
    return body.users ?? [];
  } catch {
    return [];
  }
}

/**
 * The body of a recorded log-in, its masked secrets replaced: a masked password by the
 * emulator's password of the same user; a masked API token by that user's name and password
 * (the emulator's users list no API tokens), the tenant's first user when no name was recorded.
 */
function logInBody(recorded: string | undefined, users: VerifyOptions['users']): string | undefined {
  const parsed = parseJson(recorded);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return recorded;
  const body = { ...(parsed.value as Record<string, unknown>) };
  if (body.password !== MASK && body.apiToken !== MASK) return recorded;
  const tenant = typeof body.tenant === 'string' ? body.tenant : undefined;
  const user =
    users?.find((u) => u.userName === body.userName) ??
    (body.userName === undefined ? users?.find((u) => tenant === undefined || u.tenant === tenant) : undefined);
  if (!user) return recorded;
  delete body.apiToken;
  return JSON.stringify({ ...body, userName: user.userName, password: user.password });
}

/** The request headers to replay: the recorded ones, masked credentials replaced by the carried session token. */
function replayHeaders(recorded: Record<string, string | string[]>, carried: Carried): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(recorded)) {
    const text = first(value);
    if (text === undefined) continue;
    const masked = text === MASK || text.endsWith(` ${MASK}`);
    if (!masked) {
      out[name] = text;
      continue;
    }
    if (carried.token === undefined) continue;
    // A masked Authorization cannot be sent again: the session token goes as X-Auth-Token.
    out[name === 'authorization' ? 'x-auth-token' : name] = carried.token;
  }
  return out;
}

/** Replays every exchange of a recording, in order, against the emulator at `options.url`. */
export async function verifyRecording(file: string, options: VerifyOptions): Promise<VerifyReport> {
  const started = stopwatch();
  const url = options.url.replace(/\/+$/, '');
  const ignore = options.ignore ?? IgnoreRules.none;
  const carried = new Carried(options.token);
  let users = options.users;
  const exchanges: ExchangeReport[] = [];
  for await (const exchange of readRecording(file)) {
    const { method } = exchange;
    const rules = ignore.forExchange(method, exchange.path, exchange.status);
    const report: ExchangeReport = {
      ...{ seq: exchange.seq, method, path: exchange.path, status: exchange.status },
      ...{ skipped: rules.skip, differences: [], unlisted: 0, ignored: 0 },
    };
    exchanges.push(report);
    if (rules.skip) continue;
    let body = exchange.request.body;
    if (isLogIn(method, exchange.path)) {
      users ??= await emulatorUsers(url, options.adminToken);
      body = logInBody(body, users);
    }
    const target = `${url}${carried.path(exchange.path)}${exchange.query ? `?${exchange.query}` : ''}`;
    let response: Response;
    try {
      // A redirect is an answer to compare, not to follow.
      const init: RequestInit = { method, headers: replayHeaders(exchange.request.headers, carried), redirect: 'manual' };
      if (method !== 'GET' && method !== 'HEAD') init.body = body;
      response = await fetch(target, init);
    } catch (err) {
      throw new ParityInputError(`cannot reach the emulator at ${url}: ${(err as Error).cause ?? (err as Error).message}`);
    }
    const answer = await readAnswer(response);
    report.actualStatus = response.status;
    const differences: Difference[] = [];
    const count = (d: Difference, ignored: boolean) => {
      if (ignored) report.ignored++;
      else differences.push(d);
    };
    if (response.status !== exchange.status) count({ kind: 'status', path: 'status', recorded: String(exchange.status), actual: String(response.status) }, rules.ignoredWord('status'));
    const recordedType = mediaType(exchange.response.headers['content-type']);
    const actualType = mediaType(response.headers.get('content-type'));
    if (recordedType !== actualType) {
      count({ kind: 'header', path: 'content-type', recorded: recordedType && show(recordedType), actual: actualType && show(actualType) }, rules.ignoredWord('content-type'));
    }
    const recordedJson = parseJson(exchange.response.body);
    const actualJson = parseJson(answer.text);
    if (isLogIn(method, exchange.path) && actualJson.ok) {
      const token = (actualJson.value as { token?: unknown } | null)?.token;
      if (typeof token === 'string') carried.token = token;
    }
    if (isLogOut(method, exchange.path) && response.ok) carried.token = options.token;
    // A created object's id: later paths and answers name the emulator's id where the recording has the service's.
    const creates = (method === 'POST' || method === 'PUT') && !isLogIn(method, exchange.path) && response.ok;
    if (creates && recordedJson.ok && actualJson.ok) {
      carried.learn(recordedJson.value, actualJson.value, first(exchange.response.headers.location), response.headers.get('location') ?? undefined);
    }
    if (exchange.response.bodyCut) report.note = 'the recorded body was cut (--max-body-bytes): not compared';
    else if (answer.cut) report.note = `the emulator's answer is longer than ${MAX_ANSWER_BYTES} bytes: not compared`;
    else if (method === 'HEAD') report.note = undefined;
    else if (recordedJson.ok && actualJson.ok) {
      const same = (a: unknown, b: unknown) => carried.same(a, b);
      const result = diffJson(recordedJson.value, actualJson.value, { ignored: rules.ignoredPath, same, typesOnly: rules.typesOnly });
      report.ignored += result.ignored;
      differences.push(...result.differences);
    } else if (recordedJson.ok !== actualJson.ok || (!rules.typesOnly && (exchange.response.body ?? '') !== answer.text)) {
      const recordedShown = recordedJson.ok ? `JSON ${show(recordedJson.value)}` : `text ${show(exchange.response.body ?? '')}`;
      const actualShown = actualJson.ok ? `JSON ${show(actualJson.value)}` : `text ${show(answer.text)}`;
      const kind = recordedJson.ok !== actualJson.ok ? 'type changed' : 'value changed';
      count({ kind, path: '$', recorded: recordedShown, actual: actualShown }, rules.ignoredPath([]));
    }
    report.differences = differences.slice(0, MAX_LISTED_DIFFERENCES);
    report.unlisted = differences.length - report.differences.length;
  }
  return { recording: file, url, exchanges, durationMs: Math.round(stopwatch() - started) };
}

const differs = (e: ExchangeReport) => e.differences.length + e.unlisted > 0;

function describe(d: Difference): string {
  switch (d.kind) {
    case 'missing':
      return `${d.path}: missing (recorded ${d.recorded})`;
    case 'extra':
      return `${d.path}: extra (answered ${d.actual})`;
    case 'status':
      return `status: recorded ${d.recorded}, answered ${d.actual}`;
    case 'header':
      return `${d.path}: recorded ${d.recorded ?? 'none'}, answered ${d.actual ?? 'none'}`;
    default:
      return `${d.path}: ${d.kind}: recorded ${d.recorded}, answered ${d.actual}`;
  }
}

function totals(report: VerifyReport) {
  const compared = report.exchanges.filter((e) => !e.skipped);
  return {
    exchanges: report.exchanges.length,
    differing: compared.filter(differs).length,
    same: compared.filter((e) => !differs(e)).length,
    skipped: report.exchanges.length - compared.length,
    differences: compared.reduce((n, e) => n + e.differences.length + e.unlisted, 0),
    ignored: compared.reduce((n, e) => n + e.ignored, 0),
  };
}

/** Whether the emulator answered as recorded, but for ignored paths. */
export function verified(report: VerifyReport): boolean {
  return report.exchanges.every((e) => e.skipped || !differs(e));
}

/** The readable summary: one line of totals, then each exchange that differs and its differences. */
export function summaryText(report: VerifyReport): string {
  const t = totals(report);
  const lines = [
    `verify ${report.recording} against ${report.url}: ${t.exchanges} exchanges, ${t.same} as recorded, ${t.differing} differ, ${t.skipped} skipped; ${t.differences} differences, ${t.ignored} ignored (${report.durationMs} ms)`,
  ];
  for (const e of report.exchanges) {
    if (!differs(e)) continue;
    lines.push(`#${e.seq} ${e.method} ${e.path} (recorded ${e.status}, answered ${e.actualStatus})`);
    for (const d of e.differences) lines.push(`  ${describe(d)}`);
    if (e.unlisted) lines.push(`  ... and ${e.unlisted} more`);
  }
  return `${lines.join('\n')}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');

/** The report as Markdown: the totals, and a table of the differences of each exchange that differs. */
export function markdownReport(report: VerifyReport): string {
  const t = totals(report);
  const out = [
    `# Parity: ${cell(report.recording)}`,
    '',
    `Replayed against ${cell(report.url)}: ${t.exchanges} exchanges, ${t.same} as recorded, ${t.differing} differ, ${t.skipped} skipped; ${t.differences} differences, ${t.ignored} ignored.`,
    '',
  ];
  for (const e of report.exchanges) {
    if (!differs(e)) continue;
    out.push(`## #${e.seq} ${e.method} \`${e.path}\``, '', '| Path | Difference | Recorded | Answered |', '|---|---|---|---|');
    for (const d of e.differences) out.push(`| \`${cell(d.path)}\` | ${d.kind} | ${d.recorded === undefined ? '' : `\`${cell(d.recorded)}\``} | ${d.actual === undefined ? '' : `\`${cell(d.actual)}\``} |`);
    if (e.unlisted) out.push(`| | ${e.unlisted} more | | |`);
    out.push('');
  }
  if (t.differing === 0) out.push('No differences but ignored ones.', '');
  return out.join('\n');
}

/** The characters XML 1.0 cannot hold: controls but tab, line feed and carriage return, U+FFFE and U+FFFF. */
// eslint-disable-next-line no-control-regex -- these control characters are what it finds
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

const xml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    // Characters XML 1.0 cannot hold.
    .replace(NOT_XML, '\ufffd');

/** The report as JUnit XML: one test case per exchange, a failure listing its differences. */
export function junitReport(report: VerifyReport): string {
  const t = totals(report);
  const cases = report.exchanges.map((e) => {
    const name = xml(`#${e.seq} ${e.method} ${e.path}`);
    const open = `  <testcase classname="parity" name="${name}">`;
    if (e.skipped) return `${open}<skipped message="skipped by the ignore file"/></testcase>`;
    if (!differs(e)) return `  <testcase classname="parity" name="${name}"/>`;
    const text = [...e.differences.map(describe), ...(e.unlisted ? [`... and ${e.unlisted} more`] : [])].join('\n');
    return `${open}\n    <failure message="${xml(`${e.differences.length + e.unlisted} differences`)}">${xml(text)}</failure>\n  </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="${xml(`parity ${report.recording}`)}" tests="${t.exchanges}" failures="${t.differing}" skipped="${t.skipped}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    ...cases,
    '</testsuite>',
    '',
  ].join('\n');
}
