import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, TEST_USER, makeApp, type TestApp } from '../helpers/app.js';
import { javaDateString } from '../../src/core/clock.js';
import type { EnvironmentSeed } from '../../src/provisioning/schemas.js';
import { CLOUD, ENV_DURATIONS as E, RSDB_DURATIONS as R, act, environment, get, rsdb, seed } from './seed.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
afterEach(async () => app?.close());

const at = (ms: number) => clock.advanceTo(T0 + ms);
const read = async (path: string) => (await get(app, path)).body;

describe('RSDB lifecycle', () => {
  it('reads a never-started RSDB as LOADED with a TERMINATED, nameless server', async () => {
    ({ app, clock } = await makeApp(seed({ rsdbs: [rsdb()] })));
    expect(await read('/rsdb/201')).toEqual({
      cloudServer: {
        cloudType: 'EC2',
        instanceSize: 'EC2 Results Database (Large)',
        launchCPAName: "Lance's EC2",
        privateHostName: '',
        publicHostName: '',
        region: 'us-east-1',
        state: 'TERMINATED',
        vendorID: '',
        zone: 'us-east-1a',
      },
      state: 'LOADED',
    });
  });

  it('starts: ALLOCATING_DATABASE (PENDING, no public host) then ALLOCATED_DATABASE (RUNNING)', async () => {
    ({ app, clock } = await makeApp(seed({ rsdbs: [rsdb()] })));
    const started = (await act(app, '/rsdb/201', 'start')).body;
    expect(started.state).toBe('ALLOCATING_DATABASE');
    expect(started.cloudServer).toMatchObject({ state: 'PENDING', publicHostName: '' });
    expect(started.cloudServer.vendorID).toMatch(/^i-[0-9a-f]{17}$/);
    expect(started.cloudServer.privateHostName).toMatch(/^ip-172-31-\d+-\d+\.ec2\.internal$/);
    at(R.allocating - 1);
    expect((await read('/rsdb/201')).state).toBe('ALLOCATING_DATABASE');
    at(R.allocating);
    const running = await read('/rsdb/201');
    expect(running.state).toBe('ALLOCATED_DATABASE');
    expect(running.cloudServer.state).toBe('RUNNING');
    expect(running.cloudServer.publicHostName).toMatch(/^ec2-\d+-\d+-\d+-\d+\.compute-1\.amazonaws\.com$/);
    expect(running.cloudServer.vendorID).toBe(started.cloudServer.vendorID);
  });

  it('terminates: TERMINATING (server RUNNING) then TERMINATED; starts again as a new instance', async () => {
    ({ app, clock } = await makeApp(seed({ rsdbs: [rsdb()] })));
    const first = (await act(app, '/rsdb/201', 'start')).body.cloudServer.vendorID;
    at(R.allocating);
    const terminating = (await act(app, '/rsdb/201', 'terminate')).body;
    expect(terminating.state).toBe('TERMINATING');
    expect(terminating.cloudServer.state).toBe('RUNNING');
    at(R.allocating + R.terminating - 1);
    expect((await read('/rsdb/201')).state).toBe('TERMINATING');
    at(R.allocating + R.terminating);
    const terminated = await read('/rsdb/201');
    expect(terminated.state).toBe('TERMINATED');
    expect(terminated.cloudServer).toMatchObject({ state: 'TERMINATED', publicHostName: '', vendorID: first });
    const again = (await act(app, '/rsdb/201', 'start')).body;
    expect(again.state).toBe('ALLOCATING_DATABASE');
    expect(again.cloudServer.vendorID).not.toBe(first);
  });

  it('terminates while still allocating', async () => {
    ({ app, clock } = await makeApp(seed({ rsdbs: [rsdb()] })));
    await act(app, '/rsdb/201', 'start');
    at(1000);
    expect((await act(app, '/rsdb/201', 'terminate')).body.state).toBe('TERMINATING');
    at(1000 + R.terminating);
    expect((await read('/rsdb/201')).state).toBe('TERMINATED');
    at(R.allocating * 2);
    expect((await read('/rsdb/201')).state).toBe('TERMINATED');
  });

  it('answers 202 without change to terminate a LOADED, TERMINATING or TERMINATED RSDB; refuses to start a TERMINATING one', async () => {
    ({ app, clock } = await makeApp(seed({ rsdbs: [rsdb()] })));
    expect((await act(app, '/rsdb/201', 'terminate')).body.state).toBe('LOADED');
    await act(app, '/rsdb/201', 'start');
    at(R.allocating);
    await act(app, '/rsdb/201', 'terminate');
    at(R.allocating + 1);
    const again = await act(app, '/rsdb/201', 'terminate');
    expect([again.status, again.body.state]).toEqual([202, 'TERMINATING']);
    const start = await act(app, '/rsdb/201', 'start');
    expect(start.status).toBe(400);
    expect(start.body.message).toBe('RSDB 201 is TERMINATING: only a LOADED or TERMINATED results database can be started');
    at(R.allocating + R.terminating);
    expect((await act(app, '/rsdb/201', 'terminate')).body.state).toBe('TERMINATED');
    at(R.allocating + R.terminating + 10 * R.terminating);
    expect((await read('/rsdb/201')).state).toBe('TERMINATED');
  });
});

// Launch boundaries with the test durations.
const DB_ALLOCATED = E.allocatingDatabase;
const DB_CHECKED = DB_ALLOCATED + E.allocatedDatabase;
const MAIN_ALLOCATING = DB_CHECKED + E.checkedDatabase;
const MAIN_ALLOCATED = MAIN_ALLOCATING + E.allocatingMain;
const MAIN_CHECKED = MAIN_ALLOCATED + E.allocatedMain;
const RUNNING_AT = MAIN_CHECKED + E.checkedMain;

describe('test environment lifecycle', () => {
  async function launch(overrides: Partial<EnvironmentSeed> = {}) {
    ({ app, clock } = await makeApp(seed({ environments: [environment(overrides)] })));
    const res = await act(app, '/environment/301', 'start');
    expect(res.status).toBe(202);
    return res.body;
  }
  async function statesAt(offsets: number[]) {
    const states: string[] = [];
    for (const t of offsets) {
      at(t);
      states.push((await read('/environment/301')).state);
    }
    return states;
  }

  it('launches through every state to RUNNING, recording who launched it and when', async () => {
    const started = await launch();
    expect(started.lastLaunched).toBe(javaDateString(T0));
    expect(started.lastLaunched).toBe('Sun Nov 22 09:00:00 UTC 2026');
    expect(started.lastLaunchedBy).toBe(TEST_USER.userName);
    expect(started.lastStopped).toBeUndefined();
    expect(
      await statesAt([
        DB_ALLOCATED - 1, DB_ALLOCATED, DB_CHECKED, MAIN_ALLOCATING, MAIN_ALLOCATED, MAIN_CHECKED, RUNNING_AT - 1, RUNNING_AT, RUNNING_AT * 10,
      ]),
    ).toEqual([
      'ALLOCATING_DATABASE', 'ALLOCATED_DATABASE', 'CHECKED_DATABASE', 'ALLOCATING_MAIN', 'ALLOCATED_MAIN', 'CHECKED_MAIN', 'CHECKED_MAIN', 'RUNNING', 'RUNNING',
    ]);
  });

  it('shows instance ids once allocation begins, host names once allocated, and the url once the main server exists', async () => {
    const started = await launch();
    expect(started.databaseInstance.vendorID).toMatch(/^i-[0-9a-f]{17}$/);
    expect(started.databaseInstance.publicHostName).toBe('');
    at(DB_ALLOCATED);
    let env = await read('/environment/301');
    expect(env.databaseInstance.publicHostName).toMatch(/\.compute-1\.amazonaws\.com$/);
    expect(env.databaseInstance.privateHostName).toMatch(/\.ec2\.internal$/);
    expect(env.mainInstance).toMatchObject({ vendorID: '', publicHostName: '', privateHostName: '' });
    expect(env.url).toBeUndefined();
    at(MAIN_ALLOCATING);
    env = await read('/environment/301');
    expect(env.mainInstance.vendorID).toMatch(/^i-/);
    expect(env.mainInstance.publicHostName).toBe('');
    at(MAIN_ALLOCATED - 1);
    expect((await read('/environment/301')).url).toBeUndefined();
    at(MAIN_ALLOCATED);
    env = await read('/environment/301');
    expect(env.url).toBe(`http://${env.mainInstance.publicHostName}/concerto`);
    expect(env.mainInstance.publicHostName).not.toBe('');
  });

  it('VOLUME_NOT_FORMATTED ends after the database is allocated', async () => {
    await launch({ startOutcome: 'VOLUME_NOT_FORMATTED' });
    expect(await statesAt([DB_ALLOCATED, DB_CHECKED - 1, DB_CHECKED, RUNNING_AT * 2])).toEqual([
      'ALLOCATED_DATABASE', 'ALLOCATED_DATABASE', 'VOLUME_NOT_FORMATTED', 'VOLUME_NOT_FORMATTED',
    ]);
    const env = await read('/environment/301');
    expect(env.databaseInstance.publicHostName).not.toBe('');
    expect(env.mainInstance.vendorID).toBe('');
    expect(env.url).toBeUndefined();
  });

  it('VOLUME_NOT_AVAILABLE waits for the volume, then carries on to RUNNING; no start meanwhile', async () => {
    await launch({ startOutcome: 'VOLUME_NOT_AVAILABLE' });
    const back = DB_ALLOCATED + E.volumeNotAvailable;
    expect(await statesAt([DB_ALLOCATED - 1, DB_ALLOCATED, back - 1])).toEqual(['ALLOCATING_DATABASE', 'VOLUME_NOT_AVAILABLE', 'VOLUME_NOT_AVAILABLE']);
    const refused = await act(app, '/environment/301', 'start');
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('test environment 301 is VOLUME_NOT_AVAILABLE: it cannot be started until it reaches a final state');
    expect(await statesAt([back, back + RUNNING_AT - DB_ALLOCATED - 1, back + RUNNING_AT - DB_ALLOCATED])).toEqual([
      'ALLOCATED_DATABASE', 'CHECKED_MAIN', 'RUNNING',
    ]);
  });

  it('ERROR_BUILD_MISMATCH ends after the main server is allocated', async () => {
    await launch({ startOutcome: 'ERROR_BUILD_MISMATCH' });
    expect(await statesAt([MAIN_ALLOCATED, MAIN_CHECKED - 1, MAIN_CHECKED])).toEqual(['ALLOCATED_MAIN', 'ALLOCATED_MAIN', 'ERROR_BUILD_MISMATCH']);
    expect((await read('/environment/301')).url).toMatch(/^http:\/\/ec2-/);
  });

  it('PROCESS_FAILED ends after the main server is checked', async () => {
    await launch({ startOutcome: 'PROCESS_FAILED' });
    expect(await statesAt([MAIN_CHECKED, RUNNING_AT - 1, RUNNING_AT])).toEqual(['CHECKED_MAIN', 'CHECKED_MAIN', 'PROCESS_FAILED']);
  });

  it('EXTERNALLY_TERMINATED runs for a while, then its servers are gone', async () => {
    await launch({ startOutcome: 'EXTERNALLY_TERMINATED' });
    const gone = RUNNING_AT + E.running;
    expect(await statesAt([RUNNING_AT, gone - 1, gone])).toEqual(['RUNNING', 'RUNNING', 'EXTERNALLY_TERMINATED']);
    const env = await read('/environment/301');
    expect(env.url).toBeUndefined();
    expect(env.mainInstance.publicHostName).toBe('');
    expect((await act(app, '/environment/301', 'start')).body.state).toBe('ALLOCATING_DATABASE');
  });

  it('terminates a RUNNING environment: TERMINATING then TERMINATED, lastStopped set, servers gone', async () => {
    await launch();
    at(RUNNING_AT);
    const res = await act(app, '/environment/301', 'terminate');
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('TERMINATING');
    expect(res.body.lastStopped).toBe(javaDateString(T0 + RUNNING_AT));
    expect(res.body.mainInstance.publicHostName).not.toBe('');
    expect(await statesAt([RUNNING_AT + E.terminating - 1, RUNNING_AT + E.terminating])).toEqual(['TERMINATING', 'TERMINATED']);
    const env = await read('/environment/301');
    expect(env.url).toBeUndefined();
    expect(env.databaseInstance).toMatchObject({ vendorID: '', publicHostName: '', privateHostName: '' });
    expect(env.lastLaunched).toBe(javaDateString(T0));
  });

  it('ends TERMINATED_WITH_FAILURES when the environment says so', async () => {
    await launch({ terminateOutcome: 'TERMINATED_WITH_FAILURES' });
    at(RUNNING_AT);
    await act(app, '/environment/301', 'terminate');
    expect(await statesAt([RUNNING_AT + E.terminating])).toEqual(['TERMINATED_WITH_FAILURES']);
    expect((await act(app, '/environment/301', 'start')).status).toBe(202);
  });

  it('terminates a failed launch (ERROR_BUILD_MISMATCH) the same way', async () => {
    await launch({ startOutcome: 'ERROR_BUILD_MISMATCH' });
    at(MAIN_CHECKED);
    expect((await act(app, '/environment/301', 'terminate')).body.state).toBe('TERMINATING');
    expect(await statesAt([MAIN_CHECKED + E.terminating])).toEqual(['TERMINATED']);
  });

  it('cancels a launch in progress: CANCELLING then CANCELLED, and the rest of the launch never happens', async () => {
    await launch();
    at(MAIN_ALLOCATING);
    const res = await act(app, '/environment/301', 'terminate');
    expect(res.body.state).toBe('CANCELLING');
    expect(res.body.lastStopped).toBe(javaDateString(T0 + MAIN_ALLOCATING));
    expect(await statesAt([MAIN_ALLOCATING + E.cancelling - 1, MAIN_ALLOCATING + E.cancelling, RUNNING_AT * 3])).toEqual([
      'CANCELLING', 'CANCELLED', 'CANCELLED',
    ]);
    expect((await read('/environment/301')).url).toBeUndefined();
  });

  it('answers 202 without change to terminate an environment not launched or already going down', async () => {
    ({ app, clock } = await makeApp(seed({ environments: [environment()] })));
    const loaded = await act(app, '/environment/301', 'terminate');
    expect([loaded.status, loaded.body.state, loaded.body.lastStopped]).toEqual([202, 'LOADED', undefined]);
    await act(app, '/environment/301', 'start');
    at(1000);
    await act(app, '/environment/301', 'terminate');
    at(2000);
    const again = (await act(app, '/environment/301', 'terminate')).body;
    expect(again.state).toBe('CANCELLING');
    expect(again.lastStopped).toBe(javaDateString(T0 + 1000));
    at(1000 + E.cancelling);
    expect((await act(app, '/environment/301', 'terminate')).body.state).toBe('CANCELLED');
  });

  it('refuses to start an environment that is launching or stopping, naming its state', async () => {
    await launch();
    at(MAIN_ALLOCATED);
    const res = await act(app, '/environment/301', 'start');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('test environment 301 is ALLOCATED_MAIN: it cannot be started until it reaches a final state');
    at(RUNNING_AT);
    const running = await act(app, '/environment/301', 'start');
    expect(running.status).toBe(400);
    expect(running.body.message).toBe('test environment 301 is already RUNNING: terminate it before starting it again');
    await act(app, '/environment/301', 'terminate');
    expect((await act(app, '/environment/301', 'start')).body.message).toMatch(/^test environment 301 is TERMINATING:/);
  });

  it('records the user of the session token as lastLaunchedBy', async () => {
    ({ app, clock } = await makeApp({
      ...seed({ environments: [environment()] }),
      users: [TEST_USER, { userName: 'ops@example.com', password: 'x', tenant: 'Default' }],
      tokens: [{ token: 'ops-token', userName: 'ops@example.com', neverExpires: true }],
    }));
    const res = await app.inject({ method: 'POST', url: `${CLOUD}/environment/301/action`, headers: { 'x-auth-token': 'ops-token' }, payload: { action: 'start' } });
    expect(res.json().lastLaunchedBy).toBe('ops@example.com');
  });
});
