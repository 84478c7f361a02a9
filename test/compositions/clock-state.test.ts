import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { T0 } from '../helpers/app.js';
import { act, create, read, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const advance = (body: object) => app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: body });

describe('composition instances on the emulator clock', () => {
  it('count in the next transition, and {"until":{"kind":"compositionInstance"}} moves to where the run has unloaded', async () => {
    ({ app, clock } = await makeApp(seed()));
    // The seed's grid is CHECKED already: nothing is scheduled.
    expect((await app.inject({ url: '/_emulator/clock' })).json().nextTransitionAt).toBeUndefined();
    const id = (await create(app, 'play')).json().instanceID;
    expect((await app.inject({ url: '/_emulator/clock' })).json().nextTransitionAt).toBe(T0 + 1000);
    const steps: string[] = [];
    for (let i = 0; i < 6; i++) {
      expect((await advance({ to: 'next' })).statusCode).toBe(200);
      steps.push(`${(await read(app, id)).state}@${clock.now() - T0}`);
    }
    expect(steps).toEqual(['Starting@1000', 'Playing@2000', 'Closing@62000', 'Writing@63000', 'Completed@64000', 'Unloaded@65000']);

    const second = (await create(app, 'load')).json().instanceID;
    await act(app, second, 'play');
    const moved = await advance({ until: { kind: 'compositionInstance', id: second } });
    expect(moved.json().advancedMs).toBe(65_000);
    expect((await read(app, second)).state).toBe('Unloaded');
    const none = await advance({ until: { kind: 'compositionInstance', id: 'nope' } });
    expect(none.statusCode).toBe(404);
    expect(none.json().message).toBe("body field 'until': no composition instance 'nope'");
    const wrong = await advance({ until: { kind: 'grid', id: 'x' } });
    expect(wrong.json().message).toBe("body field 'until': the id of a grid is an integer");
  });

  it('are part of the exported state, and an import brings them back as they were', async () => {
    ({ app, clock } = await makeApp(seed()));
    const id = (await create(app, 'play', '/Tests/Unit Load', { resultName: 'kept' })).json().instanceID;
    clock.advance(20_000);
    const before = await read(app, id);
    const state = (await app.inject({ url: '/_emulator/state' })).json();
    expect(state.compositionInstances).toHaveLength(1);
    expect(state.results).toMatchObject([{ name: 'kept', run: 1 }]);
    expect((await app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    expect((await app.inject({ url: `/concerto/services/rest/composition/instances/v1/${id}`, headers: { 'x-auth-token': 'test-token' } })).statusCode).toBe(404);
    const replaced = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: state });
    expect(replaced.statusCode).toBe(200);
    expect(await read(app, id)).toEqual(before);
  });
});
