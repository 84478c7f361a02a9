import { describe, expect, it } from 'vitest';
import { enteredAt, planFrom, positionAt, reschedule, visibleAt, type Table } from '../../src/core/lifecycle.js';

const TABLE: Table<'A' | 'B' | 'C', 'a' | 'b'> = [
  { state: 'A', holds: 'a' },
  { state: 'B', holds: 'b' },
  { state: 'C' },
];

describe('lazy lifecycle', () => {
  it('plans absolute steps from a table and durations', () => {
    expect(planFrom(TABLE, { a: 100, b: 50 }, 1000, 1)).toEqual([
      { state: 'A', at: 1000 },
      { state: 'B', at: 1100 },
      { state: 'C', at: 1150 },
    ]);
  });

  it('scales durations, and scale 0 puts every step at the start', () => {
    expect(planFrom(TABLE, { a: 100, b: 50 }, 0, 2).map((s) => s.at)).toEqual([0, 200, 300]);
    expect(planFrom(TABLE, { a: 100, b: 50 }, 0, 0).map((s) => s.at)).toEqual([0, 0, 0]);
  });

  it('lands exactly on each boundary, however late it is read', () => {
    const steps = planFrom(TABLE, { a: 100, b: 50 }, 0, 1);
    expect(positionAt(steps, 99)).toEqual({ state: 'A', since: 0, next: { state: 'B', at: 100 } });
    expect(positionAt(steps, 100)).toMatchObject({ state: 'B', since: 100 });
    expect(positionAt(steps, 1_000_000)).toEqual({ state: 'C', since: 150, next: undefined });
    expect(positionAt(planFrom(TABLE, { a: 0, b: 0 }, 0, 1), 0).state).toBe('C');
  });

  it('reschedule keeps the past and replaces the future', () => {
    const steps = planFrom(TABLE, { a: 100, b: 50 }, 0, 1);
    const next = reschedule(steps, 120, [{ state: 'A', at: 120 }]);
    expect(next).toEqual([
      { state: 'A', at: 0 },
      { state: 'B', at: 100 },
      { state: 'A', at: 120 },
    ]);
    expect(enteredAt(next, 'B')).toBe(100);
    expect(enteredAt(next, 'C')).toBeUndefined();
  });

  it('timed entries become visible when their time comes', () => {
    const entries = [{ at: 0, text: 'a' }, { at: 10, text: 'b' }];
    expect(visibleAt(entries, 9).map((e) => e.text)).toEqual(['a']);
    expect(visibleAt(entries, 10).map((e) => e.text)).toEqual(['a', 'b']);
  });
});
