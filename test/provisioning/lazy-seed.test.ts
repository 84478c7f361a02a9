import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import type { ProvisioningStore } from '../../src/provisioning/store.js';
import { get, grid, rsdb, seed } from './seed.js';

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
