import { describe, expect, it } from 'vitest';
import { BUNDLED_FIXTURES_DIR, ConfigError, SETTINGS, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', logLevel: 'info', timeScale: 1, fixturesDir: BUNDLED_FIXTURES_DIR, tokenIdleTimeoutMs: 5 * 3600 * 1000 });
    expect(config.adminToken).toBeUndefined();
  });

  it('reads and converts environment variables', () => {
    const config = loadConfig({ PORT: '9000', TIME_SCALE: '0', ANNOTATIONS_LIST_WRAPPED: 'true', ADMIN_TOKEN: 's3cret', LOG_LEVEL: 'debug' });
    expect(config).toMatchObject({ port: 9000, timeScale: 0, annotationsListWrapped: true, adminToken: 's3cret', logLevel: 'debug' });
  });

  it('an explicit option wins over the environment', () => {
    expect(loadConfig({ PORT: '9000' }, { port: 9100 }).port).toBe(9100);
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig({ PORT: '', ADMIN_TOKEN: '' });
    expect(config.port).toBe(8080);
    expect(config.adminToken).toBeUndefined();
  });

  it('lists every bad value at once, naming the variable and what it expects', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', TIME_SCALE: '-1', LOG_LEVEL: 'loud', ALERTS_REQUIRE_TOKEN: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/PORT="eighty": expected an integer >= 0 and <= 65535/);
    expect(problems.join('\n')).toMatch(/TIME_SCALE="-1": expected a number >= 0/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL="loud": expected one of fatal, error/);
    expect(problems.join('\n')).toMatch(/ALERTS_REQUIRE_TOKEN="maybe": expected true or false/);
  });

  it('refuses an option no setting has, naming the nearest one', () => {
    expect(() => loadConfig({}, { timescale: 2 } as never)).toThrow("unknown option 'timescale' (did you mean 'timeScale'?)");
    expect(() => loadConfig({}, { somethingElse: 1 } as never)).toThrow(/unknown option 'somethingElse'$/m);
  });

  it('describes every setting with an environment variable, a flag and a description', () => {
    for (const s of SETTINGS) {
      expect(s.env).toMatch(/^[A-Z_]+$/);
      expect(s.flag).toMatch(/^[a-z-]+$/);
      expect(s.description.length).toBeGreaterThan(5);
    }
  });
});
