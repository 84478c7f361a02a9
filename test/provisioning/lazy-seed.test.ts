import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import type { ProvisioningStore } from '../../src/provisioning/store.js';
import { act, get, grid, rsdb, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const store = (): ProvisioningStore => app.world.stores.provisioning;

/** A seed whose grids start on load (2 of 3), 3 servers each, and an RSDB started on load. */
const started = () =>
  seed({
    grids: [grid({ id: 101, startedAgoMs: 3_000 }), grid({ id: 102, startedAgoMs: 60_000 }), grid({ id: 103, name: 'Idle' })],
    rsdbs: [rsdb({ startedAgoMs: 1_000 })],
  });

describe('the seed started on load, made on first use', () => {
  it('a reset builds no deployment until something reads the store, and counts it all the same', async () => {
    ({ app, clock } = await makeApp(started()));
    expect(store().built).toBe(false);
    const counts = app.world.counts();
    expect(counts).toMatchObject({ grids: 3, cloudServers: 6, rsdbs: 1 });
    // The health check and the reset answer read the counts only.
    expect((await app.inject({ method: 'GET', url: '/_emulator/health' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).json().counts).toEqual(counts);
    expect(store().built).toBe(false);
    expect((await get(app, `/cloudserver/`)).body).toHaveLength(6);
    expect(store().built).toBe(true);
    expect(app.world.counts()).toEqual(counts);
  });

  it('reads the same, whenever it is first read, as a store made at once: the starts are dated from the load', async () => {
    ({ app, clock } = await makeApp(started()));
    // Made at once: read right after the load.
    const eager = await makeApp(started());
    try {
      const readAll = async (a: FastifyInstance) => ({
        grids: (await get(a, `/grid/`)).body,
        servers: (await get(a, `/cloudserver/`)).body,
        rsdb: (await get(a, `/rsdb/${rsdb().id}`)).body,
        lifecycles: (await a.inject({ method: 'GET', url: '/_emulator/lifecycles' })).json(),
      });
      expect(eager.app.world.stores.provisioning.built).toBe(false);
      void (await get(eager.app, `/grid/101`));
      expect(eager.app.world.stores.provisioning.built).toBe(true);
      // Both clocks move on; only then is the lazy one read for the first time.
      clock.advanceTo(T0 + 20_000);
      eager.clock.advanceTo(T0 + 20_000);
      expect(store().built).toBe(false);
      const lazy = await readAll(app);
      expect(lazy).toEqual(await readAll(eager.app));
      // The two grids started on load (the third never was), settled by now.
      expect(lazy.grids.map((g: { state: string }) => g.state)).toEqual(['CHECKED', 'CHECKED']);
    } finally {
      await eager.app.close();
    }
  });
});

describe('each grid the seed starts on load, started on the first read of that grid', () => {
  /** Three grids started on load (3 servers each: 58201-58209, in seed order), one never started. */
  const fourGrids = () =>
    seed({
      grids: [
        grid({ id: 101, startedAgoMs: 3_000 }),
        grid({ id: 102, startedAgoMs: 60_000, nextStartOutcome: 'ALLOCATE_FAILED' }),
        grid({ id: 103, name: 'Idle' }),
        grid({ id: 104, startedAgoMs: 10_000, startOutcome: 'CHECKED_WITH_FAILURES' }),
      ],
    });

  it('a read of one grid makes that grid deployment only; a list makes the rest', async () => {
    ({ app, clock } = await makeApp(fourGrids()));
    expect((await get(app, '/grid/104')).status).toBe(200);
    expect(store().unstartedGrids).toBe(2);
    // The counts include the servers of the starts still to be made.
    expect(app.world.counts()).toMatchObject({ grids: 4, cloudServers: 9 });
    expect((await get(app, '/cloudserver/58205')).body.id).toBe(58205);
    expect(store().unstartedGrids).toBe(1);
    expect((await get(app, '/cloudserver/')).body.map((s: { id: number }) => s.id)).toEqual([58201, 58202, 58203, 58204, 58205, 58206, 58207, 58208, 58209]);
    expect(store().unstartedGrids).toBe(0);
  });

  it('answers the same whatever the order of the reads and actions: ids, states, journals, lists, export, counts', async () => {
    const play = async (a: FastifyInstance, c: TestApp['clock'], firstRead: string) => {
      // The one store lists everything first (every start made at once), the other reads a
      // server of the last started grid first, then starts a grid, then the others.
      void (await get(a, firstRead));
      c.advanceTo(T0 + 20_000);
      const server = (await get(a, '/cloudserver/58208')).body;
      const started = (await act(a, '/grid/103', 'start')).body;
      const restarted = (await act(a, '/grid/102', 'start')).body;
      const terminated = (await act(a, '/cloudserver/58202', 'terminate')).body;
      c.advanceTo(T0 + 40_000);
      const grids = [];
      for (const id of [104, 103, 102, 101]) grids.push((await get(a, `/grid/${id}`)).body);
      return {
        server,
        started,
        restarted,
        terminated,
        grids,
        list: (await get(a, '/grid/')).body,
        servers: (await get(a, '/cloudserver/')).body,
        lifecycles: (await a.inject({ method: 'GET', url: '/_emulator/lifecycles' })).json(),
        export: (a.world.stores.provisioning as ProvisioningStore).export(),
        counts: a.world.counts(),
      };
    };
    ({ app, clock } = await makeApp(fourGrids()));
    const eager = await makeApp(fourGrids());
    try {
      const lazy = await play(app, clock, '/grid/104');
      const atOnce = await play(eager.app, eager.clock, '/grid/');
      expect(lazy).toEqual(atOnce);
      // The seed start of 102 kept its chosen outcome for the next start, which took the ids after the seed's and 103's.
      expect(lazy.restarted.state).toBe('ALLOCATING');
      expect(lazy.export.grids.find((g) => g.id === 102)!.deployment!.cloudServerIds).toEqual([58213, 58214, 58215]);
      expect(lazy.export.cloudServers.map((s) => s.id)).toEqual(Array.from({ length: 15 }, (_, i) => 58201 + i));
    } finally {
      await eager.app.close();
    }
  });
});
