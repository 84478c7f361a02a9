import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import { GRID_DURATIONS as D, act, grid, seed } from '../provisioning/seed.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';
import type { World } from '../../src/interfaces.js';
import { create as createInstance, seed as compositionSeed } from '../compositions/seed.js';
import { EventStream } from '../../src/world/events-stream.js';

let app: FastifyInstance;
let clock: TestApp['clock'];
let base: string;
const readers: SseReader[] = [];
afterEach(async () => {
  readers.splice(0).forEach((r) => r.close());
  await app?.close();
});

const world = () => (app as unknown as { world: World }).world;
const CHECKING_AT = D.allocating + D.allocated;
const CHECKED_AT = CHECKING_AT + D.checking;

async function start(config: Parameters<typeof makeApp>[1] = {}) {
  ({ app, clock } = await makeApp(seed({ grids: [grid()] }), config));
  base = await listen(app);
}

async function open(query = '', headers: Record<string, string> = {}): Promise<SseReader> {
  const reader = await openSse(`${base}/_emulator/events${query}`, headers);
  readers.push(reader);
  return reader;
}

/** Waits until the world has written out everything it queued (its slices run on setImmediate). */
async function settled(): Promise<void> {
  for (let i = 0; i < 100 && world().events.scheduled > (world().events.listening ? 1 : 0); i++) await new Promise((r) => setImmediate(r));
}

describe('GET /_emulator/events', () => {
  it('sends every transition of an advance, in order, each at its own emulated time with the view GET answers', async () => {
    await start();
    expect((await act(app, '/grid/101', 'start')).status).toBe(202);
    const grids = await open('?kind=grid&types=transition');
    expect(grids.status).toBe(200);
    expect(grids.headers.get('content-type')).toContain('text/event-stream');
    const all = await open();
    const res = await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: CHECKED_AT } });
    expect(res.statusCode).toBe(200);

    const events = await grids.take(3);
    expect(events.map((e) => [e.data.state, e.data.at])).toEqual([
      ['ALLOCATED', T0 + D.allocating],
      ['CHECKING', T0 + CHECKING_AT],
      ['CHECKED', T0 + CHECKED_AT],
    ]);
    for (const e of events) {
      expect(e.event).toBe('transition');
      expect(e.data).toMatchObject({ type: 'transition', kind: 'grid', resourceId: 101 });
      expect((e.data.view as { state: string; id: number }).state).toBe(e.data.state);
      expect(Number(e.id)).toBe(e.data.id);
    }
    // The unfiltered stream: the servers' steps too, and the clock change, in time order, ids rising.
    const everything = await all.take(7);
    const ats = everything.map((e) => e.data.at as number);
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
    expect(everything.map((e) => Number(e.id))).toEqual([...everything.map((e) => Number(e.id))].sort((a, b) => a - b));
    expect(everything.filter((e) => e.data.kind === 'server').map((e) => e.data.state)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    expect(everything[everything.length - 1]).toMatchObject({ event: 'clock.changed', data: { at: T0 + CHECKED_AT, rate: 1, frozen: true } });
  });

  it('sends the step an action takes now (a start), not the history from before the stream opened', async () => {
    await start();
    const grids = await open('?kind=grid');
    await act(app, '/grid/101', 'start');
    const first = await grids.next();
    expect(first.data).toMatchObject({ type: 'transition', kind: 'grid', resourceId: 101, state: 'ALLOCATING', at: T0 });
  });

  it('sends transitions as they happen in real time on a sped-up clock, with one timer while someone listens', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    const grids = await open('?kind=grid&types=transition');
    // 10 s of allocation at 1000x: 10 ms of real time.
    await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 1000, frozen: false } });
    const [allocated, checking, checked] = await grids.take(3, 5000);
    expect([allocated.data.state, checking.data.state, checked.data.state]).toEqual(['ALLOCATED', 'CHECKING', 'CHECKED']);
    // Each at its own emulated instant, not when it happened to be noticed.
    expect(allocated.data.at).toBe(T0 + D.allocating);
    expect(checked.data.at).toBe(T0 + CHECKED_AT);
  });

  it('runs no timer while nobody listens, and stops when the last stream closes', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 0.001, frozen: false } });
    expect(world().events.scheduled).toBe(0);
    const reader = await open();
    for (let i = 0; i < 100 && world().events.scheduled !== 1; i++) await new Promise((r) => setTimeout(r, 5));
    expect(world().events.listeners).toBe(1);
    expect(world().events.scheduled).toBe(1); // the timer for ALLOCATED
    reader.close();
    for (let i = 0; i < 100 && world().events.listeners > 0; i++) await new Promise((r) => setTimeout(r, 5));
    await settled();
    expect(world().events.listeners).toBe(0);
    expect(world().events.scheduled).toBe(0);
  });

  it('filters by kind, id and type, and refuses unknown ones naming what is allowed', async () => {
    await start();
    const bad = await app.inject({ url: '/_emulator/events?kind=gird' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe("query 'kind': unknown kind 'gird'; use grid, server, rsdb, environment, instance, annotation, alert, delivery, fault, sandbox, object, timeline");
    const badType = await app.inject({ url: '/_emulator/events?types=transition,nope' });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().message).toContain("query 'types': unknown event type 'nope'; use transition, annotation.created");
    expect((await app.inject({ url: '/_emulator/events?lastEventId=abc' })).json().message).toBe("Last-Event-ID 'abc' is not an event id (a whole number)");

    await act(app, '/grid/101', 'start');
    const servers = (await app.inject({ url: '/concerto/services/rest/CloudService/v1/cloudserver/', headers: { 'x-auth-token': 'test-token' } })).json();
    const one = servers[1].id;
    const reader = await open(`?kind=server&id=${one}&types=transition,world.reset`);
    clock.advance(CHECKED_AT);
    await app.inject({ method: 'POST', url: '/_emulator/reset' });
    const [running, reset] = await reader.take(2);
    expect(running.data).toMatchObject({ kind: 'server', resourceId: one, state: 'RUNNING' });
    expect(reset.data).toMatchObject({ type: 'world.reset' });
  });

  it('resumes after Last-Event-ID from the buffer', async () => {
    await start();
    await act(app, '/grid/101', 'start');
    const keeper = await open();
    const first = await open('?kind=grid&types=transition');
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: D.allocating } });
    const allocated = await first.next();
    first.close();
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: CHECKED_AT - D.allocating } });
    await keeper.take(3);
    await settled();
    const resumed = await open('?kind=grid&types=transition', { 'last-event-id': String(allocated.data.id) });
    const [checking, checked] = await resumed.take(2);
    expect([checking.data.state, checked.data.state]).toEqual(['CHECKING', 'CHECKED']);
    expect(Number(checking.id)).toBeGreaterThan(allocated.data.id as number);
  });

  it('tells a client that resumes from before the buffer that it missed events, then sends what the buffer holds', async () => {
    await start({ eventsBufferSize: 2 });
    await act(app, '/grid/101', 'start');
    const keeper = await open();
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: CHECKED_AT } });
    const seen = await keeper.take(7);
    await settled();
    const late = await open('?lastEventId=1');
    const missed = await late.next();
    expect(missed.event).toBe('stream.reset');
    expect(missed.id).toBeUndefined();
    expect(missed.data).toMatchObject({ type: 'stream.reset', lastId: Number(seen[6].id) });
    const [a, b] = await late.take(2);
    expect([a.id, b.id]).toEqual([seen[5].id, seen[6].id]);
  });

  it('needs the admin token like the rest of the control API', async () => {
    await start({ adminToken: 'sesame' });
    const refused = await app.inject({ url: '/_emulator/events' });
    expect(refused.statusCode).toBe(401);
    const reader = await open('', { authorization: 'Bearer sesame' });
    expect(reader.status).toBe(200);
  });

  it('answers HEAD with the headers alone, opening no stream', async () => {
    await start();
    const head = await app.inject({ method: 'HEAD', url: '/_emulator/events' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toContain('text/event-stream');
    expect(world().events.listeners).toBe(0);
  });

  it('refuses a stream past EVENTS_MAX_STREAMS with 503', async () => {
    await start({ eventsMaxStreams: 1 });
    await open();
    const refused = await app.inject({ url: '/_emulator/events' });
    expect(refused.statusCode).toBe(503);
    expect(refused.json().message).toBe('1 event streams are open on this world and EVENTS_MAX_STREAMS is 1; close some or raise it');
  });

  it('sends annotation changes and fault rules', async () => {
    await start();
    const reader = await open('?kind=annotation,fault');
    const created = await app.inject({
      method: 'POST',
      url: '/concerto/mpulse/api/annotations/v1/',
      headers: { 'x-auth-token': 'test-token' },
      payload: { title: 'deploy', start: T0, text: 'v2', domainIds: [] },
    });
    const fault = await app.inject({ method: 'POST', url: '/_emulator/faults', payload: { path: '/x', action: { status: 500 } } });
    expect(created.statusCode).toBe(200);
    expect(fault.statusCode).toBe(201);
    const [a, f] = await reader.take(2);
    expect(a.data).toMatchObject({ type: 'annotation.created', kind: 'annotation', resourceId: created.json().id, view: { title: 'deploy' } });
    expect(f.data).toMatchObject({ type: 'fault.added', kind: 'fault', resourceId: fault.json().id });
  });

  it('sends alert fires, clears and disables with the alert as the view', async () => {
    ({ app, clock } = await makeApp({
      alerts: [{ uid: 'cpu-high', name: 'CPU high', enabled: true, message: 'CPU above 90%', channels: [], state: 'cleared', history: [] }],
    }));
    base = await listen(app);
    const reader = await open('?kind=alert');
    expect((await app.inject({ method: 'POST', url: '/concerto/mpulse/api/alerts/cpu-high/fire', payload: {} })).statusCode).toBe(204);
    expect((await app.inject({ method: 'POST', url: '/concerto/mpulse/api/alerts/cpu-high/clear', payload: {} })).statusCode).toBe(204);
    expect((await app.inject({ method: 'PATCH', url: '/_emulator/alerts/cpu-high', payload: { enabled: false } })).statusCode).toBe(200);
    const events = await reader.take(3);
    expect(events.map((e) => [e.event, e.data.resourceId])).toEqual([
      ['alert.fired', 'cpu-high'],
      ['alert.cleared', 'cpu-high'],
      ['alert.disabled', 'cpu-high'],
    ]);
    expect(events[0].data.view).toMatchObject({ uid: 'cpu-high', state: 'firing' });
  });

  it("sends a composition instance's play, step by step, with the view its GET answers; then an import", async () => {
    ({ app, clock } = await makeApp(compositionSeed()));
    base = await listen(app);
    const reader = await open('?kind=instance&types=transition,world.imported');
    const made = await createInstance(app, 'play');
    expect(made.statusCode).toBe(200);
    const id = made.json().instanceID as string;
    clock.advance(1000 + 1000 + 60_000 + 1000 + 1000 + 1000);
    await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { users: [], tokens: [] } });
    const events = await reader.take(8);
    expect(events.slice(0, 7).map((e) => e.data.state)).toEqual(['Loading', 'Starting', 'Playing', 'Closing', 'Writing', 'Completed', 'Unloaded']);
    expect(events.slice(0, 7).every((e) => e.data.resourceId === id && e.data.kind === 'instance')).toBe(true);
    expect(events[7].data.type).toBe('world.imported');
    expect(events[5].data.view).toMatchObject({ instanceID: id, state: 'Completed', url: `/concerto/services/rest/composition/instances/v1/${id}` });
  });

  it('sends repository objects made and deleted', async () => {
    await start();
    const reader = await open('?kind=object');
    const headers = { 'x-auth-token': 'test-token', 'content-type': 'application/json' };
    const props = { type: 'boomerang', name: 'boomerang-1.0', description: 'build', attributes: [], body: '<Boomerang/>' };
    const made = await app.inject({ method: 'PUT', url: '/concerto/services/rest/RepositoryService/v1/Objects', headers, payload: JSON.stringify(props) });
    expect(made.statusCode).toBe(200);
    const id = made.json().id;
    const gone = await app.inject({ method: 'DELETE', url: `/concerto/services/rest/RepositoryService/v1/Objects/boomerang/${id}`, headers: { 'x-auth-token': 'test-token' } });
    expect(gone.statusCode).toBeLessThan(300);
    const [created, deleted] = await reader.take(2);
    expect(created.data).toMatchObject({ type: 'object.created', kind: 'object', resourceId: id });
    expect(deleted.data).toMatchObject({ type: 'object.deleted', kind: 'object', resourceId: id, objectType: 'boomerang' });
  });

  it("tells the default world's stream of sandboxes made and deleted, and ends a deleted sandbox's streams", async () => {
    await start();
    const main = await open('?kind=sandbox');
    expect((await app.inject({ method: 'PUT', url: '/_emulator/sandboxes/w1' })).statusCode).toBe(201);
    const inSandbox = await openSse(`${base}/sandbox/w1/_emulator/events`);
    readers.push(inSandbox);
    expect(inSandbox.status).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: '/_emulator/sandboxes/w1' })).statusCode).toBe(204);
    await inSandbox.ended;
    const [created, deleted] = await main.take(2);
    expect([created.event, created.data.resourceId, deleted.event, deleted.data.resourceId]).toEqual(['sandbox.created', 'w1', 'sandbox.deleted', 'w1']);
  });

  it('ends open streams when the app closes, without hanging', async () => {
    await start();
    const reader = await open();
    await app.close();
    await reader.ended;
    expect(world().events.listeners).toBe(0);
  });
});

describe('a client too slow to read', () => {
  it('is dropped once more than EVENTS_CLIENT_MAX_BYTES wait for it, never buffered without bound', async () => {
    await start();
    // A writable that never takes what it is given: a client that stopped reading.
    const stuck = new Writable({ write: () => undefined, highWaterMark: 1 });
    let dropped = false;
    const stream = new EventStream(stuck, {}, 4096, (d) => {
      dropped = d;
      world().events.unsubscribe(stream);
    });
    world().events.subscribe(stream);
    for (let i = 0; i < 200 && stream.isOpen; i++) {
      await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { scale: 1 + (i % 2) } });
      await settled();
    }
    expect(dropped).toBe(true);
    expect(stuck.destroyed).toBe(true);
    expect(stuck.writableLength).toBeLessThan(4096 + 2048);
    expect(world().events.listeners).toBe(0);
  });

  it('is not a client that reads at once, however many events a slice writes to it', async () => {
    await start({ eventsClientMaxBytes: 100 });
    let taken = 0;
    const quick = new Writable({ write: (chunk: Buffer, _e, done) => ((taken += chunk.length), done()) });
    let dropped = false;
    const stream = new EventStream(quick, {}, 100, (d) => {
      dropped = d;
      world().events.unsubscribe(stream);
    });
    world().events.subscribe(stream);
    await act(app, '/grid/101', 'start');
    await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: CHECKED_AT } });
    await settled();
    expect(dropped).toBe(false);
    expect(stream.isOpen).toBe(true);
    expect(taken).toBeGreaterThan(1000);
    stream.end();
  });
});
