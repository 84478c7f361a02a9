import { describe, expect, it } from 'vitest';
import { stepsBetween, type Step } from '../../src/core/lifecycle.js';

const visited = (steps: Step[], from: number, to: number) => {
  const out: string[] = [];
  stepsBetween(steps, from, to, (state, at) => out.push(`${state}@${at}`));
  return out;
};

describe('stepsBetween', () => {
  const steps: Step[] = [
    { state: 'A', at: 0 },
    { state: 'B', at: 10 },
    { state: 'C', at: 20 },
    { state: 'D', at: 30 },
  ];

  it('visits the steps that begin in [from, to], in order, both ends included', () => {
    expect(visited(steps, 10, 20)).toEqual(['B@10', 'C@20']);
    expect(visited(steps, 11, 29)).toEqual(['C@20']);
    expect(visited(steps, 31, 100)).toEqual([]);
  });

  it('leaves out a step that the next one replaces at the same instant: no read shows it', () => {
    const instant: Step[] = [
      { state: 'A', at: 0 },
      { state: 'B', at: 5 },
      { state: 'C', at: 5 },
      { state: 'D', at: 5 },
    ];
    expect(visited(instant, 0, 5)).toEqual(['A@0', 'D@5']);
  });
});
