import { STATUS_CODES } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ManualClock } from '../../src/core/clock.js';
import { ShellError, parseLines, words, type Env, type Word } from './shell.js';
import { PatternError, balanced, globMatches, mismatch, parsePattern, type Pattern } from './pattern.js';

/**
 * Runs the examples of a document the way a reader does, one block after another in one
 * shell against one emulator: `curl` commands go to the app through `inject`, and each
 * answer is compared with the output shown under the command.
 *
 * The output shown is a comment after the command, in one of two forms:
 *
 *     curl -s ...                        curl -si ...
 *     # 200 {"state":"CHECKED",...}      # HTTP/1.1 429 Too Many Requests
 *                                        # retry-after: ...
 *                                        #
 *                                        # {"statusCode":429,...}
 *
 * a status and the body (JSON with `...`, see pattern.ts, continued on the next comment
 * lines until its brackets close; or text, one line), or, as `curl -i` prints it, the
 * status line, the headers that matter and the body. A command without a shown output must
 * succeed (a status below 400): it is a step towards the next one.
 */

export interface Session {
  app: FastifyInstance;
  clock: ManualClock;
  env: Env;
  /** What `> file` kept, for `@file`. */
  files: Map<string, string>;
}

export interface Expectation {
  status: number;
  reason?: string;
  headers: Array<[string, string]>;
  body?: { json: Pattern } | { text: string };
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  include: boolean;
  output?: string;
}

const ORIGIN = /^(?:http:\/\/)?localhost:8080(?=\/|$)/;

/** The curl options the examples may use. */
export function curlRequest(args: Word[], files: Map<string, string>): Request {
  let method: string | undefined;
  let url: string | undefined;
  let include = false;
  let output: string | undefined;
  const headers: Record<string, string> = {};
  const removed = new Set<string>();
  const data: string[] = [];
  const file = (name: string) => {
    const text = files.get(name);
    if (text === undefined) throw new ShellError(`@${name}: no earlier example wrote that file`);
    return text;
  };
  const takesValue: Record<string, string> = { X: 'request', H: 'header', d: 'data', o: 'output' };
  for (let i = 0; i < args.length; i++) {
    const { text, quoted } = args[i];
    if (text === '>' && !quoted) {
      output = args[++i]?.text;
      continue;
    }
    let option: string | undefined;
    let value: string | undefined;
    if (text.startsWith('--') && !quoted) option = text.slice(2);
    else if (text.startsWith('-') && text.length > 1 && !quoted) {
      // A cluster such as -si or -sX POST: flags, then at most one option that takes a value.
      for (let k = 1; k < text.length; k++) {
        const c = text[k];
        if (c in takesValue) {
          option = takesValue[c];
          if (k + 1 < text.length) value = text.slice(k + 1);
          break;
        }
        if (c === 's' || c === 'S') continue;
        if (c === 'i') include = true;
        else throw new ShellError(`curl option -${c} is not supported in a run example`);
      }
      if (option === undefined) continue;
    } else {
      if (url !== undefined) throw new ShellError(`curl: two URLs (${url} and ${text})`);
      url = text;
      continue;
    }
    const needsValue = ['request', 'header', 'data', 'data-raw', 'data-binary', 'output'];
    if (needsValue.includes(option) && value === undefined) {
      if (i + 1 >= args.length) throw new ShellError(`curl --${option} needs a value`);
      value = args[++i].text;
    }
    switch (option) {
      case 'request':
        method = value;
        break;
      case 'header': {
        const colon = value!.indexOf(':');
        if (colon < 1) throw new ShellError(`curl -H '${value}': expected 'Name: value'`);
        const name = value!.slice(0, colon).trim().toLowerCase();
        // As in curl, `-H 'Name:'` removes a header curl would otherwise send.
        if (value!.slice(colon + 1).trim() === '') removed.add(name);
        else headers[name] = value!.slice(colon + 1).trim();
        break;
      }
      case 'data':
        // curl -d strips line breaks from a file; --data-binary keeps them.
        data.push(value!.startsWith('@') ? file(value!.slice(1)).replace(/[\r\n]/g, '') : value!);
        break;
      case 'data-binary':
        data.push(value!.startsWith('@') ? file(value!.slice(1)) : value!);
        break;
      case 'data-raw':
        data.push(value!);
        break;
      case 'output':
        output = value;
        break;
      case 'silent':
      case 'show-error':
        break;
      case 'include':
        include = true;
        break;
      default:
        throw new ShellError(`curl option --${option} is not supported in a run example`);
    }
  }
  if (url === undefined) throw new ShellError('curl without a URL');
  if (!ORIGIN.test(url)) throw new ShellError(`curl ${url}: the examples talk to http://localhost:8080`);
  const path = url.replace(ORIGIN, '') || '/';
  const body = data.length ? data.join('&') : undefined;
  // What curl itself sends: a form content type with -d unless told otherwise.
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  headers['user-agent'] ??= 'curl/8.5.0';
  headers.accept ??= '*/*';
  for (const name of removed) delete headers[name];
  return { method: method ?? (body !== undefined ? 'POST' : 'GET'), path, headers, body, include, output };
}

type Line = ReturnType<typeof parseLines>[number];

/** Reads the output shown from the comment lines at `at`; undefined when there is none. */
export function takeExpectation(lines: Line[], at: number, inline?: string): { expectation: Expectation; next: number } | undefined {
  const comments: string[] = [];
  let next = at;
  if (inline !== undefined) comments.push(inline.trim());
  else {
    while (next < lines.length && lines[next].isComment) comments.push(lines[next++].comment!.trim());
    if (!comments.length) return undefined;
  }
  let used = 0;
  const first = comments[0];
  const short = /^(\d{3})(?:\s+(.*))?$/.exec(first);
  const full = /^HTTP\/[\d.]+ (\d{3})(?: (.*))?$/.exec(first);
  if (!short && !full) return undefined;
  used = 1;
  const expectation: Expectation = { status: Number((short ?? full)![1]), headers: [] };
  let bodyText: string | undefined;
  if (short) bodyText = short[2];
  else {
    expectation.reason = full![2];
    while (used < comments.length) {
      const header = /^([A-Za-z0-9-]+):\s?(.*)$/.exec(comments[used]);
      if (!header) break;
      expectation.headers.push([header[1].toLowerCase(), header[2]]);
      used++;
    }
    if (used < comments.length && comments[used] === '' && used + 1 < comments.length) {
      bodyText = comments[used + 1];
      used += 2;
    } else if (used < comments.length && /^[[{]/.test(comments[used])) bodyText = comments[used++];
  }
  if (bodyText !== undefined && bodyText !== '') {
    if (/^[[{]/.test(bodyText)) {
      while (!balanced(bodyText) && used < comments.length) bodyText += ` ${comments[used++]}`;
      expectation.body = { json: parsePattern(bodyText) };
    } else expectation.body = { text: bodyText };
  }
  return { expectation, next: inline !== undefined ? at : at + used };
}

export interface Outcome {
  command: string;
  line: number;
  status: number;
  body: string;
  problem?: string;
}

/** Compares an answer with what the example shows. */
export function compare(expectation: Expectation | undefined, status: number, headers: Record<string, unknown>, body: string): string | undefined {
  if (!expectation) return status < 400 ? undefined : `answered ${status} but the example shows no output (show it: # ${status} ...)`;
  if (status !== expectation.status) return `answered ${status}, the example shows ${expectation.status}`;
  if (expectation.reason !== undefined && expectation.reason !== STATUS_CODES[status]) return `the status line says '${expectation.reason}', HTTP says '${STATUS_CODES[status]}'`;
  for (const [name, value] of expectation.headers) {
    const actual = headers[name];
    if (actual === undefined) return `no ${name} header`;
    if (!globMatches(value, String(actual))) return `${name}: ${String(actual)}, the example shows ${value}`;
  }
  if (!expectation.body) return undefined;
  if ('text' in expectation.body) return globMatches(expectation.body.text, body) ? undefined : `the body differs from the text shown: ${body.slice(0, 300)}`;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return `the body is not JSON: ${body.slice(0, 200)}`;
  }
  return mismatch(expectation.body.json, value);
}

const ASSIGNMENT = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=/;

/** Runs one block; returns every command's outcome (a problem on each that did not match). */
export async function runBlock(text: string, session: Session): Promise<Outcome[]> {
  const lines = parseLines(text);
  const outcomes: Outcome[] = [];
  const seconds = () => Math.floor(session.clock.now() / 1000);
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    if (line.isComment) {
      const stray = /^\s*(\d{3}\b|HTTP\/)/.test(line.comment!);
      if (stray) throw new ShellError(`line ${line.line + 1}: an output (#${line.comment}) that follows no command`);
      i++;
      continue;
    }
    if (line.raw.trim() === '') {
      i++;
      continue;
    }
    let parsed;
    try {
      parsed = words(line.raw, session.env, seconds);
    } catch (err) {
      throw new ShellError(`line ${line.line + 1}: ${(err as Error).message}`);
    }
    const [head, ...rest] = parsed.words[0]?.text === 'export' ? parsed.words.slice(1) : parsed.words;
    // NAME=value: the name itself unquoted, as the shell wants it.
    if (ASSIGNMENT.test(line.raw) && head) {
      if (rest.length) throw new ShellError(`line ${line.line + 1}: NAME=value COMMAND (a variable for one command) is not supported`);
      const [, name, value] = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(head.text)!;
      session.env.set(name, value);
      i++;
      continue;
    }
    if (head?.text !== 'curl') throw new ShellError(`line ${line.line + 1}: '${head?.text}' is not a command a run example may use: mark the block <!-- not-run: why -->`);
    let request: Request;
    let taken: ReturnType<typeof takeExpectation>;
    try {
      request = curlRequest(rest, session.files);
      const inline = parsed.comment !== undefined && /^\s*(\d{3}\b|HTTP\/)/.test(parsed.comment) ? parsed.comment : undefined;
      taken = takeExpectation(lines, i + 1, inline);
    } catch (err) {
      if (err instanceof PatternError || err instanceof ShellError) throw new ShellError(`line ${line.line + 1}: ${err.message}`);
      throw err;
    }
    const res = await session.app.inject({ method: request.method as 'GET', url: request.path, headers: request.headers, payload: request.body });
    if (request.output !== undefined && request.output !== '/dev/null') session.files.set(request.output, res.body);
    outcomes.push({
      command: line.raw.trim(),
      line: line.line,
      status: res.statusCode,
      body: res.body,
      problem: compare(taken?.expectation, res.statusCode, res.headers, res.body),
    });
    i = taken ? taken.next : i + 1;
  }
  return outcomes;
}
