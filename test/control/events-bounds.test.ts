import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp } from '../helpers/app.js';
import { grid, seed } from '../provisioning/seed.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';
import type { World } from '../../src/interfaces.js';

/** What the event stream holds per client, per event, and per world: the bounds an attacker pushed against. */

let app: FastifyInstance;
let base: string;
const readers: SseReader[] = [];
afterEach(async () => {
  readers.splice(0).forEach((r) => r.close());
  await app?.close();
});

const world = () => (app as unknown as { world: World }).world;
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1/';

async function start(config: Parameters<typeof makeApp>[1] = {}, fixtures: Parameters<typeof makeApp>[0] = seed({ grids: [grid()] })) {
  ({ app } = await makeApp(fixtures, config));
  base = await listen(app);
}

async function open(query = '', headers: Record<string, string> = {}, prefix = ''): Promise<SseReader> {
  const reader = await openSse(`${base}${prefix}/_emulator/events${query}`, headers);
  readers.push(reader);
  return reader;
}

async function annotate(title: string, text = '') {
  const res = await app.inject({ method: 'POST', url: ANNOTATIONS, headers: { 'x-auth-token': 'test-token' }, payload: { title, start: T0, text, domainIds: [] } });
  expect(res.statusCode).toBe(200);
  return res.json().id as number;
}

/** Waits until the world has written out everything it queued (its slices run on setImmediate). */
async function settled(): Promise<void> {
  for (let i = 0; i < 100 && world().events.scheduled > (world().events.listening ? 1 : 0); i++) await new Promise((r) => setImmediate(r));
}

describe('a resume with more to replay than a client may hold', () => {
  it('gets stream.reset and the newest events that fit, and the stream stays open', async () => {
    await start({ eventsClientMaxBytes: 8192 });
    const keeper = await open('?kind=annotation');
    // 40 events of about 800 bytes: some 32 KiB to replay, four times EVENTS_CLIENT_MAX_BYTES.
    for (let i = 0; i < 40; i++) await annotate(`note ${i}`, 'x'.repeat(600));
    const seen = await keeper.take(40);
    await settled();

    const resumed = await open('', { 'last-event-id': '0' });
    expect(resumed.status).toBe(200);
    const reset = await resumed.next();
    expect(reset.event).toBe('stream.reset');
    expect(reset.id).toBeUndefined();
    expect(reset.data).toMatchObject({ type: 'stream.reset', lastId: Number(seen[39].id) });
    // The replay is the newest events, within half of EVENTS_CLIENT_MAX_BYTES, ending with the last.
    const replayed: string[] = [];
    for (;;) {
      const event = await resumed.next();
      replayed.push(event.id!);
      if (event.id === seen[39].id) break;
    }
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.length).toBeLessThan(8);
    expect(replayed).toEqual(seen.slice(40 - replayed.length).map((e) => e.id));
    // Still open: the next change arrives.
    const id = await annotate('after');
    const live = await resumed.next();
    expect(live.data).toMatchObject({ type: 'annotation.created', resourceId: id });
    expect(world().events.listeners).toBe(2);
  });

  it('replays in full, with no stream.reset, what fits', async () => {
    await start({ eventsClientMaxBytes: 64 * 1024 });
    const keeper = await open('?kind=annotation');
    for (let i = 0; i < 10; i++) await annotate(`note ${i}`, 'x'.repeat(600));
    const seen = await keeper.take(10);
    await settled();
    const resumed = await open('', { 'last-event-id': seen[2].id! });
    const replayed = await resumed.take(7);
    expect(replayed.map((e) => e.id)).toEqual(seen.slice(3).map((e) => e.id));
  });

  it('gets stream.reset when it resumes from an id the world has not reached (another run of the emulator)', async () => {
    await start();
    const keeper = await open('?kind=annotation');
    await annotate('one');
    await keeper.next();
    await settled();
    const resumed = await open('', { 'last-event-id': '500' });
    const reset = await resumed.next();
    expect(reset).toMatchObject({ event: 'stream.reset', data: { type: 'stream.reset', lastId: 1 } });
    const id = await annotate('two');
    expect((await resumed.next()).data).toMatchObject({ type: 'annotation.created', resourceId: id });
  });
});

const ALERT = { uid: 'cpu-high', name: 'CPU high', enabled: true, message: 'CPU above 90%', channels: [], state: 'cleared' as const, history: [] };
const fire = (message: string) => app.inject({ method: 'POST', url: '/concerto/mpulse/api/alerts/cpu-high/fire', payload: { message } });

describe('what an event carries', () => {
  it('an alert event carries the fire or clear it recorded and the alert as it is now, not its history', async () => {
    await start({}, { alerts: [ALERT] });
    const reader = await open('?kind=alert');
    const message = 'm'.repeat(1000);
    for (let i = 0; i < 50; i++) expect((await fire(`${i} ${message}`)).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: '/concerto/mpulse/api/alerts/cpu-high/clear', payload: {} })).statusCode).toBe(204);
    expect((await app.inject({ method: 'PATCH', url: '/_emulator/alerts/cpu-high', payload: { enabled: false } })).statusCode).toBe(200);
    const events = await reader.take(52);
    const fired = events[49];
    expect(fired.data).toMatchObject({ type: 'alert.fired', resourceId: 'cpu-high', entry: { action: 'fire', at: T0, message: `49 ${message}`, subject: 'CPU high' } });
    expect(fired.data.view).toEqual({ uid: 'cpu-high', name: 'CPU high', enabled: true, message: 'CPU above 90%', channels: [], state: 'firing', lastTriggered: T0 });
    // The 50th fire is no bigger than the first: 50 fires of 1 KB carry some 50 KB, not 1.3 MB.
    const size = (i: number) => JSON.stringify(events[i].data).length;
    expect(size(49)).toBeLessThan(size(0) + 10);
    expect(size(49)).toBeLessThan(2000);
    expect(events[50].data).toMatchObject({ type: 'alert.cleared', entry: { action: 'clear', at: T0 }, view: { state: 'cleared', lastCleared: T0 } });
    expect(events[51].data).toMatchObject({ type: 'alert.disabled', view: { enabled: false, state: 'cleared' } });
    for (const e of events.slice(49)) expect(e.data.view).not.toHaveProperty('history');
    expect(events[51].data).not.toHaveProperty('entry');
    // The history is still there for whoever reads it.
    expect((await app.inject({ url: '/_emulator/alerts/cpu-high' })).json().history).toHaveLength(51);
  });

  it('an event over 64 KiB goes without its view, saying so, and the resource can be read instead', async () => {
    await start();
    const reader = await open('?kind=annotation');
    const big = await annotate('big', 'x'.repeat(100 * 1024));
    const small = await annotate('small', 'y');
    const [bigEvent, smallEvent] = await reader.take(2);
    expect(bigEvent.data).toMatchObject({ type: 'annotation.created', kind: 'annotation', resourceId: big, viewOmitted: true });
    expect(bigEvent.data).not.toHaveProperty('view');
    expect(JSON.stringify(bigEvent.data).length).toBeLessThan(1000);
    expect(smallEvent.data).toMatchObject({ type: 'annotation.created', resourceId: small, view: { title: 'small' } });
    expect(smallEvent.data).not.toHaveProperty('viewOmitted');
  });

  it('an alert fired with a message over 64 KiB goes without its view and entry', async () => {
    // A message this long is refused by default (ALERT_TEXT_MAX_BYTES, 8 KiB): the bound is raised here.
    await start({ alertTextMaxBytes: 128 * 1024 }, { alerts: [ALERT] });
    const reader = await open('?kind=alert');
    expect((await fire('z'.repeat(70 * 1024))).statusCode).toBe(204);
    const event = await reader.next();
    expect(event.data).toMatchObject({ type: 'alert.fired', resourceId: 'cpu-high', viewOmitted: true });
    expect(event.data).not.toHaveProperty('view');
    expect(event.data).not.toHaveProperty('entry');
  });
});

describe('streams of sandboxes', () => {
  it("never take the streams EVENTS_RESERVED_STREAMS keeps for the default world's own", async () => {
    await start({ eventsMaxStreams: 2, eventsMaxStreamsTotal: 4, eventsReservedStreams: 2 });
    for (const name of ['s1', 's2']) expect((await app.inject({ method: 'PUT', url: `/_emulator/sandboxes/${name}` })).statusCode).toBe(201);
    // Without ADMIN_TOKEN anyone may open these: two sandboxes' worth would fill the total.
    for (let i = 0; i < 2; i++) expect((await open('', {}, '/sandbox/s1')).status).toBe(200);
    const refused = await app.inject({ url: '/sandbox/s2/_emulator/events' });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().message).toBe(
      '2 event streams are open on sandboxes, and EVENTS_MAX_STREAMS_TOTAL (4) less EVENTS_RESERVED_STREAMS (2), kept for the default world, is 2; close some or raise them',
    );
    expect((await app.inject({ method: 'HEAD', url: '/sandbox/s2/_emulator/events' })).statusCode).toBe(503);
    // A refused stream to a sandbox not made yet makes none.
    expect((await app.inject({ url: '/sandbox/s3/_emulator/events' })).statusCode).toBe(503);
    expect((await app.inject({ url: '/_emulator/sandboxes/s3' })).statusCode).toBe(404);
    // The default world's own streams open.
    const own = [await open(), await open()];
    expect(own.map((r) => r.status)).toEqual([200, 200]);
    expect(world().events.listeners).toBe(2);
    // A sandbox stream that ends gives its place back.
    readers[0].close();
    for (let i = 0; i < 100 && (await app.inject({ method: 'HEAD', url: '/sandbox/s2/_emulator/events' })).statusCode !== 200; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await open('', {}, '/sandbox/s2')).status).toBe(200);
  });
});
