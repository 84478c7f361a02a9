import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { parseArgs } from '../../src/cli/args.js';
import { runCli } from '../../src/cli/run.js';
import { globMatches } from './pattern.js';
import { ShellError } from './shell.js';

/**
 * Runs a ```console transcript of the command line in this process (the real `runCli`, with
 * no environment variables): each `$ command` line, then the lines it printed (standard
 * output and error together), where `...` in a line stands for any text and a line of
 * `...` alone for any number of lines. Commands:
 * `npx cloud-emulator ARGS`, `cloud-emulator ARGS`, `node dist/cli/cli.js ARGS`,
 * `npm run -s fixtures:check [--] DIR` and `echo $?`. One that would start a server is
 * refused: such a transcript must be marked not-run.
 *
 * Files the transcript reads are the page's ```json blocks marked `<!-- file: path -->`; they
 * are written to a temporary folder, and a path argument naming one of their folders is read
 * from there (the output shows the path as typed).
 */
export async function runTranscript(text: string, files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), 'docs-cli-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    const folders = new Set(Object.keys(files).map((p) => p.split('/')[0]));
    const problems: string[] = [];
    const lines = text.split('\n');
    let lastCode = 0;
    for (let i = 0; i < lines.length; ) {
      const line = lines[i];
      if (!line.startsWith('$ ')) {
        if (line.trim() !== '') throw new ShellError(`line ${i + 1}: output that follows no command: ${line}`);
        i++;
        continue;
      }
      const command = line.slice(2).trim();
      const expected: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith('$ '); i++) expected.push(lines[i]);
      while (expected.length && expected[expected.length - 1].trim() === '') expected.pop();

      let printed: string;
      if (command === 'echo $?') printed = `${lastCode}\n`;
      else {
        const argv = cliArguments(command);
        const shown = new Map<string, string>();
        const mapped = argv.map((arg) => {
          const folder = arg.replace(/^\.\//, '').split('/')[0];
          if (!folders.has(folder)) return arg;
          const real = join(root, arg.replace(/^\.\//, ''));
          shown.set(real, arg.replace(/\/$/, ''));
          return real;
        });
        refuseServe(mapped, command);
        let out = '';
        const code = await runCli(mapped, {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
        lastCode = code ?? 0;
        printed = out;
        for (const [real, typed] of shown) printed = printed.split(real).join(typed);
      }
      const actual = printed.replace(/\n$/, '').split('\n');
      const same = linesMatch(expected, actual);
      if (!same) problems.push(`$ ${command}\n    shown:\n      ${expected.join('\n      ')}\n    printed:\n      ${actual.join('\n      ')}`);
    }
    return problems;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function cliArguments(command: string): string[] {
  const words = command.split(/\s+/);
  if (words.some((w) => /["'$|&;<>`\\]/.test(w))) throw new ShellError(`'${command}': quotes, variables and pipes are not supported in a transcript`);
  if (words[0] === 'npx' && words[1] === 'cloud-emulator') return words.slice(2);
  if (words[0] === 'cloud-emulator') return words.slice(1);
  if (words[0] === 'node' && words[1] === 'dist/cli/cli.js') return words.slice(2);
  if (words[0] === 'npm' && words[1] === 'run' && words[2] === '-s' && words[3] === 'fixtures:check') {
    return ['check', ...words.slice(4).filter((w) => w !== '--')];
  }
  throw new ShellError(`'${command}' is not a command a transcript may run: mark the block <!-- not-run: why -->`);
}

/** A command line that parses and configures cleanly would start a server and never return. */
function refuseServe(argv: string[], command: string): void {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch {
    return; // a usage error: it prints its message and exits 2
  }
  if (parsed.kind !== 'serve') return;
  try {
    loadConfig({}, parsed.overrides);
  } catch {
    return; // a bad setting: it prints its message and exits 2
  }
  throw new ShellError(`'${command}' would start a server: mark the block <!-- not-run: why -->`);
}

/** Line by line; a line `...` alone takes any number of lines (transcripts are short). */
function linesMatch(expected: string[], actual: string[]): boolean {
  const fits = (e: number, a: number): boolean => {
    if (e === expected.length) return a === actual.length;
    if (expected[e] === '...') {
      for (let k = a; k <= actual.length; k++) if (fits(e + 1, k)) return true;
      return false;
    }
    return a < actual.length && globMatches(expected[e], actual[a]) && fits(e + 1, a + 1);
  };
  return fits(0, 0);
}

