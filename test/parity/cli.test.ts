import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { runRecord } from '../../src/cli/parity.js';
import { parseRecordArgs } from '../../src/cli/parity-args.js';
import { diffJson, JsonPathPattern, JsonPatternError } from '../../src/cli/json-diff.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { T0 } from '../helpers/app.js';

/** `cloud-emulator record` and `verify` on the command line: their options, their errors, and a round trip. */

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {}, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

let dir: string;
let emulator: RunningEmulator;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parity-cli-'));
  emulator = await startEmulator({ clock: new ManualClock(T0) });
});
afterAll(async () => {
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('bad input exits 2 with a message naming it', () => {
  it.each([
    [['record'], "cloud-emulator: record: option '--target' is required: the base URL of the service to record, e.g. --target https://service.example.com\n"],
    [['record', '--target', 'ftp://x'], "cloud-emulator: record: option '--target' must be an http or https URL, got 'ftp://x'\n"],
    [['record', '--target', 'http://x/?a=1'], "cloud-emulator: record: option '--target' is a base URL: no query or fragment, got 'http://x/?a=1'\n"],
    [['record', '--target', 'http://x', '--max-bytes', '10k'], "cloud-emulator: record: option '--max-bytes' must be an integer from 1 to 9007199254740991, got '10k'\n"],
    [['record', '--target', 'http://x', '--alow-writes'], "cloud-emulator: record: unknown option '--alow-writes' (did you mean '--allow-writes'?) (see --help)\n"],
    [['record', '--target', 'http://x', '--allow-writes=yes'], "cloud-emulator: record: option '--allow-writes' takes no value\n"],
    [['record', '--target'], "cloud-emulator: record: option '--target' needs a value\n"],
    [['record', 'http://x'], "cloud-emulator: record: unexpected argument 'http://x' (the target is given as --target <base URL>)\n"],
    [['verify'], 'cloud-emulator: verify: which recording? cloud-emulator verify <recording> (--url <emulator URL> or --fixtures <dir>)\n'],
    [['verify', 'r.jsonl'], "cloud-emulator: verify: option '--url' (a running emulator) or '--fixtures' (a folder to start one from) is required\n"],
    [['verify', 'r.jsonl', '--url', 'http://x', '--fixtures', 'f'], "cloud-emulator: verify: options '--url' and '--fixtures' exclude each other: give one\n"],
    [['verify', 'r.jsonl', '--url', 'x'], "cloud-emulator: verify: option '--url' must be an http or https URL, got 'x'\n"],
    [['verify', 'a', 'b', '--url', 'http://x'], 'cloud-emulator: verify: takes one recording, got: a b\n'],
    [['verify', 'r', '-u'], "cloud-emulator: verify: unknown option '-u' (see --help)\n"],
  ])('%j', async (argv, message) => {
    expect(await cli(argv)).toEqual({ code: 2, out: '', err: message });
  });

  it('a recording that is not one, naming the file and line', async () => {
    const file = join(dir, 'bad.jsonl');
    await writeFile(file, '{"method":"GET","path":"/x","status":200,"request":{"headers":{}},"response":{"headers":{}}}\n{"method":"GET"}\n');
    expect(await cli(['verify', file, '--url', emulator.url])).toEqual({ code: 2, out: '', err: `cloud-emulator: ${file}:2: not a recorded exchange: "path" must be a string\n` });
    expect(await cli(['verify', join(dir, 'none.jsonl'), '--url', emulator.url])).toMatchObject({ code: 2, err: `cloud-emulator: no recording at ${join(dir, 'none.jsonl')}\n` });
  });

  it('an ignore file with a mistake, naming the place', async () => {
    const recording = join(dir, 'empty.jsonl');
    await writeFile(recording, '');
    const cases: Array<[unknown, string]> = [
      [{ ignore: ['$.a[x]'] }, "$.ignore[0]: '$.a[x]' at character 4: '[x]' is neither [*], an index nor a quoted name"],
      [{ rules: [{ path: '/x', ignore: ['a.b'], skipp: true }] }, '$.rules[0]: unknown key "skipp" (known: path, method, status, ignore, skip, values, why)'],
      [{ ignores: [] }, '$: unknown key "ignores" (known: ignore, rules)'],
      [{ ignore: ['$..'] }, "$.ignore[0]: '$..' ends with '..'"],
    ];
    for (const [content, message] of cases) {
      const file = join(dir, 'ignore.json');
      await writeFile(file, JSON.stringify(content));
      expect(await cli(['verify', recording, '--url', emulator.url, '--ignore', file])).toEqual({ code: 2, out: '', err: `cloud-emulator: ${file}: ${message}\n` });
    }
  });

  it('--help lists record and verify', async () => {
    const { out } = await cli(['record', '--help']);
    expect(out).toContain('cloud-emulator record --target URL');
    expect(out).toContain('cloud-emulator verify RECORDING (--url URL | --fixtures DIR)');
    expect(out).toContain('docs/parity.md');
  });
});

describe('record, then verify against an emulator started from fixtures', () => {
  it('a recording of the demo seed verifies clean against the demo fixtures, and a changed answer fails it', async () => {
    const out = join(dir, 'demo.jsonl');
    let stop!: () => void;
    const said: string[] = [];
    const output = { out: (t: string) => void said.push(t), err: (t: string) => void said.push(t) };
    const command = parseRecordArgs(['--target', emulator.url, '--out', out, '--port', '0']);
    const running = runRecord(command, output, new Promise<void>((resolve) => (stop = resolve)));
    // The recorder says where it listens once it does.
    while (!said.length) await new Promise((resolve) => setTimeout(resolve, 5));
    const at = /at (http:\/\/[^ ]+) into/.exec(said[0])![1];
    const login = await fetch(`${at}/concerto/services/rest/RepositoryService/v1/Tokens`, {
      method: 'PUT',
      body: JSON.stringify({ userName: 'john.smith@example.com', password: 's3cret!' }),
    });
    const { token } = (await login.json()) as { token: string };
    const grids = await fetch(`${at}/concerto/services/rest/CloudService/v1/grid`, { headers: { 'x-auth-token': token } });
    expect(grids.status).toBe(200);
    await grids.text();
    stop();
    expect(await running).toBe(0);
    expect(said.at(-1)).toBe(`recorded 2 exchanges (${(await readFile(out)).length} bytes) into ${out}; 0 not recorded, 0 refused, 0 could not reach the target\n`);
    const recorded = await readFile(out, 'utf8');
    expect(recorded).not.toContain('s3cret!');
    expect(recorded).not.toContain(token);
    expect(recorded).toContain('\\"password\\":\\"***\\"');

    // The emulator started here runs on real time: what moves with time must differ, and is ignored.
    const ignore = join(dir, 'time.json');
    await writeFile(ignore, JSON.stringify({ ignore: ['$..instanceId'], rules: [{ path: '*/CloudService/v1/grid', ignore: ['$[*].statistics'] }] }));
    const clean = await cli(['verify', out, '--fixtures', BUNDLED_FIXTURES_DIR, '--ignore', ignore]);
    expect(clean.out).toMatch(/: 2 exchanges, 2 as recorded, 0 differ, 0 skipped; 0 differences, \d+ ignored/);
    expect(clean.code).toBe(0);

    // The same recording, one field of the grid list renamed as if the service had answered so.
    const lines = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { response: { body: string } });
    lines[1].response.body = lines[1].response.body.replace('"name":', '"gridName":');
    const changed = join(dir, 'changed.jsonl');
    await writeFile(changed, lines.map((l) => JSON.stringify(l)).join('\n'));
    const failed = await cli(['verify', changed, '--fixtures', BUNDLED_FIXTURES_DIR, '--ignore', ignore]);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('\n  $[0].cloudServers[0].gridName: missing (recorded "amazon - EC2 Test Server (X-Large)")\n  $[0].cloudServers[0].name: extra');
  });
});

describe('JSON path patterns', () => {
  const matches = (pattern: string, path: Array<string | number>) => new JsonPathPattern(pattern).matches(path);

  it('match a path, and anything below it', () => {
    expect(matches('$.objects[*].created', ['objects', 3, 'created'])).toBe(true);
    expect(matches('$.objects[*].created', ['objects', 3, 'name'])).toBe(false);
    expect(matches('$.servers', ['servers', 0, 'name'])).toBe(true);
    expect(matches('$.servers[1]', ['servers', 0, 'name'])).toBe(false);
    expect(matches("$['a b'].c", ['a b', 'c'])).toBe(true);
    expect(matches('$.*.id', ['x', 'id'])).toBe(true);
  });

  it('.. stands for any number of levels, none included', () => {
    expect(matches('$..lastModified', ['lastModified'])).toBe(true);
    expect(matches('$..lastModified', ['objects', 0, 'meta', 'lastModified'])).toBe(true);
    expect(matches('$..lastModified', ['objects', 0, 'lastModifiedBy'])).toBe(false);
    expect(matches('$..[0].id', ['a', 'b', 0, 'id'])).toBe(true);
  });

  it('refuse what they cannot read', () => {
    expect(() => new JsonPathPattern('objects')).toThrow(JsonPatternError);
    expect(() => new JsonPathPattern('$.a[')).toThrow("'[' without ']'");
    expect(() => new JsonPathPattern('$.')).toThrow('a name is missing');
  });
});

describe('the JSON diff', () => {
  const none = { ignored: () => false };
  it('names missing, extra, type changed and value changed by path; a masked value is compared by type only', () => {
    const { differences } = diffJson(
      { a: 1, b: [1, 2], c: { d: 'x' }, token: '***', e: null },
      { a: '1', b: [1], c: { d: 'y', f: true }, token: 'real', e: null, g: 0 },
      none,
    );
    expect(differences.map((d) => `${d.kind} ${d.path}`)).toEqual([
      'type changed $.a',
      'missing $.b[1]',
      'value changed $.c.d',
      'extra $.c.f',
      'extra $.g',
    ]);
  });
  it('counts ignored differences apart', () => {
    const result = diffJson({ a: 1, b: 2 }, { a: 2, b: 3 }, { ignored: (p) => p[0] === 'a' });
    expect(result.ignored).toBe(1);
    expect(result.differences.map((d) => d.path)).toEqual(['$.b']);
  });
});
