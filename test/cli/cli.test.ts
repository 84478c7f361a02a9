import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliOutput } from '../../src/cli/run.js';
import { BUNDLED_FIXTURES_DIR, SETTINGS, loadConfig } from '../../src/config.js';
import { configTable, helpText, parseArgs, UsageError } from '../../src/cli/args.js';

/** Runs the command line in-process, capturing what it prints. */
async function cli(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const output: CliOutput = { out: (t) => void (out += t), err: (t) => void (err += t) };
  const code = await runCli(argv, env, output);
  return { code, out, err };
}

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});
async function fixtureDir(files: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-fixtures-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

describe('--help', () => {
  it('lists every setting with its option, environment variable and default', async () => {
    const { code, out, err } = await cli(['--help']);
    expect(code).toBe(0);
    expect(err).toBe('');
    for (const s of SETTINGS) {
      expect(out).toContain(`--${s.schema.type === 'boolean' ? '[no-]' : ''}${s.flag}`);
      expect(out).toContain(`env ${s.env},`);
      expect(out).toContain(s.description);
    }
    expect(out).toContain('default: 8080');
    expect(out).toContain('default: the bundled demo fixtures');
    expect(out).toContain('check [DIR]');
  });

  it('shows no path of the machine it runs on', () => {
    expect(helpText()).not.toContain(BUNDLED_FIXTURES_DIR);
    expect(configTable()).not.toContain(BUNDLED_FIXTURES_DIR);
  });

  it('-h is --help, and --version prints the package version', async () => {
    expect((await cli(['-h'])).out).toBe(helpText());
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(await cli(['--version'])).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });
});

describe('parsing', () => {
  it('takes --flag value, --flag=value, bare and negated booleans', () => {
    expect(parseArgs(['--port', '9000', '--fixtures=./my-fixtures', '--time-scale', '0', '--alerts-require-token', '--no-annotations-list-wrapped'])).toEqual({
      kind: 'serve',
      overrides: { port: '9000', fixturesDir: './my-fixtures', timeScale: '0', alertsRequireToken: true, annotationsListWrapped: false },
    });
  });

  it('lets an option win over its environment variable', () => {
    const { overrides } = parseArgs(['--port', '9000', '--log-level=warn']) as { overrides: Record<string, unknown> };
    const config = loadConfig({ PORT: '7000', LOG_LEVEL: 'debug', TIME_SCALE: '0' }, overrides);
    expect(config.port).toBe(9000);
    expect(config.logLevel).toBe('warn');
    expect(config.timeScale).toBe(0);
  });

  it.each([
    [['--nope'], "unknown option '--nope'"],
    [['-p', '1'], "unknown option '-p'"],
    [['--port'], "option '--port' needs a value"],
    [['--port', '--time-scale', '0'], "option '--port' needs a value"],
    [['serve'], "unexpected argument 'serve'"],
    [['--no-port'], "unknown option '--no-port'"],
    [['--no-alerts-require-token=yes'], 'takes no value'],
  ])('refuses %j with one clear message', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

describe('exit codes', () => {
  it('exits 2 with one message for an unknown option, and starts nothing', async () => {
    const { code, out, err } = await cli(['--prot', '9000']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toBe("cloud-emulator: unknown option '--prot' (did you mean '--port'?) (see --help)\n");
  });

  it('exits 2 naming every bad value, from the option or from the environment', async () => {
    const { code, err } = await cli(['--port', '70000', '--time-scale=fast'], { LOG_LEVEL: 'loud' });
    expect(code).toBe(2);
    expect(err).toMatch(/^cloud-emulator: invalid configuration:/);
    expect(err).toContain('--port="70000": expected an integer >= 0 and <= 65535');
    expect(err).toContain('--time-scale="fast": expected a number >= 0');
    expect(err).toContain('LOG_LEVEL="loud": expected one of fatal, error, warn, info, debug, trace, silent');
  });

  it('exits 2 when the fixtures folder cannot be used', async () => {
    const { code, err } = await cli(['--fixtures', '/nonexistent/fixtures-folder', '--port', '0']);
    expect(code).toBe(2);
    expect(err).toContain('cannot read fixtures folder /nonexistent/fixtures-folder');
  });
});

describe('check', () => {
  it('validates the bundled demo fixtures', async () => {
    const { code, out } = await cli(['check']);
    expect(code).toBe(0);
    expect(out).toMatch(/^OK .*: .*users/);
  });

  it('validates a folder given as argument, over --fixtures and FIXTURES_DIR', async () => {
    const good = await fixtureDir({ 'a.json': { users: [{ userName: 'a@example.com', password: 'x' }] } });
    const bad = await fixtureDir({ 'a.json': { users: [{ userName: '' }] } });
    expect((await cli(['check', good], { FIXTURES_DIR: bad })).out).toBe(`OK ${good}: 1 users\n`);
    expect((await cli(['check', '--fixtures', good], { FIXTURES_DIR: bad })).code).toBe(0);
    expect((await cli(['check'], { FIXTURES_DIR: good })).code).toBe(0);
  });

  it('exits 1 and names the file and the JSON path of each problem', async () => {
    const dir = await fixtureDir({
      'users.json': { users: [{ userName: 'a@example.com', password: 'x' }] },
      'tokens.json': { tokens: [{ token: 't', userName: 'nobody@example.com' }] },
    });
    const dangling = await cli(['check', dir]);
    expect(dangling.code).toBe(1);
    expect(dangling.out).toBe('');
    expect(dangling.err).toContain("$.tokens[0].userName: no user 'nobody@example.com'");

    const broken = await fixtureDir({ 'grids.json': '{ "grids": [ }' });
    const notJson = await cli(['check', broken]);
    expect(notJson.code).toBe(1);
    expect(notJson.err).toContain(`${join(broken, 'grids.json')}:1:14: $: not valid JSON: unexpected '}' where a value should be`);

    const unknown = await fixtureDir({ 'x.json': { users: [], gridz: [] } });
    const extra = await cli(['check', unknown]);
    expect(extra.code).toBe(1);
    expect(extra.err).toContain(join(unknown, 'x.json'));
  });

  it("refuses more than one folder", async () => {
    const { code, err } = await cli(['check', 'a', 'b']);
    expect(code).toBe(2);
    expect(err).toContain("'check' takes one folder");
  });
});

describe('configuration table', () => {
  it('has a row per setting, and docs/configuration.md carries the current table', async () => {
    const table = configTable();
    for (const s of SETTINGS) expect(table).toContain(`| \`${s.env}\` | `);
    expect(table.trim().split('\n')).toHaveLength(SETTINGS.length + 2);
    const doc = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(doc, 'docs/configuration.md is stale: run `npm run docs:config -- --write`').toContain(table);
  });
});
