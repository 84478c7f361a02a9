import { afterEach, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance } from 'fastify';
import { TEST_TOKEN, TEST_USER, makeApp } from '../helpers/app.js';
import { turnsDuring } from '../helpers/loop.js';
import { CompositionSeedSchema, type CompositionSeed } from '../../src/compositions/schemas.js';
import { MINUTE_MS, RunData } from '../../src/compositions/results.js';
import { RESULTS, authed, composition, create, read, seed } from './seed.js';

let apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

const DAY = 86_400_000;
const base = composition();
/** A run of a day, of 2 tracks of 4 collections each: 11,520 series-minutes to fold. */
const longRun = (): CompositionSeed =>
  composition({
    durationMs: DAY,
    tracks: [0, 1].map((t) => ({
      ...base.tracks[0],
      name: `Track ${t + 1}`,
      collections: Array.from({ length: 4 }, (_, c) => ({ ...base.tracks[0].collections[c % 2], name: `Step ${t}.${c}` })),
    })),
  });

const flat = (data: RunData, played: number) =>
  data.at(played).map((t) => ({ count: t.count, errors: t.errors, errorsByText: t.errorsByText, histogram: [...t.histogram] }));

describe('the first read of a long run', () => {
  it('folds its minutes in slices, the event loop turning between them', async () => {
    // A token that outlives the day.
    const seeded = seed([longRun()], 2);
    const { app, clock } = await makeApp({ ...seeded, tokens: [{ token: TEST_TOKEN, userName: TEST_USER.userName, neverExpires: true }] });
    apps.push(app);
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(DAY + 60_000);
    const resultId = (await read(app, id)).resultid;
    const { value: res, turns } = await turnsDuring(() => authed(app, { url: `${RESULTS}/${resultId}/clip-element` }));
    expect(res.statusCode).toBe(200);
    // Folded at once, the read had held the loop for the whole fold (0-2 turns).
    expect(turns).toBeGreaterThan(10);
    const folded = res.json().elementTypes[0].metrics;
    expect(folded.count).toBeGreaterThan(0);
    // Kept: the next read folds nothing, and answers the same.
    const again = await turnsDuring(() => authed(app, { url: `${RESULTS}/${resultId}/clip-element` }));
    expect(again.value.json().elementTypes[0].metrics).toEqual(folded);
    expect(again.turns).toBeLessThan(turns);
  });
});

describe('a fold in slices', () => {
  const comp = Value.Default(CompositionSeedSchema, composition({ durationMs: 3_600_000 })) as CompositionSeed;
  const key = { seed: 7, run: 1, errorFactor: 1 };

  it('gives the totals a read folding at once gives, read between slices or after, and afresh for an earlier time', () => {
    const sliced = new RunData(comp, key);
    const work = sliced.fold(40 * MINUTE_MS + 5000);
    // Half done: a read now folds the rest itself.
    for (let i = 0; i < 41; i++) work.next();
    expect(flat(sliced, 30 * MINUTE_MS + 1234)).toEqual(flat(new RunData(comp, key), 30 * MINUTE_MS + 1234));
    while (!work.next().done);
    expect(flat(sliced, 40 * MINUTE_MS + 5000)).toEqual(flat(new RunData(comp, key), 40 * MINUTE_MS + 5000));
    // An earlier time: the fold starts afresh, and later reads still agree.
    for (const step = sliced.fold(10 * MINUTE_MS); !step.next().done; );
    expect(flat(sliced, 10 * MINUTE_MS)).toEqual(flat(new RunData(comp, key), 10 * MINUTE_MS));
    expect(flat(sliced, 50 * MINUTE_MS)).toEqual(flat(new RunData(comp, key), 50 * MINUTE_MS));
  });
});
