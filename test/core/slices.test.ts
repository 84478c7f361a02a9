import { describe, expect, it } from 'vitest';
import { runAtOnce, runInSlices, sortSliced } from '../../src/core/slices.js';
import { turnsDuring } from '../helpers/loop.js';

/** Entries with many equal keys, so that a sort that is not stable shows. */
function entries(n: number, seed: number): Array<{ key: number; at: number }> {
  let x = seed;
  return Array.from({ length: n }, (_, at) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return { key: x % Math.max(1, n >> 3), at };
  });
}
const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;

describe('sortSliced', () => {
  it('sorts as the native (stable) sort does, at every size around its runs', () => {
    for (const n of [0, 1, 2, 4095, 4096, 4097, 8192, 12_289, 40_000]) {
      const list = entries(n, n + 7);
      const expected = [...list].sort(byKey);
      expect(runAtOnce(sortSliced([...list], byKey))).toEqual(expected);
    }
  });

  it('hands back a sorted list in one pass, as it is', () => {
    const list = entries(10_000, 3).sort(byKey);
    expect(runAtOnce(sortSliced(list, byKey))).toBe(list);
  });

  it('lets the event loop turn while it works, in slices', async () => {
    const list = entries(300_000, 11);
    const { value: sorted, turns } = await turnsDuring(() => runInSlices(sortSliced([...list], byKey)));
    expect(sorted).toEqual([...list].sort(byKey));
    expect(turns).toBeGreaterThan(1);
  });
});
