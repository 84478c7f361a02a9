import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { RESULTS, act, authed, composition, create, read, seed } from './seed.js';

let apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

async function fresh(compositions = [composition()]): Promise<TestApp> {
  const made = await makeApp(seed(compositions, 4));
  apps.push(made.app);
  return made;
}

const get = async (app: FastifyInstance, url: string) => {
  const res = await authed(app, { url });
  expect(res.statusCode, url).toBe(200);
  return res.json();
};

/** Everything a client can read of a result. */
async function readAll(app: FastifyInstance, id: number) {
  return {
    result: await get(app, `${RESULTS}/${id}`),
    messages: await get(app, `${RESULTS}/${id}/clip-element?elementType=message`),
    byName: await get(app, `${RESULTS}/${id}/clip-element?groupBy=elementName`),
    errors: await get(app, `${RESULTS}/${id}/clip-element?groupBy=error`),
    collection: await get(app, `${RESULTS}/${id}/collection?percentile=50&percentile=90&percentile=95&percentile=99&groupBy=flattenedHierarchy`),
    byType: await get(app, `${RESULTS}/${id}/collection?percentile=90&groupBy=containerType`),
  };
}

/** The same commands at the same emulated times. */
async function script({ app, clock }: TestApp): Promise<number> {
  const id = (await create(app, 'play')).json().instanceID;
  clock.advance(2000 + 25_000);
  await act(app, id, 'pause');
  clock.advance(7000);
  await act(app, id, 'resume');
  clock.advance(1000 + 12_345);
  return (await read(app, id)).resultid;
}

describe('generated results', () => {
  it('are the same for the same seed, commands and emulated times, and differ for another seed', async () => {
    const a = await fresh();
    const b = await fresh();
    const c = await fresh([composition({ seed: 8 })]);
    const [ra, rb, rc] = [await script(a), await script(b), await script(c)];
    const [da, db, dc] = [await readAll(a.app, ra), await readAll(b.app, rb), await readAll(c.app, rc)];
    expect(db).toEqual(da);
    expect(dc.collection).not.toEqual(da.collection);
    expect(da.messages.elementTypes[0].metrics.count).toBeGreaterThan(0);
  });

  it('grow while the composition plays, and agree with each other at every read', async () => {
    const { app, clock } = await fresh();
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(2000);
    let last = 0;
    for (let step = 0; step < 7; step++) {
      clock.advance(7_777);
      const resultid = (await read(app, id)).resultid;
      const all = await readAll(app, resultid);
      const m = all.messages.elementTypes[0].metrics;
      expect(m.count).toBeGreaterThan(last);
      last = m.count;
      // Messages: each execution of a collection sends its messages; each failed one, one failing message.
      const [login, home] = all.collection.collections;
      expect(login).toMatchObject({ containerType: 'transaction', flattenedHierarchy: 'Unit Load/Track 1/Clip A/Login' });
      expect(home).toMatchObject({ containerType: 'page', flattenedHierarchy: 'Unit Load/Track 1/Clip A/Home' });
      expect(m.count).toBe(login.metrics.started * 2 + home.metrics.started * 5);
      expect(m.errors).toBe(login.metrics.failed + home.metrics.failed);
      expect(home.metrics.failed).toBe(0);
      const byName = all.byName.elementNames.map((e: { metrics: { count: number } }) => e.metrics.count);
      expect(byName).toEqual([login.metrics.started * 2, home.metrics.started * 5]);
      // By error: "No Error" and every message, summing to the total.
      const errors = all.errors.errors as Array<{ error: string; elementTypes: Array<{ metrics: { count: number; errors: number } }> }>;
      expect(errors[0].error).toBe('No Error');
      expect(errors.reduce((n, e) => n + e.elementTypes[0].metrics.count, 0)).toBe(m.count);
      expect(errors.slice(1).reduce((n, e) => n + e.elementTypes[0].metrics.errors, 0)).toBe(m.errors);
      if (m.errors) expect(errors[1].error).toBe('HTTP 503 Service Unavailable');
      for (const entry of all.collection.collections) {
        const t = entry.metrics;
        expect(t.completed + t.failed).toBe(t.started);
        expect(t.minEffectiveDuration).toBeLessThanOrEqual(t.averageEffectiveDuration);
        expect(t.averageEffectiveDuration).toBeLessThanOrEqual(t.maxEffectiveDuration);
        expect(Math.abs(t.averageEffectiveDuration * t.started - t.effectiveDuration)).toBeLessThan(t.started * 0.01 + 1);
        const values = t.percentiles.map((p: { value: number }) => p.value);
        expect(t.percentiles.map((p: { percentile: number }) => p.percentile)).toEqual([50, 90, 95, 99]);
        expect([...values].sort((x, y) => x - y)).toEqual(values);
        expect(values[0]).toBeGreaterThanOrEqual(t.minEffectiveDuration);
        expect(values[3]).toBeLessThanOrEqual(t.maxEffectiveDuration);
        expect(t.effectiveDurationStandardOfDeviation).toBeGreaterThan(0);
      }
      // The median sits near the model's (200 ms and 400 ms, a little more under load).
      expect(login.metrics.percentiles[0].value).toBeGreaterThan(150);
      expect(login.metrics.percentiles[0].value).toBeLessThan(320);
      expect(home.metrics.percentiles[0].value).toBeGreaterThan(300);
      expect(home.metrics.percentiles[0].value).toBeLessThan(640);
      // By container type: one entry per type, with the same counts.
      expect(all.byType.collections.map((e: { containerType: string; metrics: { started: number } }) => [e.containerType, e.metrics.started])).toEqual([
        ['page', home.metrics.started],
        ['transaction', login.metrics.started],
      ]);
    }
    // After the run the numbers stay as they were when the play ended.
    clock.advance(120_000);
    const resultid = (await read(app, id)).resultid;
    const done = await readAll(app, resultid);
    clock.advance(600_000);
    expect(await readAll(app, resultid)).toEqual(done);
    expect(done.result).toMatchObject({ status: 'Completed', duration: 60_000, virtualUsers: 100 });
  });

  it('the error rate follows the model: about 5 % of Login fails', async () => {
    const { app, clock } = await fresh();
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(200_000);
    const resultid = (await read(app, id)).resultid;
    const login = (await get(app, `${RESULTS}/${resultid}/collection`)).collections[0].metrics;
    expect(login.percentiles).toEqual([]);
    expect(login.failed / login.started).toBeGreaterThan(0.03);
    expect(login.failed / login.started).toBeLessThan(0.08);
  });

  it('are listed newest first, by composition and by name, and appear as repository objects', async () => {
    const other = composition({ id: 302, path: '/Tests/Other Load' });
    const { app, clock } = await fresh([composition(), other]);
    await create(app, 'play', '/Tests/Unit Load', { resultName: 'first' });
    clock.advance(1000);
    await create(app, 'play', '/Tests/Other Load', { resultName: 'other' });
    clock.advance(1000);
    const third = (await create(app, 'play', '/Tests/Unit Load')).json().instanceID;
    const unit = (await get(app, `${RESULTS}?composition=${encodeURIComponent('/Tests/Unit Load')}`)).results;
    expect(unit.map((r: { name: string }) => r.name)).toEqual(['Unit Load (2026-11-22 09.00.02)', 'first']);
    expect(unit[0]).toMatchObject({ instanceID: third, status: 'Running', compositionName: '/Tests/Unit Load', startTime: '2026-11-22T09:00:03.000Z' });
    expect((await get(app, RESULTS)).results).toHaveLength(3);
    expect((await get(app, `${RESULTS}?name=other`)).results.map((r: { id: number }) => r.id)).toEqual([unit[0].id - 1]);
    const objects = (await get(app, '/concerto/services/rest/RepositoryService/v1/Objects/result?name=first')).objects;
    expect(objects).toEqual([expect.objectContaining({ id: unit[1].id, name: 'first', type: 'result', attributes: [{ name: 'path', value: '/Tests/Unit Load' }] })]);
    const compositions = (await get(app, '/concerto/services/rest/RepositoryService/v1/Objects/composition')).objects as Array<{ id: number; name: string }>;
    expect(compositions.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: 301, name: 'Unit Load' },
      { id: 302, name: 'Other Load' },
    ]);
    // Filtered by an attribute, as any object.
    const byPath = (await get(app, '/concerto/services/rest/RepositoryService/v1/Objects/composition?path=/Tests/Other%20Load')).objects as Array<{ id: number }>;
    expect(byPath.map((o) => o.id)).toEqual([302]);
  });

  it('refuses what it cannot answer, and deletes a result whose run has ended', async () => {
    const { app, clock } = await fresh();
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(5000);
    const resultid = (await read(app, id)).resultid;
    const bad = async (url: string, status: number, message: string) => {
      const res = await authed(app, { url });
      expect(res.statusCode, url).toBe(status);
      expect(res.json().message).toBe(message);
    };
    await bad(`${RESULTS}/abc`, 400, "result id 'abc' is not an integer");
    await bad(`${RESULTS}/99`, 404, 'no result 99');
    await bad(`${RESULTS}/${resultid}/collection?percentile=0`, 400, "percentile '0' is not a number in (0, 100]");
    await bad(`${RESULTS}/${resultid}/collection?percentile=101`, 400, "percentile '101' is not a number in (0, 100]");
    await bad(`${RESULTS}/${resultid}/collection?percentile=x`, 400, "percentile 'x' is not a number in (0, 100]");
    await bad(`${RESULTS}/${resultid}/collection?${'percentile=1&'.repeat(11)}`, 400, 'at most 10 percentile parameters, got 11');
    await bad(`${RESULTS}/${resultid}/collection?groupBy=location`, 400, "groupBy 'location' is not supported: use flattenedHierarchy or containerType");
    await bad(`${RESULTS}/${resultid}/clip-element?elementType=delay`, 400, "elementType 'delay' is not supported: use message");
    await bad(`${RESULTS}/${resultid}/clip-element?groupBy=location`, 400, "groupBy 'location' is not supported: use elementType or elementName or error");
    const early = await authed(app, { method: 'DELETE', url: `${RESULTS}/${resultid}` });
    expect(early.json().message).toBe(`result ${resultid} is still being written by composition instance '${id}': stop or abort it first`);
    await act(app, id, 'abort');
    clock.advance(10_000);
    expect((await authed(app, { method: 'DELETE', url: `${RESULTS}/${resultid}` })).statusCode).toBe(204);
    await bad(`${RESULTS}/${resultid}`, 404, `no result ${resultid}`);
    expect((await authed(app, { url: `/concerto/services/rest/composition/instances/v1/${id}` })).statusCode).toBe(404);
  });
});
