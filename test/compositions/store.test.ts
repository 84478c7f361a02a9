import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DomainError } from '../../src/core/errors.js';
import { CompositionStore, MAX_INSTANCES, MAX_RESULTS, type GridCapacity } from '../../src/compositions/store.js';
import { CompositionSeedSchema } from '../../src/compositions/schemas.js';
import { Value } from '@sinclair/typebox/value';
import { T0 } from '../helpers/app.js';
import { composition } from './seed.js';

/** A store on a grid of `servers` running load generators, through the port alone. */
function storeOn(servers: number) {
  const clock = new ManualClock(T0);
  const grid: GridCapacity = { id: 1, name: 'G', state: 'CHECKED', loadServerIds: Array.from({ length: servers }, (_, i) => i + 1), startedAt: T0 - 1000 };
  const comp = Value.Default(CompositionSeedSchema, composition()) as ReturnType<typeof composition>;
  const ports = { grids: { grids: () => [grid], grid: () => grid } };
  const store = new CompositionStore({ compositions: [comp], compositionInstances: [], results: [] }, clock, ports, 1);
  return { store, clock };
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? `${err.kind}: ${err.message}` : String(err);
  }
  return 'no refusal';
};

describe('the bounds on what requests make grow', () => {
  it(`keeps at most ${MAX_INSTANCES} instances, dropping the oldest unloaded one that wrote no result`, () => {
    const { store } = storeOn(2);
    const first = store.create('load', { compositionName: '/Tests/Unit Load' }).instanceID;
    store.command(first, 'unload', {});
    for (let i = 1; i < MAX_INSTANCES; i++) store.command(store.create('load', { compositionName: '/Tests/Unit Load' }).instanceID, 'unload', {});
    expect(store.counts().compositionInstances).toBe(MAX_INSTANCES);
    store.create('load', { compositionName: '/Tests/Unit Load' });
    expect(store.counts().compositionInstances).toBe(MAX_INSTANCES);
    expect(refusal(() => store.get(first))).toBe(`not-found: no composition instance '${first}'`);
  });

  it(`refuses a play past ${MAX_RESULTS} results (each holds its instance), and a refused play changes nothing`, () => {
    const { store, clock } = storeOn(MAX_RESULTS + 1);
    for (let i = 0; i < MAX_RESULTS; i++) store.create('play', { compositionName: '/Tests/Unit Load' });
    clock.advance(1000);
    const before = store.export();
    expect(refusal(() => store.create('play', { compositionName: '/Tests/Unit Load' }))).toBe(`conflict: ${MAX_INSTANCES} composition instances exist: unload some first`);
    expect(refusal(() => store.create('load', { compositionName: '/Tests/Unit Load' }))).toBe(`conflict: ${MAX_INSTANCES} composition instances exist: unload some first`);
    expect(store.export()).toEqual(before);
  });
});
