import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';

/** What `check` says of a fixture's timeline (docs/timelines.md), with its file, line and JSON path. */

async function check(dir: string) {
  let out = '';
  const code = await runCli(['check', dir], {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
  return { code, out };
}

const FOLDER = join('test-results', 'check-timeline');
afterEach(async () => {
  await rm(FOLDER, { recursive: true, force: true });
});
async function folder(files: Record<string, string>): Promise<void> {
  await mkdir(FOLDER, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(FOLDER, name), text);
}

const step = (at: string, path = '/_emulator/incidents') => `      { "at": ${at}, "request": { "method": "POST", "path": "${path}", "body": {} } }`;

describe('check, of a timeline', () => {
  it('names the file, line and JSON path of a step whose time cannot be read', async () => {
    await folder({
      'a.json': '{ "users": [] }\n',
      'story.json': `{\n  "timeline": {\n    "steps": [\n${step('"+30s"')},\n${step('"in a while"')}\n    ]\n  }\n}\n`,
    });
    const { code, out } = await check(FOLDER);
    expect(code).toBe(1);
    expect(out).toMatch(new RegExp(`${FOLDER}/story\\.json:5:\\d+: \\$\\.timeline\\.steps\\[1\\]\\.at: 'in a while' is neither an offset`));
  });

  it('names a step whose request would replace the world, and a step of the wrong shape', async () => {
    await folder({ 'story.json': `{\n  "timeline": {\n    "steps": [\n${step('"+2m"')},\n${step('"+1m"', '/_emulator/reset')}\n    ]\n  }\n}\n` });
    const reset = await check(FOLDER);
    expect(reset.code).toBe(1);
    expect(reset.out).toMatch(new RegExp(`${FOLDER}/story\\.json:5:\\d+: \\$\\.timeline\\.steps\\[1\\]\\.request\\.path: a step may not call /_emulator/reset`));
    await folder({ 'story.json': `{\n  "timeline": {\n    "steps": [\n${step('"+1m"')},\n      { "at": "+2m" }\n    ]\n  }\n}\n` });
    const shape = await check(FOLDER);
    expect(shape.code).toBe(1);
    expect(shape.out).toMatch(new RegExp(`${FOLDER}/story\\.json:5:\\d+: \\$\\.timeline\\.steps\\[1\\]\\.request: Expected required property`));
  });

  it('refuses a second timeline in the folder, and passes a good one', async () => {
    const one = `{ "timeline": { "steps": [\n${step('"+1m"')}\n] } }\n`;
    await folder({ 'a.json': one, 'b.json': one });
    const twice = await check(FOLDER);
    expect(twice.code).toBe(1);
    expect(twice.out).toContain('$.timeline: a folder holds at most one timeline');
    await rm(join(FOLDER, 'b.json'));
    const good = await check(FOLDER);
    expect(good.code, good.out).toBe(0);
    expect(good.out).toContain('a timeline of 1 step');
  });
});
