import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';

/** What `check` prints about a folder, as a person who wrote it reads it. */

async function check(dir: string) {
  let out = '';
  const code = await runCli(['check', dir], {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
  return { code, out };
}

// Under the working folder (the project's root when tests run), so that a relative path can name it.
const FOLDER = join('test-results', 'check-messages');
afterEach(async () => {
  await rm(FOLDER, { recursive: true, force: true });
});
async function folder(files: Record<string, string>): Promise<void> {
  await mkdir(FOLDER, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(FOLDER, name), text);
}

describe('check', () => {
  it('prints each file under the folder as it was typed, ./ included', async () => {
    await folder({ 'a.json': '{ "users": [{ "userName": "a" }] }\n' });
    const dotted = await check(`./${FOLDER}`);
    expect(dotted.code).toBe(1);
    expect(dotted.out).toContain(`\n./${FOLDER}/a.json:1:13: $.users[0].password: Expected required property`);
    const plain = await check(FOLDER);
    expect(plain.out).toContain(`\n${FOLDER}/a.json:1:13: `);
  });

  it('says what a time is when a date is written as text: epoch ms, or relative to the load', async () => {
    await folder({
      'annotations.json': '{\n  "annotations": [\n    { "id": 1, "title": "t", "text": "x", "user": "u", "domainIds": [], "start": "2026-11-22T09:00:00Z" }\n  ]\n}\n',
    });
    const { code, out } = await check(`./${FOLDER}`);
    expect(code).toBe(1);
    expect(out).toContain(
      '$.annotations[0].start: expected a time: an integer of UTC epoch milliseconds (such as 1795338000000 for 2026-11-22T09:00:00Z), or give startAgoMs instead: how many ms before the load, got "2026-11-22T09:00:00Z"',
    );
  });

  it('points a missing comma at the end of its line, not at the next line', async () => {
    await folder({ 'users.json': '{\n  "users": []\n  "tokens": []\n}\n' });
    const { out } = await check(`./${FOLDER}`);
    expect(out).toContain(`./${FOLDER}/users.json:2:14: $: not valid JSON: expected ',' or '}' after a property value, found '"'`);
  });
});
