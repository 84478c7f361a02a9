import { describe, expect, it } from 'vitest';
import { pageBase, pagePath, sandboxNameProblem } from '../../src/ui/static/base.js';
import { PATHS, SANDBOX_PREFIX, splitSandbox } from '../../src/http/paths.js';
import { SANDBOX_NAME, SANDBOX_NAME_RULE } from '../../src/world/sandboxes.js';

// Which world the page drives, from where it was loaded, by the same rules the server routes by.
const base = (folder: string) => pageBase(folder, PATHS.ui, SANDBOX_PREFIX, SANDBOX_NAME);

describe('the world a page drives', () => {
  it('is the default world at /_emulator/ui/, and a sandbox under /sandbox/<name>/', () => {
    expect(base('/_emulator/ui/')).toEqual({ root: '/', defaultRoot: '/', sandbox: null });
    expect(base('/sandbox/w1/_emulator/ui/')).toEqual({ root: '/sandbox/w1/', defaultRoot: '/', sandbox: 'w1' });
    expect(base(`/sandbox/${'a'.repeat(64)}/_emulator/ui/`).sandbox).toBe('a'.repeat(64));
    expect(base('/sandbox/team_a-2/_emulator/ui/').sandbox).toBe('team_a-2');
  });

  it('keeps the prefix of a proxy in front of the emulator, in both worlds', () => {
    expect(base('/tools/emulator/_emulator/ui/')).toEqual({ root: '/tools/emulator/', defaultRoot: '/tools/emulator/', sandbox: null });
    expect(base('/tools/emulator/sandbox/w1/_emulator/ui/')).toEqual({ root: '/tools/emulator/sandbox/w1/', defaultRoot: '/tools/emulator/', sandbox: 'w1' });
  });

  it('does not take a folder that only looks like a sandbox for one', () => {
    // A proxy prefix that ends in "sandbox", and a name the server would refuse.
    expect(base('/sandbox/_emulator/ui/').sandbox).toBeNull();
    expect(base('/my-sandbox/w1/_emulator/ui/').sandbox).toBeNull();
    expect(base('/sandbox/w%201/_emulator/ui/').sandbox).toBeNull();
    expect(base(`/sandbox/${'a'.repeat(65)}/_emulator/ui/`).sandbox).toBeNull();
  });

  it('agrees with the server on where a sandbox page is and which world serves it', () => {
    for (const sandbox of [null, 'w1', 'team-a', 'X_9']) {
      const path = pagePath('/', PATHS.ui, SANDBOX_PREFIX, sandbox);
      expect(base(path).sandbox).toBe(sandbox);
      const split = splitSandbox(path);
      expect(split?.name ?? null).toBe(sandbox);
      expect(split?.rest ?? path).toBe(`${PATHS.ui}/`);
    }
    expect(pagePath('/tools/', PATHS.ui, SANDBOX_PREFIX, 'w1')).toBe('/tools/sandbox/w1/_emulator/ui/');
    expect(pagePath('/tools/', PATHS.ui, SANDBOX_PREFIX, null)).toBe('/tools/_emulator/ui/');
  });

  it('falls back to the folder\'s parents when the page is not at its usual place', () => {
    expect(base('/copy/a/b/').root).toBe('/copy/');
    expect(base('/a/').root).toBe('/');
  });
});

describe('a new sandbox name', () => {
  const problem = (text: string) => sandboxNameProblem(text, SANDBOX_NAME, SANDBOX_NAME_RULE);

  it('takes what the server takes', () => {
    for (const name of ['w1', 'a', 'A-b_9', 'x'.repeat(64)]) expect(problem(name), name).toBeUndefined();
  });

  it('refuses the rest with the rule in words', () => {
    expect(problem('')).toBe('give the new sandbox a name');
    for (const name of ['no spaces', 'w/1', 'é', 'x'.repeat(65), '../x', 'a.b']) {
      expect(problem(name), name).toContain(`is not a sandbox name: use ${SANDBOX_NAME_RULE}`);
      expect(SANDBOX_NAME.test(name), name).toBe(false);
    }
    expect(problem('y'.repeat(500))!.length).toBeLessThan(200);
  });

  it("refuses 'default', which the picker uses for the world without a sandbox", () => {
    expect(problem('default')).toMatch(/choose another name/);
    expect(problem('Default')).toBeUndefined();
  });
});
