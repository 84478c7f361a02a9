import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp, type TestApp } from '../helpers/app.js';
import { INSTANCE_COMMANDS, INSTANCE_STATES, type InstanceState } from '../../src/compositions/schemas.js';
import { act, composition, create, read, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

/** Where each command is accepted: a stopped or aborted run cannot be resumed, only a paused one. */
const ACCEPTED_IN: Record<string, readonly InstanceState[]> = {
  play: ['Loading', 'Loaded'],
  pause: ['Playing'],
  resume: ['Paused'],
  stop: ['Starting', 'Playing', 'Pausing', 'Paused', 'Resuming'],
  abort: ['Loading', 'Starting', 'Playing', 'Pausing', 'Paused', 'Resuming', 'Stopping', 'Closing', 'Writing'],
  unload: ['Loading', 'Loaded', 'Completed', 'Failed', 'Stopped', 'Aborted'],
};

type Driver = (ids: string[]) => Promise<void>;

/** How to bring fresh instances (all of one composition) into each state, at the same pace. */
function drivers(): Record<InstanceState, { path: string; steps: Driver }> {
  const all = (command: string) => async (ids: string[]) => {
    for (const id of ids) expect((await act(app, id, command)).statusCode).toBe(200);
  };
  const wait = (ms: number) => async () => {
    clock.advance(ms);
  };
  const seq = (...steps: Driver[]) => async (ids: string[]) => {
    for (const step of steps) await step(ids);
  };
  const loaded = wait(1000);
  const playing = seq(loaded, all('play'), wait(1000));
  const failing = '/Tests/Failing';
  return {
    Loading: { path: '/Tests/Unit Load', steps: seq() },
    Loaded: { path: '/Tests/Unit Load', steps: loaded },
    Starting: { path: '/Tests/Unit Load', steps: seq(loaded, all('play')) },
    Playing: { path: '/Tests/Unit Load', steps: playing },
    Pausing: { path: '/Tests/Unit Load', steps: seq(playing, all('pause')) },
    Paused: { path: '/Tests/Unit Load', steps: seq(playing, all('pause'), wait(1000)) },
    Resuming: { path: '/Tests/Unit Load', steps: seq(playing, all('pause'), wait(1000), all('resume')) },
    Stopping: { path: '/Tests/Unit Load', steps: seq(playing, all('stop')) },
    Aborting: { path: '/Tests/Unit Load', steps: seq(playing, all('abort')) },
    Closing: { path: '/Tests/Unit Load', steps: seq(playing, wait(60_000)) },
    Writing: { path: '/Tests/Unit Load', steps: seq(playing, wait(61_000)) },
    Completed: { path: '/Tests/Unit Load', steps: seq(playing, wait(62_000)) },
    Failed: { path: failing, steps: seq(playing, wait(5000)) },
    Stopped: { path: '/Tests/Unit Load', steps: seq(playing, all('stop'), wait(2000)) },
    Aborted: { path: '/Tests/Unit Load', steps: seq(playing, all('abort'), wait(1000)) },
    Unloaded: { path: '/Tests/Unit Load', steps: seq(playing, wait(63_000)) },
  };
}

/** The state an accepted command moves to at once. */
const NEXT: Record<string, (from: InstanceState) => InstanceState> = {
  play: (from) => (from === 'Loading' ? 'Loading' : 'Starting'),
  pause: () => 'Pausing',
  resume: () => 'Resuming',
  stop: () => 'Stopping',
  abort: () => 'Aborting',
  unload: () => 'Unloaded',
};

describe('every command in every state', () => {
  it('is accepted where the reference allows it, moves on at once, and is refused elsewhere without a change', async () => {
    const failing = composition({ id: 302, path: '/Tests/Failing', outcome: { outcome: 'Failed', afterMs: 5000, message: 'The clip failed: too many errors.' } });
    ({ app, clock } = await makeApp(seed([composition(), failing], 200)));
    const table = drivers();
    for (const state of INSTANCE_STATES) {
      const { path, steps } = table[state];
      const ids: string[] = [];
      for (const _ of INSTANCE_COMMANDS) ids.push((await create(app, 'load', path)).json().instanceID);
      await steps(ids);
      for (const [i, command] of INSTANCE_COMMANDS.entries()) {
        const before = await read(app, ids[i]);
        expect(before.state, `driven to ${state}`).toBe(state);
        const res = await act(app, ids[i], command);
        const after = await read(app, ids[i]);
        if (ACCEPTED_IN[command].includes(state)) {
          expect(res.statusCode, `${command} in ${state}`).toBe(200);
          expect(res.json()).toEqual({ instanceID: ids[i] });
          expect(after.state, `${command} in ${state}`).toBe(NEXT[command](state));
        } else {
          expect(res.statusCode, `${command} in ${state}`).toBe(400);
          expect(res.json()).toEqual({
            statusCode: 400,
            error: 'Bad Request',
            message: `composition instance '${ids[i]}' is ${state}: ${command} is accepted only when it is ${ACCEPTED_IN[command].join(', ')}`,
          });
          expect(after).toEqual(before);
        }
      }
      // Whatever they were doing, the instances of this round end unloaded and free their servers.
      clock.advance(200_000);
    }
  });

  it('a play sent while loading starts when the load ends, and the run then unloads by itself', async () => {
    ({ app, clock } = await makeApp(seed()));
    const id = (await create(app, 'load')).json().instanceID;
    await act(app, id, 'play');
    expect((await read(app, id)).state).toBe('Loading');
    const seen: string[] = [];
    for (let t = 0; t < 70; t++) {
      const s = (await read(app, id)).state;
      if (seen.at(-1) !== s) seen.push(s);
      clock.advance(1000);
    }
    expect(seen).toEqual(['Loading', 'Starting', 'Playing', 'Closing', 'Writing', 'Completed', 'Unloaded']);
  });

  it('pause holds the play time and the numbers; resume plays what is left', async () => {
    ({ app, clock } = await makeApp(seed()));
    const id = (await create(app, 'play')).json().instanceID;
    clock.advance(2000 + 20_000); // loading, starting, then 20 s of play
    const playing = await read(app, id);
    expect(playing).toMatchObject({ state: 'Playing', totalTime: 20_000 });
    await act(app, id, 'pause');
    clock.advance(600_000);
    const paused = await read(app, id);
    expect(paused).toMatchObject({ state: 'Paused', totalTime: 20_000, status: 'Paused at 00:20 of 01:00.' });
    const counts = async () => (await app.inject({ url: `/concerto/services/rest/Results/v1/${playing.resultid}/clip-element`, headers: { 'x-auth-token': 'test-token' } })).json();
    const atPause = await counts();
    clock.advance(60_000);
    expect(await counts()).toEqual(atPause);
    await act(app, id, 'resume');
    clock.advance(1000 + 39_999);
    expect(await read(app, id)).toMatchObject({ state: 'Playing', totalTime: 59_999 });
    clock.advance(1);
    expect(await read(app, id)).toMatchObject({ state: 'Closing', totalTime: 60_000 });
  });
});
