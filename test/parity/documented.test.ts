import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IgnoreRules, summaryText, verified, verifyRecording } from '../../src/cli/verify.js';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/index.js';

/**
 * The shipped parity set: a recording written by hand from the interface document (each
 * answer with the fields and types it documents, each status it documents), verified against
 * an emulator on the bundled seed. A drift from what the service documents fails here.
 */

const RECORDING = new URL('documented/recording.jsonl', import.meta.url).pathname;
const IGNORE = new URL('documented/ignore.json', import.meta.url).pathname;

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  // The recording was made at 2026-11-22T09:00Z; the seed's records sit relative to the clock's
  // start, so a clock at the recording's time keeps them where they were. On the wall clock each
  // seed annotation passes through the recording's fixed query window once, for half an hour.
  emulator = await startEmulator({ clock: new ManualClock(Date.parse('2026-11-22T09:00:00Z')) });
  dir = await mkdtemp(join(tmpdir(), 'parity-documented-'));
});
afterAll(async () => {
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the documented parity set', () => {
  it('verifies against the bundled seed: every documented status, field and type', async () => {
    const report = await verifyRecording(RECORDING, { url: emulator.url, ignore: await IgnoreRules.load(IGNORE) });
    expect(summaryText(report)).toMatch(/: 18 exchanges, 18 as recorded, 0 differ, 0 skipped; 0 differences/);
    expect(verified(report)).toBe(true);
    expect(report.exchanges.map((e) => e.actualStatus)).toEqual(report.exchanges.map((e) => e.status));
  });

  it('fails, naming the path, when a documented field is missing from an answer', async () => {
    // As if the document named a field the emulator does not answer.
    const text = (await readFile(RECORDING, 'utf8')).replace('\\"isFinal\\":true', '\\"isFinal\\":true,\\"gridName\\":\\"grid\\"');
    const drifted = join(dir, 'drifted.jsonl');
    await writeFile(drifted, text);
    const report = await verifyRecording(drifted, { url: emulator.url, ignore: await IgnoreRules.load(IGNORE) });
    expect(verified(report)).toBe(false);
    expect(report.exchanges.flatMap((e) => e.differences.map((d) => `#${e.seq} ${d.kind} ${d.path}`))).toEqual(['#2 missing $.gridName']);
  });
});
