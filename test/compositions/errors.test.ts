import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { CLOUD, INSTANCES, RESULTS, act, authed, composition, create, read, seed } from './seed.js';
import { grid, template } from '../provisioning/seed.js';
import { authSeed } from '../helpers/app.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const NOT_ENOUGH = 'There are not enough Load Servers available for Tracks in the Composition.';
const error = (statusCode: number, message: string) => ({
  statusCode,
  error: { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed' }[statusCode],
  message,
});

describe('loading needs a grid in a final checked state with enough free load servers', () => {
  it('refuses with the real message when no grid was started, while one deploys, when it is too small, and when its servers are held', async () => {
    const big = composition({ id: 302, path: '/Tests/Big', tracks: [{ ...composition().tracks[0], loadServers: 2 }, { ...composition().tracks[0], name: 'Track 2', loadServers: 1 }] });
    ({ app, clock } = await makeApp({ ...authSeed(), grids: [grid({ servers: [template({ count: 2 })] })], compositions: [composition(), big] }));
    const refused = await create(app, 'load');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(error(400, NOT_ENOUGH));

    await authed(app, { method: 'POST', url: `${CLOUD}/grid/101/action`, payload: { action: 'start' } });
    clock.advance(5000); // ALLOCATING
    expect((await create(app, 'load')).json()).toEqual(error(400, NOT_ENOUGH));
    clock.advance(60_000); // CHECKED
    expect((await authed(app, { url: `${CLOUD}/grid/101` })).json().state).toBe('CHECKED');

    // Three load servers asked of a grid of two.
    expect((await create(app, 'load', '/Tests/Big')).json()).toEqual(error(400, NOT_ENOUGH));
    const first = await create(app, 'load');
    const second = await create(app, 'load');
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    // Both servers are held now; an unload frees one.
    expect((await create(app, 'load')).json()).toEqual(error(400, NOT_ENOUGH));
    clock.advance(1000);
    await act(app, first.json().instanceID, 'unload');
    expect((await create(app, 'load')).statusCode).toBe(200);
    const one = await read(app, second.json().instanceID);
    expect(one).toMatchObject({ maestroCount: 1, partiallyLoaded: false, compositionName: 'Unit Load', path: '/Tests' });
  });

  it('an unknown composition is a 404; a bad command or body a 400; an unknown instance a 404; no token a 401', async () => {
    ({ app, clock } = await makeApp(seed()));
    expect((await create(app, 'load', '/Tests/Nothing')).json()).toEqual(error(404, "no composition '/Tests/Nothing'"));
    const noName = await authed(app, { method: 'POST', url: `${INSTANCES}?command=load`, payload: {} });
    expect(noName.json()).toEqual(error(400, "body: missing required field 'compositionName' (the composition's full path name)"));
    const noCommand = await authed(app, { method: 'POST', url: INSTANCES, payload: { compositionName: '/Tests/Unit Load' } });
    expect(noCommand.json()).toEqual(error(400, "query parameter 'command' is required: use load, play"));
    const badCommand = await authed(app, { method: 'POST', url: `${INSTANCES}?command=stop`, payload: { compositionName: '/Tests/Unit Load' } });
    expect(badCommand.json()).toEqual(error(400, "unknown command 'stop': use load, play"));
    const unknownField = await authed(app, { method: 'POST', url: `${INSTANCES}?command=load`, payload: { compositionName: '/Tests/Unit Load', colour: 1 } });
    expect(unknownField.json()).toEqual(error(400, "body: unknown field 'colour'"));
    expect((await act(app, 'nope', 'play')).json()).toEqual(error(404, "no composition instance 'nope'"));
    expect((await authed(app, { url: `${INSTANCES}/nope` })).json()).toEqual(error(404, "no composition instance 'nope'"));
    const id = (await create(app, 'load')).json().instanceID;
    expect((await act(app, id, 'jump')).json()).toEqual(error(400, "unknown command 'jump': use play, stop, abort, pause, resume, unload"));
    expect((await act(app, id, 'play', { compositionName: '/Tests/Other' })).json()).toEqual(
      error(400, `composition instance '${id}' is of '/Tests/Unit Load', not of '/Tests/Other'`),
    );
    // A command without a body is taken as one with an empty body.
    expect((await authed(app, { method: 'PUT', url: `${INSTANCES}/${id}?command=unload` })).statusCode).toBe(200);
    const anonymous = await app.inject({ method: 'POST', url: `${INSTANCES}?command=load`, payload: { compositionName: '/Tests/Unit Load' } });
    expect(anonymous.statusCode).toBe(401);
    expect((await app.inject({ url: RESULTS })).statusCode).toBe(401);
    const deleted = await authed(app, { method: 'DELETE', url: `${INSTANCES}/${id}` });
    expect(deleted.statusCode).toBe(405);
    expect(deleted.headers.allow).toBe('GET, PUT, HEAD');
  });

  it('a taken result name is refused, and nothing is created', async () => {
    ({ app, clock } = await makeApp(seed()));
    expect((await create(app, 'play', '/Tests/Unit Load', { resultName: 'Nightly' })).statusCode).toBe(200);
    const again = await create(app, 'play', '/Tests/Unit Load', { resultName: 'Nightly' });
    expect(again.json()).toEqual(error(400, "a result named 'Nightly' already exists"));
    expect((await authed(app, { url: INSTANCES })).json().instances).toHaveLength(1);
  });
});

describe('the grid under a composition', () => {
  it('terminating it fails a playing run at that moment, with a status saying why; the result is Failed', async () => {
    ({ app, clock } = await makeApp(seed()));
    const id = (await create(app, 'play', '/Tests/Unit Load', { resultName: 'Cut short', description: 'grid goes away' })).json().instanceID;
    clock.advance(2000 + 30_000);
    const playing = await read(app, id);
    expect(playing.state).toBe('Playing');
    expect((await authed(app, { method: 'POST', url: `${CLOUD}/grid/101/action`, payload: { action: 'terminate' } })).statusCode).toBe(202);
    clock.advance(100);
    const failed = await read(app, id);
    expect(failed).toMatchObject({
      state: 'Failed',
      totalTime: 30_000,
      status: "The grid 'Test Grid' was terminated while the composition was Playing: the composition failed.",
    });
    clock.advance(1000);
    expect(await read(app, id)).toMatchObject({ state: 'Unloaded', totalTime: 30_000 });
    const result = (await authed(app, { url: `${RESULTS}/${playing.resultid}` })).json();
    expect(result).toMatchObject({ name: 'Cut short', description: 'grid goes away', status: 'Failed', duration: 30_000, compositionName: '/Tests/Unit Load' });
    // Commands after the failure are refused.
    expect((await act(app, id, 'resume')).statusCode).toBe(400);
  });

  it('a run that had already ended is left as it was', async () => {
    ({ app, clock } = await makeApp(seed()));
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(2000 + 60_000 + 2000);
    expect((await read(app, id)).state).toBe('Completed');
    await authed(app, { method: 'POST', url: `${CLOUD}/grid/101/action`, payload: { action: 'terminate' } });
    clock.advance(5000);
    const done = await read(app, id);
    expect(done).toMatchObject({ state: 'Unloaded', status: 'Unloaded; the run ended Completed.' });
  });
});

describe('scenarios', () => {
  it('the control API makes the next play fail early, stop early, or show more errors; the play after is as the fixture says', async () => {
    ({ app, clock } = await makeApp(seed([composition()], 4)));
    const next = (body: object) => app.inject({ method: 'PUT', url: '/_emulator/compositions/next-play', payload: { compositionName: '/Tests/Unit Load', ...body } });
    expect((await next({ outcome: 'Failed', afterMs: 10_000, message: 'The clip failed: the site is down.' })).statusCode).toBe(200);
    const failing = (await create(app, 'play')).json().instanceID;
    expect((await next({ outcome: 'Stopped', afterMs: 20_000, errorFactor: 10 })).statusCode).toBe(200);
    const stopping = (await create(app, 'play')).json().instanceID;
    const normal = (await create(app, 'play')).json().instanceID;
    clock.advance(2000 + 10_000);
    expect(await read(app, failing)).toMatchObject({ state: 'Failed', status: 'The clip failed: the site is down.', totalTime: 10_000 });
    clock.advance(10_000);
    expect(await read(app, stopping)).toMatchObject({ state: 'Stopping', totalTime: 20_000 });
    expect(await read(app, normal)).toMatchObject({ state: 'Playing', totalTime: 20_000 });
    const errorsOf = async (id: string) => {
      const resultid = (await read(app, id)).resultid;
      const m = (await authed(app, { url: `${RESULTS}/${resultid}/clip-element?elementType=message` })).json().elementTypes[0].metrics;
      return m.errors / m.count;
    };
    expect(await errorsOf(stopping)).toBeGreaterThan(5 * (await errorsOf(normal)));
    const unknown = await next({ compositionName: '/Tests/None', outcome: null });
    expect(unknown.json()).toEqual(error(404, "no composition '/Tests/None'"));
  });
});
