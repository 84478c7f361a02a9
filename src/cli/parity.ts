import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { startEmulator, type RunningEmulator } from '../index.js';
import type { RecordCommand, SnapshotCommand, VerifyCommand } from './parity-args.js';
import { SnapshotError, takeSnapshot } from './snapshot.js';
import { startRecorder } from './record.js';
/** Where a command writes (the process's stdout and stderr, or a test's buffers). */
interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}
import { IgnoreRules, junitReport, markdownReport, summaryText, verified, verifyRecording } from './verify.js';

/**
 * `record`: runs the recording proxy until SIGINT or SIGTERM, then closes the recording and
 * says what it holds. `signal` stands in for the process's signals in tests.
 */
export async function runRecord(command: RecordCommand, output: CliOutput, signal: Promise<unknown> = processSignal()): Promise<number> {
  const recorder = await startRecorder({
    target: command.target,
    out: command.out,
    port: command.port,
    host: command.host,
    allowWrites: command.allowWrites,
    maxBytes: command.maxBytes,
    maxBodyBytes: command.maxBodyBytes,
    warn: (message) => output.err(`cloud-emulator: warning: ${message}\n`),
  });
  output.out(
    `recording ${command.target.href} at ${recorder.url} into ${command.out} (at most ${command.maxBytes} bytes; ${command.allowWrites ? 'writes are passed' : 'reads, log-in and log-out only: --allow-writes passes the rest'}); Ctrl-C ends it\n`,
  );
  await signal;
  await recorder.close();
  const s = recorder.stats();
  output.out(`recorded ${s.recorded} exchanges (${s.bytes} bytes) into ${command.out}; ${s.dropped} not recorded, ${s.refused} refused, ${s.failed} could not reach the target\n`);
  return 0;
}

function processSignal(): Promise<unknown> {
  return Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
}

/**
 * `verify`: replays a recording against the emulator at --url, or one started in this process
 * from --fixtures; prints the summary, writes the reports asked for. 0 when nothing but
 * ignored paths differ, 1 otherwise.
 */
export async function runVerify(command: VerifyCommand, output: CliOutput): Promise<number> {
  const ignore = command.ignore === undefined ? undefined : await IgnoreRules.load(command.ignore);
  let emulator: RunningEmulator | undefined;
  if (command.fixtures !== undefined) emulator = await startEmulator({ fixtures: command.fixtures, port: 0 });
  try {
    const url = emulator?.url ?? (command.url as string);
    const report = await verifyRecording(command.recording, { url, ignore, token: command.token, adminToken: command.adminToken });
    output.out(summaryText(report));
    if (command.markdown !== undefined) await writeFile(command.markdown, markdownReport(report));
    if (command.junit !== undefined) await writeFile(command.junit, junitReport(report));
    return verified(report) ? 0 : 1;
  } finally {
    await emulator?.close();
  }
}

/**
 * `snapshot`: reads the tenant into a fixture folder and prints its report. 0 when written,
 * 1 when the target answered an error or could not be read (the message names the call).
 */
export async function runSnapshot(command: SnapshotCommand, output: CliOutput): Promise<number> {
  try {
    const result = await takeSnapshot(command);
    output.out(`${result.report}\nwrote ${result.files.join(', ')} into ${command.out}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof SnapshotError)) throw err;
    output.err(`cloud-emulator: snapshot: ${err.message}\n`);
    return 1;
  }
}
