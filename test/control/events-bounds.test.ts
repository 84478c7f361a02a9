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
