import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';

/** A property that fails on some draws only: which one fails depends on the seed. */
const property = (seen: number[][]) =>
  fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 6 }), (xs) => {
    seen.push(xs);
    return xs.reduce((a, b) => a + b, 0) % 7 !== 3;
  });

function failure(params: fc.Parameters<[number[]]>): { message: string; seen: number[][] } {
  const seen: number[][] = [];
  try {
    fc.assert(property(seen), params);
  } catch (err) {
    return { message: (err as Error).message, seen };
  }
  throw new Error('expected the property to fail');
}

const saved = { seed: process.env.FC_SEED, path: process.env.FC_PATH };
afterEach(() => {
  for (const [key, value] of [['FC_SEED', saved.seed], ['FC_PATH', saved.path]] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('property tests replay from the seed they print', () => {
  it('prints FC_SEED and FC_PATH, and running with them gives the same counterexample at once', () => {
    delete process.env.FC_SEED;
    delete process.env.FC_PATH;
    const first = failure(replayable({ numRuns: 200 }));
    const replay = /replay with: FC_SEED=(-?\d+) FC_PATH="([0-9:]+)"/.exec(first.message);
    expect(replay, first.message).not.toBeNull();
    const counterexample = /Counterexample: (.*)/.exec(first.message)?.[1];
    expect(counterexample).toBeDefined();

    process.env.FC_SEED = replay![1];
    process.env.FC_PATH = replay![2];
    const again = failure(replayable({ numRuns: 200 }));
    expect(/Counterexample: (.*)/.exec(again.message)?.[1]).toBe(counterexample);
    // Straight to the counterexample: no search, no shrinking.
    expect(again.seen).toHaveLength(1);
  });

  it('with FC_SEED alone, draws the same values in the same order', () => {
    process.env.FC_SEED = '424242';
    delete process.env.FC_PATH;
    const a = failure(replayable({ numRuns: 200 }));
    const b = failure(replayable({ numRuns: 200 }));
    expect(b.seen).toEqual(a.seen);
  });
});
