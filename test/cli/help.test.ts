import { describe, expect, it } from 'vitest';
import { DEFAULT_MCP_URL, helpText, parseArgs, parseMcpArgs } from '../../src/cli/args.js';
import { INTERFACES } from '../../src/interfaces.js';
import { PATHS } from '../../src/http/paths.js';
import { readyFields } from '../../src/cli/serve.js';

/** What --help says of the emulator, and how it meets a mistyped option. */

describe('--help', () => {
  it('lists every emulated interface of the list, by its name and its base paths', () => {
    const text = helpText();
    for (const i of INTERFACES) {
      const line = text.split('\n').find((l) => l.trimStart().startsWith(`${i.label} `));
      expect(line, i.label).toBeDefined();
      expect(line).toContain(i.prefix);
    }
    expect(text).toContain(PATHS.results);
    expect(text).not.toContain('(provisioning, annotations, alerts)');
  });

  it('names the API reference and the dashboard', () => {
    expect(helpText()).toContain(`API reference once started: http://HOST:PORT${PATHS.docs}, dashboard: http://HOST:PORT${PATHS.ui}`);
  });
});

describe('a mistyped option', () => {
  it.each([
    ['--prot', "unknown option '--prot' (did you mean '--port'?) (see --help)"],
    ['--time-sacle=0', "unknown option '--time-sacle' (did you mean '--time-scale'?) (see --help)"],
    ['--no-wacth', "unknown option '--no-wacth' (did you mean '--no-watch'?) (see --help)"],
    ['--hlep', "unknown option '--hlep' (did you mean '--help'?) (see --help)"],
    ['--nothing-like-it', "unknown option '--nothing-like-it' (see --help)"],
  ])('%s gets the nearest option', (arg, message) => {
    expect(() => parseArgs([arg, '1'])).toThrow(message);
  });
});

describe('the start banner', () => {
  it('gives the URLs of the server, its API reference and its dashboard', () => {
    expect(readyFields('http://127.0.0.1:8080')).toEqual({
      url: 'http://127.0.0.1:8080',
      docs: 'http://127.0.0.1:8080/_emulator/docs',
      dashboard: 'http://127.0.0.1:8080/_emulator/ui',
    });
  });
});

describe('cloud-emulator mcp', () => {
  it('is listed by --help, with its options', () => {
    const text = helpText();
    expect(text).toContain('cloud-emulator mcp [mcp options]');
    for (const option of ['--url', '--admin-token', '--sandbox', '--default-world']) expect(text).toContain(option);
    expect(parseMcpArgs(['--help'], {})).toEqual({ kind: 'help' });
  });

  it('steers the local emulator in a sandbox of its own unless told otherwise; options win over EMULATOR_URL and ADMIN_TOKEN', () => {
    expect(parseMcpArgs([], {})).toEqual({ kind: 'mcp', options: { url: DEFAULT_MCP_URL } });
    expect(DEFAULT_MCP_URL).toBe('http://127.0.0.1:8080');
    expect(parseMcpArgs([], { EMULATOR_URL: 'http://emu:9000/', ADMIN_TOKEN: 's3cret' })).toEqual({ kind: 'mcp', options: { url: 'http://emu:9000', adminToken: 's3cret' } });
    expect(parseMcpArgs(['--url=http://a:1', '--admin-token', 't', '--sandbox', 'w1'], { EMULATOR_URL: 'http://b:2', ADMIN_TOKEN: 'x' })).toEqual({
      kind: 'mcp',
      options: { url: 'http://a:1', adminToken: 't', sandbox: 'w1' },
    });
    expect(parseMcpArgs(['--default-world'], {})).toEqual({ kind: 'mcp', options: { url: DEFAULT_MCP_URL, sandbox: null } });
  });

  it('refuses what it cannot act on', () => {
    expect(() => parseMcpArgs(['--sandbox', 'a', '--default-world'], {})).toThrow('give --sandbox or --default-world, not both');
    expect(() => parseMcpArgs(['--ulr', 'x'], {})).toThrow("unknown option '--ulr' of 'mcp' (did you mean '--url'?)");
    expect(() => parseMcpArgs(['--url', 'localhost:8080'], {})).toThrow("--url 'localhost:8080' is not an http:// or https:// URL");
    expect(() => parseMcpArgs(['--url'], {})).toThrow("option '--url' needs a value");
    expect(() => parseMcpArgs(['serve'], {})).toThrow("unexpected argument 'serve' after 'mcp'");
  });
});
