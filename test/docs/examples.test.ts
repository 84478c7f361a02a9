import { appendFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SETTINGS, loadConfig } from '../../src/config.js';
import { makeDemoApp } from '../helpers/app.js';
import { SHELL, blocks, documents, read } from './markdown.js';
import { runBlock, type Session } from './runner.js';
import { runTranscript } from './cli.js';

/**
 * Every shell block of the README and of docs/ runs here, in page order, against a fresh
 * emulator on a manual clock (the demo seed, 2026-11-22T09:00:00Z): one emulator and one
 * shell per page, as a reader following it would have. A block marked
 * `<!-- emulator: NAME=value -->` runs on an emulator of its own started with those
 * settings; one marked `<!-- not-run: why -->` is counted, not run. See runner.ts for the
 * form of the outputs shown. A ```console block is a transcript of the command line, run by
 * cli.ts.
 */

const open: Session[] = [];
afterAll(async () => {
  for (const s of open) await s.app.close();
});

async function session(env: Record<string, string> = {}, inherit?: Session): Promise<Session> {
  const known = new Set(SETTINGS.map((s) => s.env));
  for (const name of Object.keys(env)) if (!known.has(name)) throw new Error(`<!-- emulator: ${name}=... -->: no such setting`);
  const { app, clock } = await makeDemoApp(loadConfig(env));
  const s: Session = { app, clock, env: new Map(inherit?.env), files: new Map(inherit?.files) };
  open.push(s);
  return s;
}

/** What went wrong in a block, with the answers, so the page is quick to put right. */
function report(outcomes: Awaited<ReturnType<typeof runBlock>>, file: string, start: number): string[] {
  return outcomes
    .filter((o) => o.problem)
    .map((o) => `${file}:${start + 1 + o.line}: ${o.command}\n    ${o.problem}\n    answer: ${o.status} ${o.body.length > 2000 ? `${o.body.slice(0, 2000)}...` : o.body}`);
}

for (const file of documents()) {
  const every = blocks(file, read(file));
  const all = every.filter((b) => SHELL.has(b.info));
  const run = all.filter((b) => b.notRun === undefined);
  const files = Object.fromEntries(every.filter((b) => b.path).map((b) => [b.path!, b.text]));
  describe(`${file} (${run.length} blocks run, ${all.length - run.length} marked not-run)`, () => {
    let page: Session | undefined;
    for (const block of run.filter((b) => b.info === 'console')) {
      it(`the transcript at line ${block.line}`, async () => {
        expect(await runTranscript(block.text, files), `${file}:${block.line}`).toEqual([]);
      });
    }
    for (const block of run.filter((b) => b.info !== 'console')) {
      it(`the example at line ${block.line}`, async () => {
        page ??= await session();
        const own = block.emulator ? await session(block.emulator, page) : undefined;
        const outcomes = await runBlock(block.text, own ?? page);
        // DOCS_PRINT=<file>: every answer, for writing the outputs of a new page.
        if (process.env.DOCS_PRINT) for (const o of outcomes) appendFileSync(process.env.DOCS_PRINT, `${file}:${block.line + 1 + o.line} ${o.command}\n=> ${o.status} ${o.body}\n\n`);
        if (own) for (const [name, value] of own.env) page.env.set(name, value);
        expect(report(outcomes, file, block.line)).toEqual([]);
      });
    }
    it('says why of every block it does not run', () => {
      const unexplained = all.filter((b) => b.notRun !== undefined && !/\w{3,}/.test(b.notRun)).map((b) => `${file}:${b.line}`);
      expect(unexplained, 'write <!-- not-run: why -->').toEqual([]);
    });
  });
}
