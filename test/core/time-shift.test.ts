import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { emulatedTime, timeShifter } from '../../src/core/time-shift.js';
import { EmulatorClock, ManualClock } from '../../src/core/clock.js';
import { STATE } from '../../src/state.js';

describe('timeShifter', () => {
  const Step = Type.Object({ state: Type.String(), at: emulatedTime(Type.Integer()) });
  const Record = Type.Object({
    id: Type.Integer(),
    start: Type.Integer(),
    created: Type.Optional(emulatedTime(Type.Integer())),
    steps: Type.Array(Step),
    notes: Type.Array(Type.Object({ text: Type.String() })),
  });

  it('moves the marked times only, copying what holds one and sharing the rest', () => {
    const shift = timeShifter(Type.Array(Record))!;
    const notes = [{ text: 'kept' }];
    const records = [
      { id: 1, start: 100, created: 200, steps: [{ state: 'A', at: 300 }], notes },
      { id: 2, start: 100, steps: [], notes },
    ];
    const moved = shift(records, 1000) as typeof records;
    expect(moved).toEqual([
      { id: 1, start: 100, created: 1200, steps: [{ state: 'A', at: 1300 }], notes },
      { id: 2, start: 100, steps: [], notes },
    ]);
    expect(moved[0].notes).toBe(notes);
    // The given value is not changed.
    expect(records[0]).toEqual({ id: 1, start: 100, created: 200, steps: [{ state: 'A', at: 300 }], notes });
  });

  it('is undefined for a schema with no emulated time', () => {
    expect(timeShifter(Type.Array(Type.Object({ id: Type.Integer(), start: Type.Integer() })))).toBeUndefined();
  });

  it("moves a whole state's emulated times, leaving the times given absolute, and drops its clock", () => {
    const state = STATE.parse(
      {
        clock: { now: 5000 },
        users: [{ userName: 'a', password: 'p' }],
        tokens: [{ token: 't', userName: 'a', lastUsedAt: 4000 }],
        domains: [{ id: 1, name: 'd' }],
        annotations: [{ id: 1, title: 't', text: 'x', start: 10, lastModified: 20, domainIds: [1], user: 'a' }],
      },
      'test',
    );
    const moved = STATE.shift(state, -1000);
    expect(moved).not.toHaveProperty('clock');
    expect(moved.tokens[0].lastUsedAt).toBe(3000);
    expect(moved.annotations[0]).toMatchObject({ start: 10, lastModified: -980 });
    expect(state.tokens[0].lastUsedAt).toBe(4000);
  });
});

describe('EmulatorClock.set', () => {
  it('moves the clock to any instant, back included, with its settings; real() reads its source', () => {
    let wall = 1_000_000;
    const clock = new EmulatorClock({ start: 5_000_000, source: () => wall });
    clock.set({ now: 2000, scale: 2, frozen: false });
    expect(clock.now()).toBe(2000);
    wall += 10;
    expect(clock.now()).toBe(2020);
    expect(clock.real()).toBe(1_000_010);
    clock.set({ now: clock.real() });
    expect(clock.status()).toMatchObject({ now: 1_000_010, scale: 2, frozen: false });
    expect(() => clock.set({ now: -1 })).toThrow(RangeError);
    expect(new ManualClock(7, () => 9).real()).toBe(9);
  });
});
