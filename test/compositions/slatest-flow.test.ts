import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp, type TestApp } from '../helpers/app.js';

const REST = '/concerto/services/rest';
const GRID_NAME = 'Load Test Grid - US East';
const COMPS_PATH = '/Tests/Checkout Load';

type Container = { containerType: string; flattenedHierarchy: string; metrics: Record<string, number> & { percentiles: Array<{ value: number }> } };

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

/**
 * The steps of SLATest-Code's ct-api/Main.py, in its order, with its requests, its sleeps (as
 * clock advances) and its reading of every answer; SLA_ERRORS is lowered so that its
 * stop-on-errors branch runs.
 */
describe('the SLATest-style flow over HTTP on a manual clock', () => {
  it('logs in, starts the grid, loads, plays, polls, stops on errors, terminates, exports the results', async () => {
    ({ app, clock } = await makeDemoApp());
    const sleep = (s: number) => clock.advance(s * 1000);
    const SLA_ERRORS = 0.1;
    const CHECK_ERROR_DURATION = 300;
    const MAX_RETRY_DELAY = 30;

    // Authenticate.UpdateTenantToken
    const login = await app.inject({ method: 'PUT', url: `${REST}/RepositoryService/v1/Tokens`, payload: { userName: 'demo@example.com', password: 'demo', tenant: 'Default' } });
    expect(login.statusCode).toBe(200);
    const header = { 'content-type': 'application/json', 'x-auth-token': login.json().token as string };

    // Get Grid Id (requests encodes the spaces of the name)
    const found = await app.inject({ url: `${REST}/RepositoryService/v1/Objects/grid?name=${encodeURIComponent(GRID_NAME)}`, headers: header });
    const gridId = String(found.json().objects[0].id);
    sleep(10);

    // Start the Grid, then poll for CHECKED every 30 s
    const started = await app.inject({ method: 'POST', url: `${REST}/CloudService/v1/grid/${gridId}/action`, headers: header, payload: { action: 'start' } });
    expect(started.statusCode).toBeLessThan(300);
    let gridState = '';
    for (let x = 0; x < 60; x++) {
      gridState = String((await app.inject({ url: `${REST}/CloudService/v1/grid/${gridId}`, headers: header })).json().state);
      if (gridState === 'CHECKED') break;
      sleep(MAX_RETRY_DELAY);
    }
    expect(gridState).toBe('CHECKED');
    sleep(10);

    // Load the composition
    const loaded = await app.inject({ method: 'POST', url: `${REST}/composition/instances/v1?command=load`, headers: header, payload: { compositionName: COMPS_PATH } });
    expect(loaded.statusCode).toBe(200);
    let instanceId = String(loaded.json().instanceID);
    sleep(5);

    // Play the loaded composition
    const played = await app.inject({ method: 'PUT', url: `${REST}/composition/instances/v1/${instanceId}?command=play`, headers: header, payload: { compositionName: COMPS_PATH } });
    expect(played.statusCode).toBe(200);
    instanceId = String(played.json().instanceID);

    // Poll the instance until Unloaded; after 300 s, check errors against the SLA and stop
    sleep(MAX_RETRY_DELAY);
    let play = true;
    let stopped = false;
    const seen = new Set<string>();
    const errorLines: string[] = [];
    let polls = 0;
    while (play && polls++ < 200) {
      const instance = (await app.inject({ url: `${REST}/composition/instances/v1/${instanceId}`, headers: header })).json();
      const state = String(instance.state);
      seen.add(state);
      if (state === 'Unloaded') break;
      const resultsId = String(instance.resultid);
      const totalTime = Number.parseInt(String(instance.totalTime), 10) / 1000;
      if (totalTime > CHECK_ERROR_DURATION) {
        const element = (await app.inject({ url: `${REST}/Results/v1/${resultsId}/clip-element?elementType=message`, headers: header })).json();
        const totalCount = element.elementTypes[0].metrics.count as number;
        const totalErrors = element.elementTypes[0].metrics.errors as number;
        const errorPercentage = (totalErrors / totalCount) * 100;
        expect(totalCount).toBeGreaterThan(0);
        if (errorPercentage > SLA_ERRORS) {
          play = false;
          const stop = await app.inject({ method: 'PUT', url: `${REST}/composition/instances/v1/${instanceId}?command=stop`, headers: header, payload: { compositionName: COMPS_PATH } });
          expect(stop.statusCode).toBe(200);
          stopped = true;
          const byError = (await app.inject({ url: `${REST}/Results/v1/${resultsId}/clip-element?groupBy=error`, headers: header })).json();
          for (const item of byError.errors as Array<Record<string, unknown>>) {
            for (const value of Object.values(item)) {
              if (Array.isArray(value) && item.error !== 'No Error') errorLines.push(`${item.error} -> ${value[0].metrics.errors}`);
            }
          }
        }
      }
      sleep(MAX_RETRY_DELAY);
    }
    expect(stopped).toBe(true);
    expect(seen.has('Playing')).toBe(true);
    expect(errorLines.length).toBeGreaterThan(0);
    expect(errorLines.join('\n')).toMatch(/HTTP 50[34] .* -> [1-9]/);
    sleep(5);

    // Terminate the Grid
    const terminated = await app.inject({ method: 'POST', url: `${REST}/CloudService/v1/grid/${gridId}/action`, headers: header, payload: { action: 'terminate' } });
    expect(terminated.statusCode).toBeLessThan(300);
    sleep(10);

    // Pull all results for the composition (urllib.parse.quote keeps the slashes)
    const list = (await app.inject({ url: `${REST}/Results/v1?composition=${encodeURIComponent(COMPS_PATH).replace(/%2F/g, '/')}`, headers: header })).json();
    const latestResultId = String(list.results[0].id);
    const exportFileName = `${list.results[0].name}.csv`;
    expect(exportFileName).toMatch(/^Checkout Load .*\.csv$/);

    // Metrics for the result, read as Main.py reads them
    const collection = (
      await app.inject({ url: `${REST}/Results/v1/${latestResultId}/collection?percentile=90&percentile=95&percentile=99&groupBy=flattenedHierarchy`, headers: header })
    ).json() as Record<string, unknown>;
    const rows: unknown[][] = [];
    for (const value of Object.values(collection)) {
      for (const trans of value as Container[]) {
        if (trans.containerType !== 'transaction') continue;
        const m = trans.metrics;
        const name = String(trans.flattenedHierarchy).split('/').at(-1);
        const count = m.started;
        const tMin = 'minEffectiveDuration' in m ? (m.minEffectiveDuration / 1000).toFixed(2) : 0;
        const tAvg = count <= 0 ? 0 : 'effectiveDuration' in m ? m.effectiveDuration / count : 0;
        const seconds = (ms: number) => (ms / 1000).toFixed(2);
        const p90 = seconds(m.percentiles[0].value);
        rows.push([name, count, tMin, seconds(tAvg), seconds(m.maxEffectiveDuration), p90, seconds(m.effectiveDurationStandardOfDeviation)]);
      }
    }
    expect(rows.map((r) => r[0])).toEqual(['Login', 'Add to Cart', 'Checkout']);
    for (const r of rows) expect(r[1] as number).toBeGreaterThan(0);
  });
});
