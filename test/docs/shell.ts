/**
 * The part of the shell the documentation's examples may use, read the way bash reads it:
 *
 * - `NAME=value` (optionally after `export`) sets a variable for the rest of the document;
 * - `$NAME`, `${NAME}` and `$((arithmetic))` expand, bare and inside double quotes;
 *   `$(date +%s)` is the emulator's clock in seconds (on a real emulator it is the time of
 *   day, which the emulator's clock follows unless it was moved);
 * - '...' and "..." quote, `\` escapes and continues a line;
 * - `# ...` is a comment; `> file` keeps a command's output for a later `@file`;
 * - commands: `curl` (see curl.ts) and assignments; anything else (a pipe, a loop, another
 *   program) is an error, so a block that needs one must be marked not-run.
 */

export class ShellError extends Error {}

export interface Word {
  text: string;
  /** Whether any part was quoted: a quoted `>` or `#` is text, not syntax. */
  quoted: boolean;
}

export interface Command {
  words: Word[];
  /** The comment at the end of the line, without `#`. */
  comment?: string;
  /** Line within the block, from 0. */
  line: number;
}

export type Env = Map<string, string>;

/** `$(( ))`: integers, + - * / %, parentheses and variables. */
export function arithmetic(expression: string, env: Env): number {
  const tokens = expression.match(/\d+|[A-Za-z_][A-Za-z0-9_]*|\$[A-Za-z_][A-Za-z0-9_]*|[-+*/%()]|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = () => tokens[i++];
  const primary = (): number => {
    const t = take();
    if (t === undefined) throw new ShellError(`arithmetic '${expression}' ends too early`);
    if (t === '(') {
      const v = sum();
      if (take() !== ')') throw new ShellError(`arithmetic '${expression}': missing ')'`);
      return v;
    }
    if (t === '-') return -primary();
    if (t === '+') return primary();
    if (/^\d+$/.test(t)) return Number(t);
    const name = t.replace(/^\$/, '');
    if (/^[A-Za-z_]/.test(name)) {
      const value = env.get(name);
      if (value === undefined) throw new ShellError(`arithmetic '${expression}': variable ${name} is not set`);
      return arithmetic(value, env);
    }
    throw new ShellError(`arithmetic '${expression}': unexpected '${t}'`);
  };
  const product = (): number => {
    let v = primary();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = take();
      const r = primary();
      v = op === '*' ? v * r : op === '/' ? Math.trunc(v / r) : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = take() === '+' ? v + product() : v - product();
    return v;
  };
  const value = sum();
  if (i !== tokens.length) throw new ShellError(`arithmetic '${expression}': unexpected '${tokens[i]}'`);
  return value;
}

/** Joins `\`-continued lines; each entry keeps the line it started on. */
function logicalLines(text: string): Array<{ text: string; line: number }> {
  const out: Array<{ text: string; line: number }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i];
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i];
    out.push({ text: line, line: start });
  }
  return out;
}

/**
 * The commands of a block, with their words expanded in `env` at the time each runs: the
 * caller expands lazily through `expand`, because an assignment changes what follows.
 */
export function parseLines(text: string): Array<{ raw: string; line: number; comment?: string; isComment: boolean }> {
  return logicalLines(text).map(({ text: raw, line }) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#')) return { raw: '', line, comment: trimmed.slice(1), isComment: true };
    return { raw, line, isComment: false };
  });
}

/** Splits one logical line into words, expanding variables; returns the trailing comment too. */
export function words(line: string, env: Env, clockSeconds: () => number): { words: Word[]; comment?: string } {
  const out: Word[] = [];
  let i = 0;
  const n = line.length;

  const expansion = (): string => {
    // at a '$'
    if (line.startsWith('$((', i)) {
      let depth = 0;
      let j = i + 1;
      for (; j < n; j++) {
        if (line[j] === '(') depth++;
        else if (line[j] === ')' && --depth === 0) break;
      }
      const inner = line.slice(i + 3, j - 1);
      i = j + 1;
      return String(arithmetic(substituteCommands(inner, clockSeconds), env));
    }
    if (line.startsWith('$(', i)) {
      const end = line.indexOf(')', i);
      const command = line.slice(i + 2, end).trim();
      i = end + 1;
      if (command === 'date +%s') return String(clockSeconds());
      throw new ShellError(`command substitution $(${command}) is not supported: only $(date +%s)`);
    }
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(line.slice(i));
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(line.slice(i));
    const m = braced ?? bare;
    if (!m) {
      i++;
      return '$';
    }
    i += m[0].length;
    const value = env.get(m[1]);
    if (value === undefined) throw new ShellError(`variable ${m[1]} is not set (define it in an earlier block of the same page)`);
    return value;
  };

  while (i < n) {
    while (i < n && /\s/.test(line[i])) i++;
    if (i >= n) break;
    if (line[i] === '#') return { words: out, comment: line.slice(i + 1) };
    let text = '';
    let quoted = false;
    while (i < n && !/\s/.test(line[i])) {
      const c = line[i];
      if (c === "'") {
        const end = line.indexOf("'", i + 1);
        if (end === -1) throw new ShellError(`unterminated ' in: ${line}`);
        text += line.slice(i + 1, end);
        i = end + 1;
        quoted = true;
      } else if (c === '"') {
        i++;
        quoted = true;
        while (i < n && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < n && '"\\$`'.includes(line[i + 1])) {
            text += line[i + 1];
            i += 2;
          } else if (line[i] === '$') text += expansion();
          else if (line[i] === '`') throw new ShellError('backquote command substitution is not supported');
          else text += line[i++];
        }
        if (i >= n) throw new ShellError(`unterminated " in: ${line}`);
        i++;
      } else if (c === '\\') {
        text += line[i + 1] ?? '';
        i += 2;
        quoted = true;
      } else if (c === '$') text += expansion();
      else if ('|&;<`'.includes(c)) throw new ShellError(`'${c}' is not supported in a run example: mark the block <!-- not-run: why -->`);
      else if (c === '>' && text === '' && !quoted) {
        // `>file` or `> file`: a word of its own
        text = '>';
        i++;
        break;
      } else text += line[i++];
    }
    out.push({ text, quoted });
  }
  return { words: out };
}

function substituteCommands(expression: string, clockSeconds: () => number): string {
  return expression.replace(/\$\(\s*date \+%s\s*\)/g, () => String(clockSeconds()));
}
