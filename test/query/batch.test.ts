import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { replayable } from '../helpers/property.js';
import { ManualClock } from '../../src/core/clock.js';
import { BlockCache, QueryStore } from '../../src/query/store.js';
import { BLOCK_SIZE, BUCKETS, BUCKET_EDGES, RumGenerator, incidentsOf, modelOf, type Selection } from '../../src/query/model.js';
import type { IncidentSeed, RumModelSeed } from '../../src/query/schemas.js';

/**
 * A long range is summed by counts of beacons (a batch of minutes), not minute by minute: the
 * sums must be the very integers the minutes add up to, whatever the model, the range, the
 * page groups kept, the timer and the incidents.
 */

const MINUTE = 60_000;
const DAY_MINUTES = 1440;
/** Minutes since the epoch of 2026-11-22 00:00 UTC. */
const DAY0 = Date.UTC(2026, 10, 22) / MINUTE;

type Incident = IncidentSeed & { start: number; end: number };

/** The sum minute by minute, as every minute of a short range is still added. */
function minuteByMinute(gen: RumGenerator, from: number, to: number, timer: number, selection: Selection, byGroup: boolean): Float64Array {
  const out = new Float64Array((byGroup ? gen.model.pageGroups.length : 1) * BLOCK_SIZE);
  for (let m = from; m < to; m++) gen.addMinute(out, m, gen.model.timers[timer], selection, byGroup ? 'pageGroup' : undefined);
  return out;
}

function batched(gen: RumGenerator, from: number, to: number, timer: number, selection: Selection, byGroup: boolean): Float64Array {
  const out = new Float64Array((byGroup ? gen.model.pageGroups.length : 1) * BLOCK_SIZE);
  const batch = gen.batch(gen.model.timers[timer], selection, byGroup ? 'pageGroup' : undefined);
  expect(batch).toBeDefined();
  // In two parts, as the store gathers day after day.
  const middle = from + Math.floor((to - from) / 3);
  gen.addToBatch(batch!, from, middle);
  gen.addToBatch(batch!, middle, to);
  batch!.sumInto(out);
  return out;
}

const seeds = fc.record(
  {
    domainId: fc.integer({ min: 1, max: 1_000_000 }),
    // Up to 100,000 a minute: page groups past the counts a batch tables (2,048 beacons a minute) go minute by minute in it.
    beaconsPerMinute: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 20_000, max: 100_000 })),
    pageLoadMedianMs: fc.integer({ min: 10, max: 60_000 }),
    pageLoadSigma: fc.double({ min: 0.05, max: 3, noNaN: true }),
    errorRate: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  { requiredKeys: ['domainId'] },
) as fc.Arbitrary<RumModelSeed>;

describe('the Query API: a batch of minutes sums exactly what its minutes add', () => {
  it('the same integers as minute by minute, in every bucket and in the errors (property)', () => {
    fc.assert(
      fc.property(
        seeds,
        fc.integer({ min: -3 * DAY_MINUTES, max: 0 }),
        fc.integer({ min: 1, max: 2 * DAY_MINUTES }),
        fc.nat({ max: 13 }),
        fc.option(fc.uniqueArray(fc.nat({ max: 6 }), { minLength: 1, maxLength: 7 }), { nil: undefined }),
        fc.boolean(),
        fc.array(
          fc.record({
            startAt: fc.integer({ min: -3 * DAY_MINUTES * MINUTE, max: 2 * DAY_MINUTES * MINUTE }),
            length: fc.integer({ min: 1, max: DAY_MINUTES * MINUTE }),
            pageGroup: fc.option(fc.constantFrom('Home', 'Checkout', 'Nowhere'), { nil: undefined }),
            loadTimeFactor: fc.double({ min: 0.2, max: 20, noNaN: true }),
            errorFactor: fc.double({ min: 0, max: 50, noNaN: true }),
            trafficFactor: fc.double({ min: 0, max: 10, noNaN: true }),
          }),
          { maxLength: 4 },
        ),
        (seed, startOffset, length, timer, groups, byGroup, incidents) => {
          const model = modelOf(seed.domainId, seed);
          const seeded: Incident[] = incidents.map((i, n) => ({
            id: n + 1,
            domainId: seed.domainId,
            start: DAY0 * MINUTE + i.startAt,
            end: DAY0 * MINUTE + i.startAt + i.length,
            ...(i.pageGroup !== undefined ? { pageGroup: i.pageGroup } : {}),
            loadTimeFactor: i.loadTimeFactor,
            errorFactor: i.errorFactor,
            trafficFactor: i.trafficFactor,
          }));
          const gen = new RumGenerator(model, incidentsOf(model, seeded));
          const selection: Selection = groups === undefined ? {} : { pageGroup: groups.filter((g) => g < model.pageGroups.length) };
          const from = DAY0 + startOffset;
          const t = timer % model.timers.length;
          const expected = minuteByMinute(gen, from, from + length, t, selection, byGroup);
          expect(Array.from(batched(gen, from, from + length, t, selection, byGroup))).toEqual(Array.from(expected));
        },
      ),
      replayable({ numRuns: 40 }),
    );
  });

  it('the same integers over 20 days, past the 16 days of minutes a batch keeps before it counts them', () => {
    for (const domainId of [7, 9001]) {
      const model = modelOf(domainId, undefined);
      const [start, end] = [(DAY0 - 9 * DAY_MINUTES) * MINUTE, (DAY0 - 8 * DAY_MINUTES) * MINUTE];
      const incident = { id: 1, domainId, start, end, loadTimeFactor: 2, errorFactor: 3, trafficFactor: 1.5 };
      const gen = new RumGenerator(model, incidentsOf(model, [incident]));
      const from = DAY0 - 20 * DAY_MINUTES + 13;
      expect(Array.from(batched(gen, from, DAY0, 0, {}, true))).toEqual(Array.from(minuteByMinute(gen, from, DAY0, 0, {}, true)));
    }
  });

  it('is not offered for a selection that splits beacons by a dimension: those minutes go one by one', () => {
    const model = modelOf(7, undefined);
    const gen = new RumGenerator(model, []);
    expect(gen.batch(model.timers[0], { country: [0] })).toBeUndefined();
    expect(gen.batch(model.timers[0], {}, 'browser')).toBeUndefined();
    expect(gen.batch(model.timers[0], { pageGroup: [1] }, 'pageGroup')).toBeDefined();
  });

  it('a summary and a histogram over days answer what the minutes add up to, with an incident in them', async () => {
    const now = (DAY0 + 9 * 60 + 17) * MINUTE;
    const incident = { id: 1, domainId: 7, start: now - 40 * 3_600_000, end: now - 30 * 3_600_000, loadTimeFactor: 3, errorFactor: 5, trafficFactor: 2 };
    const store = new QueryStore({ rumModels: [], incidents: [incident] }, new ManualClock(now), { domains: () => [{ id: 7, name: 'a.example.com', apiKey: 'KEY-A' }] }, new BlockCache(1 << 24));
    const from = now - 4 * 86_400_000 - 23 * MINUTE;
    const range = { 'date-comparator': 'Between', 'date-start': String(from), 'date-end': String(now), 'series-format': 'json' };
    const histogram = await store.query('KEY-A', 'histogram', range);
    const points = (histogram.series as { series: Array<{ aPoints: Array<{ s: number; c: number }> }> }).series[0].aPoints;
    const model = store.modelOf(7);
    const expected = minuteByMinute(new RumGenerator(model, incidentsOf(model, [incident])), from / MINUTE, now / MINUTE, 0, {}, false);
    const buckets = [];
    for (let k = 0; k < BUCKETS; k++) if (expected[k] > 0) buckets.push({ s: BUCKET_EDGES[k], c: expected[k] });
    expect(points.map(({ s, c }) => ({ s, c }))).toEqual(buckets);
    const errors = (await store.query('KEY-A', 'timers-metrics', { ...range, metric: 'AppErrors' })).values as Array<{ latest: number }>;
    expect(errors[0].latest).toBe(expected[BUCKETS]);
  });
});
