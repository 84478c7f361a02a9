import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { CompositionSeedSchema, type CompositionSeed } from '../../src/compositions/schemas.js';
import { MINUTE_MS, RunData, percentiles, summarize } from '../../src/compositions/results.js';
import { composition } from './seed.js';

const seedOf = (overrides: Partial<CompositionSeed> = {}) => Value.Default(CompositionSeedSchema, composition(overrides)) as CompositionSeed;
const flat = (data: RunData, played: number) =>
  data.at(played).map((t) => ({ count: t.count, errors: t.errors, errorsByText: t.errorsByText, histogram: [...t.histogram] }));

describe('the results generator', () => {
  it('is a pure function of the seed, the run and the play time, whatever was read before', () => {
    const comp = seedOf({ durationMs: 600_000 });
    const key = { seed: 7, run: 1, errorFactor: 1 };
    const stepwise = new RunData(comp, key);
    for (let t = 0; t <= 450_000; t += 13_000) stepwise.at(t);
    expect(flat(stepwise, 450_500)).toEqual(flat(new RunData(comp, key), 450_500));
    expect(flat(new RunData(comp, { ...key, run: 2 }), 450_500)).not.toEqual(flat(stepwise, 450_500));
  });

  it('never goes back as play time grows, and stops at the composition length', () => {
    const comp = seedOf({ durationMs: 180_000, tracks: [{ ...composition().tracks[0], rampUpMs: 90_000 }] });
    const data = new RunData(comp, { seed: 'ramp', run: 1, errorFactor: 1 });
    let last = { count: 0, errors: 0 };
    for (let t = 0; t <= 240_000; t += 2_500) {
      const [login] = data.at(t);
      expect(login.count).toBeGreaterThanOrEqual(last.count);
      expect(login.errors).toBeGreaterThanOrEqual(last.errors);
      expect(login.histogram.reduce((a, b) => a + b, 0)).toBe(login.count);
      expect(login.errorsByText.reduce((a, b) => a + b, 0)).toBe(login.errors);
      last = login;
    }
    expect(flat(data, 180_000)).toEqual(flat(data, 240_000));
    // The ramp: the first minute runs fewer iterations than the third, at full load.
    const first = data.at(MINUTE_MS)[0].count;
    const third = data.at(3 * MINUTE_MS)[0].count - data.at(2 * MINUTE_MS)[0].count;
    expect(first).toBeLessThan(third / 2);
  });

  it('reads averages, deviations and nearest-rank percentiles off one histogram', () => {
    const h = new Float64Array(240);
    h[80] = 90; // about 100 ms
    h[120] = 10; // about 1,000 ms
    const s = summarize(h);
    expect(s.count).toBe(100);
    expect(s.min).toBeCloseTo(102.92, 1);
    expect(s.max).toBeCloseTo(1029.25, 1);
    expect(s.average).toBeCloseTo((90 * 102.92 + 10 * 1029.25) / 100, 0);
    expect(percentiles(h, [50, 90, 91, 100]).map((p) => p.value)).toEqual([s.min, s.min, s.max, s.max]);
  });
});
