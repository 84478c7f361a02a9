import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.js';
import { CONTROL, RESULTS, act, authed, create, read, seed } from './seed.js';

let app: FastifyInstance;
afterEach(async () => app?.close());

const PROPERTIES = {
  alphaServer: 'Load Server 2',
  customProperties: [{ name: 'users', value: '50' }],
  systemProperties: [{ name: 'ramp', value: 'fast' }],
  seedDataKeys: [{ name: 'accounts', value: 'eu' }],
};

const stored = async (id: string) => {
  const state = (await app.inject({ url: `${CONTROL}/state` })).json() as { compositionInstances: Array<{ instanceID: string; play?: object }> };
  return state.compositionInstances.find((i) => i.instanceID === id)?.play;
};

describe('what a load or play body holds', () => {
  it("a load's result name, description and database are those of the play that follows it", async () => {
    ({ app } = await makeApp(seed()));
    const { instanceID } = (await create(app, 'load', '/Tests/Unit Load', { resultName: 'Nightly', description: 'from the load', rsdbName: 'EU' })).json();
    expect((await act(app, instanceID, 'play')).statusCode).toBe(200);
    const instance = await read(app, instanceID);
    expect(instance.resultName).toBe('Nightly');
    const result = (await authed(app, { url: `${RESULTS}/${instance.resultid}` })).json();
    expect(result).toMatchObject({ name: 'Nightly', description: 'from the load', rsdbName: 'EU' });
  });

  it("a play's fields replace those of its load, field by field", async () => {
    ({ app } = await makeApp(seed()));
    const { instanceID } = (await create(app, 'load', '/Tests/Unit Load', { resultName: 'Nightly', description: 'from the load' })).json();
    expect((await act(app, instanceID, 'play', { resultName: 'Rerun' })).statusCode).toBe(200);
    const result = (await authed(app, { url: `${RESULTS}/${(await read(app, instanceID)).resultid}` })).json();
    expect(result).toMatchObject({ name: 'Rerun', description: 'from the load' });
  });

  it('the fields the emulator does not act on are kept with the instance, exported and imported', async () => {
    ({ app } = await makeApp(seed()));
    const { instanceID } = (await create(app, 'play', '/Tests/Unit Load', PROPERTIES)).json();
    expect(await stored(instanceID)).toEqual(PROPERTIES);
    const exported = (await app.inject({ url: `${CONTROL}/state` })).json();
    expect((await app.inject({ method: 'POST', url: `${CONTROL}/reset` })).statusCode).toBe(200);
    expect(await stored(instanceID)).toBeUndefined();
    expect((await app.inject({ method: 'PUT', url: `${CONTROL}/state`, payload: exported })).statusCode).toBe(200);
    expect(await stored(instanceID)).toEqual(PROPERTIES);
  });

  it('a command other than play refuses every field but the name, naming it, and changes nothing', async () => {
    ({ app } = await makeApp(seed()));
    const { instanceID } = (await create(app, 'load')).json();
    for (const command of ['pause', 'resume', 'stop', 'abort', 'unload']) {
      const res = await act(app, instanceID, command, { compositionName: '/Tests/Unit Load', resultName: 'Ignored' });
      expect(res.statusCode, command).toBe(400);
      expect(res.json().message).toBe(
        `body: unknown field 'resultName' for command '${command}': it holds only 'compositionName' (the other fields are read by load and play)`,
      );
    }
    expect((await read(app, instanceID)).state).toBe('Loading');
    expect(await stored(instanceID)).toBeUndefined();
    // The name alone is still taken.
    expect((await act(app, instanceID, 'unload', { compositionName: '/Tests/Unit Load' })).statusCode).toBe(200);
  });
});
