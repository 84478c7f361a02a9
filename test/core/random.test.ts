import { describe, expect, it } from 'vitest';
import { hash32, logNormal, normal, unit } from '../../src/core/random.js';

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
});
