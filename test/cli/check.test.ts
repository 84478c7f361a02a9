import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { FixtureError } from '../../src/core/fixtures.js';
import { startEmulator } from '../../src/index.js';

/** `cloud-emulator check`: what a start would say, every problem of every file at once. */

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {}, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'check-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const annotation = (fields: object) => JSON.stringify({ id: 1, title: 't', text: 'x', user: 'u', domainIds: [], ...fields });

/** A folder with one mistake in each file. */
const DEMO: Record<string, string> = {
  'a-trailing-comma.json': '{\n  "users": [\n    { "userName": "a@example.com", "password": "a" },\n  ]\n}\n',
  'b-misspelled-key.json': '{\n  "users": [\n    { "userName": "b@example.com", "pasword": "b" }\n  ]\n}\n',
  'c-union.json': '{\n  "grids": [{\n    "id": 101, "name": "G", "startOutcome": "CHEKED",\n    "servers": [{ "name": "s", "serverClassName": "c", "cloudType": "EC2", "location": { "id": 1, "name": "l" }, "launchCPA": "c", "region": "r", "zone": "z", "securityGroup": "g" }]\n  }]\n}\n',
  'd-domains.json': '{ "domains": [{ "id": 5, "name": "five.example.com" }] }\n',
  'e-domains-again.json': '{ "domains": [\n  { "id": 6, "name": "six.example.com" },\n  { "id": 5, "name": "five-again.example.com" }\n] }\n',
  'f-duplicate-within.json': '{ "alerts": [\n  { "uid": "x", "name": "X" },\n  { "uid": "x", "name": "X again" }\n] }\n',
  'g-missing-reference.json': '{ "tokens": [{ "token": "t", "userName": "ghost@example.com" }] }\n',
  'h-annotation.json': `{ "annotations": [\n  ${annotation({ start: 1631142300000, startAgoMs: 5 })}\n] }\n`,
};

describe('check lists every problem of every file in one run', () => {
  it('names the file, line and column, the path, the allowed values, a near key and both places of a duplicate', async () => {
    const dir = await folder(DEMO);
    const { code, out, err } = await cli(['check', dir]);
    expect(code).toBe(1);
    expect(out).toBe('');
    const f = (name: string) => join(dir, name);
    expect(err.split('\n')).toEqual([
      'cloud-emulator: invalid fixtures, 8 problems:',
      `${f('a-trailing-comma.json')}:3:53: $: not valid JSON: trailing comma: nothing follows it before ']'`,
      `${f('b-misspelled-key.json')}:3:5: $.users[0].password: Expected required property`,
      `${f('b-misspelled-key.json')}:3:36: $.users[0].pasword: unknown key "pasword" (did you mean 'password'?)`,
      `${f('c-union.json')}:3:29: $.grids[0].startOutcome: expected one of "CHECKED", "ALLOCATE_FAILED", "ALLOCATED_WITH_FAILURES", "CHECKED_WITH_FAILURES", "CHECKED_AND_DEPLOYING", "CHECKED_AND_TERMINATING", got "CHEKED" (did you mean 'CHECKED'?)`,
      `${f('e-domains-again.json')}:3:3: $.domains[1]: duplicate domains entry 5; also at ${f('d-domains.json')}:1:15 $.domains[0]`,
      `${f('f-duplicate-within.json')}:3:3: $.alerts[1]: duplicate alerts entry "x"; also at ${f('f-duplicate-within.json')}:2:3 $.alerts[0]`,
      `${f('g-missing-reference.json')}:1:30: $.tokens[0].userName: no user 'ghost@example.com'`,
      `${f('h-annotation.json')}:2:3: $.annotations[0]: give exactly one of start and startAgoMs (it has both) (id 1)`,
      '',
    ]);
  });

  it('says how many more there are past the bound, and lists 200', async () => {
    const tokens = Array.from({ length: 250 }, (_, i) => ({ token: `t${i}`, userName: 'ghost' }));
    const dir = await folder({ 'tokens.json': JSON.stringify({ tokens }) });
    const { code, err } = await cli(['check', dir]);
    expect(code).toBe(1);
    const lines = err.trim().split('\n');
    expect(lines[0]).toBe('cloud-emulator: invalid fixtures, 250 problems:');
    expect(lines).toHaveLength(1 + 200 + 1);
    expect(lines.at(-1)).toBe(`${dir}: and 50 more problems, not listed`);
  });

  it('passes an empty folder with a warning', async () => {
    const dir = await folder({ 'notes.txt': 'not a fixture' });
    const { code, out, err } = await cli(['check', dir]);
    expect(code).toBe(0);
    expect(out).toBe(`OK ${dir}: empty\n`);
    expect(err).toBe(`cloud-emulator: warning: ${dir}: no *.json fixture files: the emulator starts with an empty state\n`);
  });
});

describe('check answers what a start would', () => {
  const good = '{ "users": [{ "userName": "a@example.com", "password": "a" }] }';
  const cases: Array<[string, Record<string, string>]> = [
    ['valid', { 'users.json': good }],
    ['empty', {}],
    ['annotation with start and startAgoMs', { 'a.json': `{ "annotations": [${annotation({ start: 1, startAgoMs: 5 })}] }` }],
    ['annotation with neither', { 'a.json': `{ "annotations": [${annotation({})}] }` }],
    ['annotation ending before it starts', { 'a.json': `{ "annotations": [${annotation({ start: 5000, end: 1000 })}] }` }],
    ['annotation ending before it starts, relative to the load', { 'a.json': `{ "annotations": [${annotation({ startAgoMs: 1000, end: 5000 })}] }` }],
    ['incident with neither end', { 'q.json': '{ "domains": [{ "id": 1, "name": "d" }], "incidents": [{ "id": 1, "domainId": 1, "startAgoMs": 5 }] }' }],
    ['reference to nothing', { 't.json': '{ "tokens": [{ "token": "t", "userName": "ghost" }] }' }],
    ['duplicate across files', { 'a.json': good, 'b.json': good }],
    ['not JSON', { 'a.json': '{ "users": [ }' }],
    ['unknown section', { 'a.json': '{ "userz": [] }' }],
  ];
  it.each(cases)('%s', async (_name, files) => {
    const dir = await folder(files);
    const checked = await cli(['check', dir]);
    let started: unknown;
    try {
      const emu = await startEmulator({ fixtures: dir });
      await emu.close();
    } catch (err) {
      started = err;
    }
    if (checked.code === 0) expect(started).toBeUndefined();
    else {
      expect(checked.code).toBe(1);
      expect(started).toBeInstanceOf(FixtureError);
      // The same problems, in the same words, with the file named.
      // (Times relative to the load are worked out at each one's own moment.)
      const digitless = (text: string) => text.replace(/\d{10,}/g, 'T');
      const [header, ...lines] = (started as FixtureError).message.split('\n');
      expect(header).toMatch(/^invalid fixtures, \d+ problems? \(`cloud-emulator check` lists up to 200\):$/);
      for (const line of lines) expect(digitless(checked.err)).toContain(digitless(line));
      expect(lines[0].startsWith(dir)).toBe(true);
    }
  });
});

describe('a fixture clock', () => {
  it('check says what becomes of it: ignored on real time by default, the start with --seed-clock keep', async () => {
    const dir = await folder({
      'a.json': JSON.stringify({ users: [{ userName: 'a@example.com', password: 'x' }] }),
      'export.json': JSON.stringify({ clock: { now: Date.UTC(2026, 4, 1, 10), scale: 1, frozen: false } }),
    });
    const real = await cli(['check', dir]);
    expect(real.code).toBe(0);
    expect(real.err).toBe(
      `cloud-emulator: note: ${join(dir, 'export.json')} gives a clock (2026-05-01T10:00:00.000Z); ignored: the world runs on real time, the fixtures' emulated times moved to keep their ages; use --seed-clock keep to start from it\n`,
    );
    const keep = await cli(['check', dir, '--seed-clock', 'keep']);
    expect(keep.code).toBe(0);
    expect(keep.err).toContain(`${join(dir, 'export.json')} gives a clock (2026-05-01T10:00:00.000Z): the clock starts from it (--seed-clock keep)`);
    // No clock, no note.
    expect((await cli(['check', await folder({ 'a.json': JSON.stringify({ users: [] }) })])).err).toBe('');
  });

  it('the start log says it too', async () => {
    const dir = await folder({ 'export.json': JSON.stringify({ clock: { now: Date.UTC(2026, 4, 1, 10), scale: 1, frozen: false } }) });
    const lines: Array<{ msg: string }> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const emu = await startEmulator({ fixtures: dir, logger: { level: 'info', stream } });
    await emu.close();
    expect(lines.map((l) => l.msg)).toContain(
      `${join(dir, 'export.json')} gives a clock (2026-05-01T10:00:00.000Z); ignored: the world runs on real time, the fixtures' emulated times moved to keep their ages; use --seed-clock keep to start from it`,
    );
  });
});

describe('check: custom dimensions of a real-user model', () => {
  const model = (dimension: object) =>
    `{\n  "domains": [{ "id": 5, "name": "five.example.com" }],\n  "rumModels": [{\n    "domainId": 5,\n    "customDimensions": [${JSON.stringify(dimension)}]\n  }]\n}\n`;

  it('names the file, line and path of a share out of (0, 1] and of a name a built-in dimension has', async () => {
    const badShare = await cli(['check', await folder({ 'q.json': model({ name: 'Tier', values: [{ name: 'Gold', share: 1.5 }] }) })]);
    expect(badShare.code).toBe(1);
    expect(badShare.err).toMatch(/q\.json:5:\d+: \$\.rumModels\[0\]\.customDimensions\[0\]\.values\[0\]\.share: Expected number to be less or equal to 1/);
    const builtIn = await cli(['check', await folder({ 'q.json': model({ name: 'Device_Type', values: [{ name: 'TV', share: 1 }] }) })]);
    expect(builtIn.code).toBe(1);
    expect(builtIn.err).toMatch(/q\.json:5:\d+: \$\.rumModels\[0\]\.customDimensions\[0\].name: 'Device_Type' is a built-in dimension's name/);
    const good = await cli(['check', await folder({ 'q.json': model({ name: 'Tier', values: [{ name: 'Gold', share: 0.2 }, { name: 'Basic', share: 0.8 }] }) })]);
    expect(good.code).toBe(0);
  });
});
