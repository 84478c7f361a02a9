import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/clock.js';
import { Sandboxes, type SandboxMode } from '../../src/world/sandboxes.js';
import { emptyState, parseState } from '../../src/state.js';
import { World } from '../../src/world/world.js';
import { INTERFACES } from '../../src/interfaces.js';
import { T0, authSeed } from '../helpers/app.js';

const seed = parseState({ ...emptyState(), ...authSeed(), domains: [{ id: 1, name: 'd' }] }, 'seed');

function registry(mode: SandboxMode = 'auto', max = 3, idleTimeoutMs = 60_000) {
  const main = new World(INTERFACES, seed, new ManualClock(T0), loadConfig());
  let realNow = 1_000;
  const sandboxes = new Sandboxes({ mode, max, idleTimeoutMs, create: (name, state) => main.fork(name, state), now: () => realNow });
  return { main, sandboxes, pass: (ms: number) => (realNow += ms) };
}

const kindOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? `${err.kind}: ${err.message}` : String(err);
  }
  return 'no error';
};

describe('Sandboxes', () => {
  it('auto mode: the first use creates a world from the seed, on its own clock starting at the default time', () => {
    const { main, sandboxes } = registry();
    main.clock.advance(5_000);
    const w = sandboxes.resolve('w1');
    expect(w).not.toBe(main);
    expect(sandboxes.resolve('w1')).toBe(w);
    expect(w.clock.now()).toBe(main.clock.now());
    w.clock.advance(60_000);
    expect(main.clock.now()).toBe(T0 + 5_000);
    expect(w.counts()).toEqual(main.counts());
  });

  it('refuses names outside the rule, naming it', () => {
    const { sandboxes } = registry();
    for (const name of ['', 'a b', 'w%33', 'ü', 'x'.repeat(65), '../x']) {
      expect(kindOf(() => sandboxes.resolve(name))).toMatch(/^invalid: .*1 to 64 characters of A-Z, a-z, 0-9, _ and -/);
    }
    expect(kindOf(() => sandboxes.resolve('A-z_09'))).toBe('no error');
  });

  it('explicit mode: an unknown name is not found, saying how to create it', () => {
    const { sandboxes } = registry('explicit');
    expect(kindOf(() => sandboxes.resolve('w1'))).toMatch(/^not-found: no sandbox 'w1': create it with PUT \/_emulator\/sandboxes\/w1/);
    expect(sandboxes.put('w1').created).toBe(true);
    expect(kindOf(() => sandboxes.resolve('w1'))).toBe('no error');
  });

  it('a provisional world is registered only when adopted, and never past the limit', () => {
    const { sandboxes } = registry('auto', 1);
    const w = sandboxes.provisional('w1');
    expect(sandboxes.size).toBe(0);
    expect(sandboxes.find('w1')).toBeUndefined();
    expect(sandboxes.adopt('w1', w)).toBe(w);
    expect(sandboxes.find('w1')).toBe(w);
    // Made meanwhile by another request: the registered one is kept.
    expect(sandboxes.adopt('w1', registry().main)).toBe(w);
    expect(kindOf(() => sandboxes.provisional('w2'))).toMatch(/^unavailable: cannot create sandbox 'w2': 1 sandboxes exist and MAX_SANDBOXES is 1/);
    expect(kindOf(() => registry('explicit').sandboxes.provisional('w1'))).toMatch(/^not-found: no sandbox 'w1'/);
  });

  it('off: nothing resolves', () => {
    const { sandboxes } = registry('off');
    expect(kindOf(() => sandboxes.resolve('w1'))).toMatch(/^not-found: sandboxes are off/);
  });

  it('MAX_SANDBOXES bounds how many exist; a replace does not count twice', () => {
    const { sandboxes } = registry('auto', 2);
    sandboxes.resolve('a');
    sandboxes.resolve('b');
    expect(kindOf(() => sandboxes.resolve('c'))).toMatch(/^unavailable: .*MAX_SANDBOXES is 2/);
    expect(sandboxes.put('b').created).toBe(false);
    expect(sandboxes.delete('a')).toBe(true);
    expect(sandboxes.delete('a')).toBe(false);
    expect(kindOf(() => sandboxes.resolve('c'))).toBe('no error');
  });

  it('a sandbox unused for the idle timeout is removed; use keeps it', () => {
    const { sandboxes, pass } = registry('auto', 10, 60_000);
    const kept = sandboxes.resolve('kept');
    sandboxes.resolve('idle');
    pass(40_000);
    expect(sandboxes.resolve('kept')).toBe(kept);
    pass(30_000);
    expect(sandboxes.list().map((s) => s.name)).toEqual(['kept']);
    expect(sandboxes.resolve('kept')).toBe(kept);
  });

  it('put replaces the whole world from a state, keeping createdAt', () => {
    const { sandboxes, pass } = registry();
    const first = sandboxes.put('w').summary;
    pass(10);
    const state = parseState({ ...emptyState(), ...authSeed(), domains: [{ id: 1, name: 'd' }, { id: 2, name: 'e' }] }, 'posted');
    const { summary, created } = sandboxes.put('w', state);
    expect(created).toBe(false);
    expect(summary.createdAt).toBe(first.createdAt);
    expect(summary.lastUsedAt).toBe(first.createdAt + 10);
    expect(summary.counts.domains).toBe(2);
    // Reset goes back to the process seed, as the default world's does.
    sandboxes.resolve('w').reset();
    expect(sandboxes.summaryOf('w')?.counts.domains).toBe(1);
  });
});
