import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RecordedExchange } from '../../src/cli/recording.js';

/**
 * The behaviour reference marks each behaviour documented, verified or inferred. Every item
 * carries a mark, and every `verified` mark names an exchange of the shipped parity recording
 * (which documented.test.ts verifies against the emulator in `npm test`) that the ignore file
 * does not skip.
 */

const REFERENCE = readFileSync(new URL('../../docs/behaviour-reference.md', import.meta.url), 'utf8');
const RECORDING = readFileSync(new URL('documented/recording.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as RecordedExchange);
const IGNORE = JSON.parse(readFileSync(new URL('documented/ignore.json', import.meta.url), 'utf8')) as {
  rules: Array<{ path?: string; method?: string; skip?: boolean }>;
};

const MARK = /^`(documented|inferred|verified: (\S+) (\S+) (\d{3}))` /;

/** A glob as the ignore file's: `*` any run of characters, `?` one. */
function glob(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** The behaviours: the items of every section after the contents, and the rows of the table. */
function behaviours(): Array<{ line: number; text: string }> {
  const lines = REFERENCE.split('\n');
  const out: Array<{ line: number; text: string }> = [];
  let inSections = false;
  lines.forEach((text, i) => {
    if (text.startsWith('## ')) inSections = true;
    if (!inSections) return;
    if (text.startsWith('- ')) out.push({ line: i + 1, text: text.slice(2) });
    else if (text.startsWith('| ') && !text.startsWith('| Interface |') && !text.startsWith('| Mark |')) {
      const cells = text.split(' | ');
      out.push({ line: i + 1, text: `${cells.at(-1)!.replace(/ \|$/, '')} ` });
    }
  });
  return out;
}

describe('the behaviour reference marks', () => {
  const items = behaviours();

  it('give every behaviour one mark: documented, verified or inferred', () => {
    expect(items.length).toBeGreaterThan(200);
    const unmarked = items.filter((b) => !MARK.test(b.text)).map((b) => `line ${b.line}: ${b.text.slice(0, 60)}`);
    expect(unmarked).toEqual([]);
  });

  it('tie every verified behaviour to an exchange of the shipped parity recording that verify does not skip', () => {
    const verifiedItems = items.map((b) => ({ ...b, m: MARK.exec(b.text) })).filter((b) => b.m?.[2] !== undefined);
    expect(verifiedItems.length).toBeGreaterThan(0);
    for (const { line, m } of verifiedItems) {
      const [, , method, path, status] = m!;
      const match = RECORDING.find((e) => e.method === method && glob(path).test(e.path) && e.status === Number(status));
      expect(match, `line ${line}: no ${method} ${path} ${status} in the recording`).toBeDefined();
      const skipped = IGNORE.rules.some(
        (r) => r.skip === true && (r.path === undefined || glob(r.path).test(match!.path)) && (r.method === undefined || r.method === method),
      );
      expect(skipped, `line ${line}: the exchange is skipped by the ignore file`).toBe(false);
    }
  });

  it('fail for a verified mark that names no exchange', () => {
    const bogus = MARK.exec('`verified: PATCH */grid/* 200` x')!;
    expect(RECORDING.some((e) => e.method === bogus[2] && glob(bogus[3]).test(e.path) && e.status === Number(bogus[4]))).toBe(false);
  });
});
