import { describe, expect, it } from 'vitest';
import { EmulatorClock, LATEST_INSTANT, ManualClock, javaDateString } from '../../src/core/clock.js';

/** A controllable stand-in for the wall clock. */
function source(start = 1_000_000) {
  let t = start;
  return { read: () => t, move: (ms: number) => (t += ms) };
}

describe('EmulatorClock', () => {
  it('follows its source at the given scale', () => {
    const s = source();
    const clock = new EmulatorClock({ start: 0, source: s.read, scale: 2 });
    s.move(1000);
    expect(clock.now()).toBe(2000);
  });

  it('advance moves time forward at once and refuses to go back', () => {
    const clock = new ManualClock(5000);
    clock.advance(250);
    expect(clock.now()).toBe(5250);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(clock.now()).toBe(5250);
  });

  it('a frozen clock does not move with its source; thawing resumes from where it stood', () => {
    const s = source();
    const clock = new EmulatorClock({ start: 0, source: s.read });
    s.move(100);
    clock.setFrozen(true);
    s.move(10_000);
    expect(clock.now()).toBe(100);
    clock.setFrozen(false);
    s.move(50);
    expect(clock.now()).toBe(150);
  });

  it('changing the scale keeps time continuous', () => {
    const s = source();
    const clock = new EmulatorClock({ start: 0, source: s.read });
    s.move(1000);
    clock.setScale(10);
    expect(clock.now()).toBe(1000);
    s.move(100);
    expect(clock.now()).toBe(2000);
  });

  it('never goes backwards when its source steps back', () => {
    const s = source();
    const clock = new EmulatorClock({ start: 0, source: s.read });
    s.move(500);
    expect(clock.now()).toBe(500);
    s.move(-400);
    expect(clock.now()).toBe(500);
  });

  it('stops at the end of year 9999, however fast it runs or far it is advanced', () => {
    expect(new Date(LATEST_INSTANT).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    const s = source();
    const clock = new EmulatorClock({ start: LATEST_INSTANT - 1000, source: s.read, scale: 1_000_000 });
    s.move(1);
    expect(clock.now()).toBe(LATEST_INSTANT);
    s.move(10_000_000_000);
    expect(clock.status()).toMatchObject({ now: LATEST_INSTANT, iso: '9999-12-31T23:59:59.999Z' });
    clock.advance(Number.MAX_SAFE_INTEGER);
    expect(clock.now()).toBe(LATEST_INSTANT);
    // Slowed down again, it stays there: time never goes back.
    clock.setScale(1);
    s.move(1000);
    expect(clock.now()).toBe(LATEST_INSTANT);
  });

  it('advanceTo only moves forward', () => {
    const clock = new ManualClock(1000);
    clock.advanceTo(500);
    expect(clock.now()).toBe(1000);
    clock.advanceTo(4000);
    expect(clock.now()).toBe(4000);
  });
});

describe('javaDateString', () => {
  it('renders like Java Date.toString() in UTC', () => {
    expect(javaDateString(Date.UTC(2026, 10, 22, 9, 15, 2))).toBe('Sun Nov 22 09:15:02 UTC 2026');
    expect(javaDateString(Date.UTC(2027, 0, 5, 23, 0, 9))).toBe('Tue Jan 05 23:00:09 UTC 2027');
  });
});
