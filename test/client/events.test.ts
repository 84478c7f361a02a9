import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmulatorClient, EmulatorError, type EmulatorEvent } from '../../src/client/index.js';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/index.js';
import { T0 } from '../helpers/app.js';

let emu: RunningEmulator;
let client: EmulatorClient;
let calls: string[];
/** A client whose every fetch is counted: waiting must not poll. */
let counted: EmulatorClient;

beforeAll(async () => {
  // Node's fetch may keep a spare connection that carries no request once a stream is
  // cancelled; close() waits for it until CONNECTION_TIMEOUT_MS of silence, kept short here.
  emu = await startEmulator({ clock: new ManualClock(T0), requestTimeoutMs: 1000, keepAliveTimeoutMs: 500, connectionTimeoutMs: 1000 });
  client = new EmulatorClient(emu.url);
  counted = new EmulatorClient(emu.url, {
    fetch: (input, init) => {
      calls.push(String(input));
      return fetch(input, init);
    },
  });
});
afterAll(() => emu.close());
beforeEach(async () => {
  calls = [];
  await client.reset();
});

const demo = { 'X-Auth-Token': 'demo-token', 'Content-Type': 'application/json' };
const startGrid = () => fetch(`${client.urls.provisioning}/grid/101/action`, { method: 'POST', headers: demo, body: '{"action":"start"}' });

describe('EmulatorClient events and waitFor', () => {
  it('waitFor resolves when the grid reaches CHECKED, from the event stream, without polling', async () => {
    await startGrid();
    await client.clearJournal();
    const waiting = counted.waitFor({ kind: 'grid', id: 101, state: 'CHECKED' }, { timeoutMs: 5000 });
    // Let the wait open its stream and read the state once before time moves.
    await new Promise((r) => setTimeout(r, 200));
    const settled = await client.advanceUntilSettled('grid', 101);
    const reached = await waiting;
    expect(reached.state).toBe('CHECKED');
    expect(reached.at).toBe(settled.now);
    expect((reached.view as { state: string }).state).toBe('CHECKED');
    // One stream, one read of the state: nothing else, however long it waited.
    expect(calls).toHaveLength(2);
    expect(calls.filter((u) => u.includes('/_emulator/events'))).toHaveLength(1);
    // And no request to the service itself.
    expect(await client.countRequests({ path: '/concerto/*' })).toBe(0);
  });

  it('waitFor answers at once when the state is already reached', async () => {
    await startGrid();
    await client.advanceUntilSettled('grid', 101);
    const reached = await counted.waitFor({ kind: 'grid', id: 101, state: ['CHECKED', 'CHECKED_WITH_FAILURES'] }, { timeoutMs: 1000 });
    expect(reached.state).toBe('CHECKED');
    expect(calls).toHaveLength(2);
  });

  it("waitFor an alert resolves when its threshold rule fires it, at the rule's instant", async () => {
    // The demo seed's CDN outage starts two minutes after the load (the reset); the rule needs five whole minutes of it.
    const loaded = (await client.clock()).now;
    const fires = Math.ceil((loaded + 2 * 60_000) / 60_000) * 60_000 + 5 * 60_000;
    expect(await client.waitFor({ kind: 'alert', id: 'shop-page-load', state: 'cleared' }, { timeoutMs: 1000 })).toMatchObject({ state: 'cleared' });
    calls = [];
    const waiting = counted.waitFor({ kind: 'alert', id: 'shop-page-load', state: 'firing' }, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 200));
    await client.advance(10 * 60_000);
    const reached = await waiting;
    expect(reached).toMatchObject({ state: 'firing', at: fires, view: { uid: 'shop-page-load', state: 'firing' } });
    // One stream, one read of the alert: no polling.
    expect(calls).toHaveLength(2);
  });

  it('waitFor gives up after timeoutMs with an EmulatorError', async () => {
    const failed = await client.waitFor({ kind: 'grid', id: 101, state: 'CHECKED' }, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(EmulatorError);
    expect((failed as EmulatorError).message).toBe('waited 100 ms for grid 101 to be CHECKED');
  });

  it('events() yields parsed, filtered events and ends when its signal aborts', async () => {
    const stop = new AbortController();
    const seen: EmulatorEvent[] = [];
    const reading = (async () => {
      for await (const event of client.events({ kind: 'grid', types: ['transition'], signal: stop.signal })) {
        seen.push(event);
        if (event.state === 'CHECKED') stop.abort();
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await startGrid();
    await client.advanceUntilSettled('grid', 101);
    await reading;
    expect(seen.map((e) => e.state)).toEqual(['ALLOCATING', 'ALLOCATED', 'CHECKING', 'CHECKED']);
    expect(seen.every((e) => e.type === 'transition' && e.kind === 'grid' && e.resourceId === 101)).toBe(true);
  });

  it('events() refuses an unknown kind with the emulator message', async () => {
    const it = client.events({ kind: 'gird' as never });
    const failed = await it.next().catch((e: unknown) => e);
    expect((failed as EmulatorError).status).toBe(400);
  });
});
