import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp } from '../helpers/app.js';
import type { ResultRecord } from '../../src/compositions/schemas.js';
import { CONTROL, RESULTS, authed, create, seed } from './seed.js';

let apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

/** A result written by hand in a fixture: no composition instance in the state. */
const handWritten = (extra: Partial<ResultRecord> = {}): ResultRecord => ({
  id: 4001,
  name: 'Nightly 1',
  description: 'written by hand',
  instanceID: 'hand-written',
  compositionId: 301,
  run: 1,
  ...extra,
});

async function withResult(result: ResultRecord) {
  const made = await makeApp({ ...seed(), results: [result] });
  apps.push(made.app);
  return made;
}

const readResult = async (app: FastifyInstance) => {
  const res = await authed(app, { url: `${RESULTS}/4001` });
  expect(res.statusCode).toBe(200);
  return res.json();
};

describe('a result written by hand in a fixture', () => {
  it('is a whole run of its composition that ended when the state loaded, the same at every read', async () => {
    const { app, clock } = await withResult(handWritten());
    const first = await readResult(app);
    expect(first).toMatchObject({
      status: 'Completed',
      startTime: new Date(T0 - 60_000).toISOString(),
      endTime: new Date(T0).toISOString(),
      duration: 60_000,
      virtualUsers: 100,
    });
    clock.advance(3_600_000);
    expect(await readResult(app)).toEqual(first);
    const list = (await authed(app, { url: RESULTS })).json();
    expect(list.results).toEqual([first]);
  });

  it('starts at its startedAt when the fixture gives one, and its messages are those of the whole run', async () => {
    const startedAt = T0 - 86_400_000;
    const { app, clock } = await withResult(handWritten({ startedAt }));
    const first = await readResult(app);
    expect(first).toMatchObject({ status: 'Completed', startTime: new Date(startedAt).toISOString(), endTime: new Date(startedAt + 60_000).toISOString(), duration: 60_000 });
    const messages = (await authed(app, { url: `${RESULTS}/4001/clip-element` })).json();
    clock.advance(120_000);
    expect(await readResult(app)).toEqual(first);
    expect((await authed(app, { url: `${RESULTS}/4001/clip-element` })).json()).toEqual(messages);
  });

  it('keeps its times in an export, which loads back to the same answers', async () => {
    const { app, clock } = await withResult(handWritten());
    const first = await readResult(app);
    const exported = (await app.inject({ url: `${CONTROL}/state` })).json();
    expect(exported.results).toEqual([{ ...handWritten(), startedAt: T0 - 60_000 }]);
    clock.advance(600_000);
    const put = await app.inject({ method: 'PUT', url: `${CONTROL}/state`, payload: exported });
    expect(put.statusCode).toBe(200);
    expect(await readResult(app)).toEqual(first);
  });

  it('may not give startedAt when its composition instance is in the state: the steps give its times', async () => {
    const { app } = await withResult(handWritten());
    expect((await create(app, 'play')).statusCode).toBe(200);
    const state = (await app.inject({ url: `${CONTROL}/state` })).json();
    const played = state.results.find((r: ResultRecord) => r.instanceID !== 'hand-written');
    const before = (await authed(app, { url: `${RESULTS}/${played.id}` })).json();
    played.startedAt = T0;
    const put = await app.inject({ method: 'PUT', url: `${CONTROL}/state`, payload: state });
    expect(put.statusCode).toBe(400);
    expect(put.json().message).toContain(`startedAt: composition instance '${played.instanceID}' is in the state, and its steps give the result's times: leave startedAt out`);
    // Refused: the state is the one before.
    expect((await authed(app, { url: `${RESULTS}/${played.id}` })).json()).toEqual(before);
  });
});
