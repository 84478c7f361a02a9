import { loadConfig } from '../config.js';
import { inspectFixtures, SECTION_NAMES, type State } from '../state.js';
import { MAX_CHECKED_PROBLEMS, ignoredText } from '../core/fixtures.js';
import { wallClock } from '../core/clock.js';
import { version } from '../config.js';
import { clockNote } from '../world/seed-watch.js';
import { helpText, parseArgs, parseMcpArgs, UsageError } from './args.js';
import { serve, userFacingStartupError } from './serve.js';
import { parseRecordArgs, parseSnapshotArgs, parseVerifyArgs } from './parity-args.js';
import { runRecord, runSnapshot, runVerify } from './parity.js';
import { ParityInputError } from './recording.js';

export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: CliOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * The command line, apart from the process: returns the exit code, or undefined once the
 * server is running (it then lives until a signal). Usage and configuration errors exit 2
 * with one message; an invalid fixture folder under `check` exits 1.
 */
export async function runCli(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  output: CliOutput = processOutput,
): Promise<number | undefined> {
  const fail = (message: string, code: number) => {
    output.err(`cloud-emulator: ${message}\n`);
    return code;
  };
  try {
    // `record`, `verify` and `snapshot` have options of their own (docs/parity.md).
    if (argv[0] === 'snapshot' && !argv.includes('--help') && !argv.includes('-h')) return await runSnapshot(parseSnapshotArgs(argv.slice(1), env), output);
    if ((argv[0] === 'record' || argv[0] === 'verify') && !argv.includes('--help') && !argv.includes('-h')) {
      return argv[0] === 'record' ? await runRecord(parseRecordArgs(argv.slice(1)), output) : await runVerify(parseVerifyArgs(argv.slice(1)), output);
    }
    const command = argv[0] === 'mcp' ? parseMcpArgs(argv.slice(1), env) : parseArgs(argv);
    switch (command.kind) {
      case 'help':
        output.out(helpText());
        return 0;
      case 'version':
        output.out(`${version()}\n`);
        return 0;
      case 'check': {
        const config = loadConfig(env, command.overrides);
        const dir = command.dir ?? config.fixturesDir;
        let report;
        try {
          // What a start now would run, on the same loader, listing up to MAX_CHECKED_PROBLEMS.
          report = await inspectFixtures(dir, { now: wallClock(), maxListed: MAX_CHECKED_PROBLEMS });
        } catch (err) {
          const message = userFacingStartupError(err);
          if (!message) throw err;
          return fail(`invalid fixtures:\n${message}`, 1);
        }
        for (const warning of [...report.warnings, ...report.ignored.map(ignoredText)]) output.err(`cloud-emulator: warning: ${warning}\n`);
        const { problems } = report;
        if (problems.count) {
          const count = problems.unlisted === true ? `more than ${problems.listed.length}` : String(problems.count);
          return fail(`invalid fixtures, ${count} problem${problems.count === 1 ? '' : 's'}:\n${problems.error(dir).message}`, 1);
        }
        const state = report.state as State;
        if (state.clock && report.clockFile !== undefined) output.err(`cloud-emulator: note: ${clockNote(report.clockFile, state.clock, config.seedClock)}\n`);
        const counts = SECTION_NAMES.filter((name) => state[name].length).map((name) => `${state[name].length} ${name}`);
        if (state.timeline) counts.push(`a timeline of ${state.timeline.steps.length} step${state.timeline.steps.length === 1 ? '' : 's'}`);
        output.out(`OK ${dir}: ${counts.join(', ') || 'empty'}\n`);
        return 0;
      }
      case 'mcp': {
        // The SDK is loaded by this command alone.
        const { serveStdio } = await import('../mcp/stdio.js');
        await serveStdio(command.options);
        return 0;
      }
      case 'serve':
        await serve(command.overrides, env);
        return undefined;
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof ParityInputError) return fail(err.message, 2);
    const message = userFacingStartupError(err);
    if (message) return fail(message, 2);
    throw err;
  }
}
