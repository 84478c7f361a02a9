import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { finishHash, hash32, hashState, keyWord, logNormal, mixKey, mixNumber, mixWord, normal, normalOf, unit } from '../../src/core/random.js';

describe('deterministic numbers', () => {
  it('are a function of their keys only', () => {
    expect(hash32(1, 'a', 1795338000000)).toBe(hash32(1, 'a', 1795338000000));
    expect(hash32(1, 'a')).not.toBe(hash32('a', 1));
    // Epoch ms differing only above 32 bits still differ.
    expect(hash32(1795338000000)).not.toBe(hash32(1795338000000 + 0x100000000));
  });

  it('spread evenly over [0, 1) and make standard normals', () => {
    const n = 20_000;
    let sum = 0;
    let sumN = 0;
    let sumN2 = 0;
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < n; i++) {
      const u = unit('spread', i);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      sum += u;
      buckets[Math.floor(u * 10)]++;
      const z = normal('z', i);
      sumN += z;
      sumN2 += z * z;
    }
    expect(sum / n).toBeCloseTo(0.5, 1);
    for (const b of buckets) expect(Math.abs(b - n / 10)).toBeLessThan(n / 50);
    expect(sumN / n).toBeCloseTo(0, 1);
    expect(sumN2 / n).toBeCloseTo(1, 1);
  });

  it('give log-normals around their median', () => {
    const values = Array.from({ length: 5001 }, (_, i) => logNormal(800, 0.5, 'ln', i)).sort((a, b) => a - b);
    expect(values[2500]).toBeGreaterThan(740);
    expect(values[2500]).toBeLessThan(860);
  });

  it('mix a key word worked out once as they mix the key, and normalOf is the normal of its two keyed units', () => {
    fc.assert(
      fc.property(fc.integer({ min: -0x80000000, max: 0x7fffffff }), fc.integer({ min: 0, max: 0x7fffffff }), (state, key) => {
        // A number below 2^31 is its low word, then a high word of 0.
        expect(mixWord(mixWord(state, keyWord(key)), keyWord(0))).toBe(mixNumber(state, key));
        const u = 1 - finishHash(mixKey(state, 'n1')) / 0x100000000;
        const v = finishHash(mixKey(state, 'n2')) / 0x100000000;
        expect(normalOf(state)).toBe(Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
      }),
    );
    expect(normalOf(hashState(7, 'x'))).toBe(normal(7, 'x'));
  });
});
