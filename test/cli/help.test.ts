import { describe, expect, it } from 'vitest';
import { helpText, parseArgs } from '../../src/cli/args.js';
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
