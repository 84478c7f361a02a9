import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { BUNDLED_FIXTURES_DIR } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { loadFixtures, parseState, type State } from '../../src/state.js';
import { T0, makeDemoApp } from '../helpers/app.js';
import { watchResponses } from '../helpers/conformance.js';

/**
 * An export carries its clock: loaded on it (PUT /_emulator/state, a sandbox made from it)
 * every interface answers what the source answered; loaded as fixtures a week later, on real
 * time, every age and every lifecycle position is the same.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const DEMO = { 'x-auth-token': 'demo-token' };
const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPO = '/concerto/services/rest/RepositoryService/v1';
const ANNOTATIONS = '/concerto/mpulse/api/annotations/v1';
const INSTANCES = '/concerto/services/rest/composition/instances/v1';
const RESULTS = '/concerto/services/rest/Results/v1';
const QUERY = '/concerto/mpulse/api/v2';
const SHOP = 'SHOP9-X4T7K-M2QRB-V8DNE-H5WZC';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

/** An app on a ManualClock at `start` whose real time is `wall` (what a reset to real time reads). */
async function appAt(start: number, fixtures: State, config: Partial<Config> = {}, wall: () => number = () => start) {
  const clock = new ManualClock(start, wall);
  const app = await buildApp({ config, clock, fixtures });
  watchResponses(app);
  apps.push(app);
  return { app, clock };
}

let demo: State | undefined;
const demoSeed = async () => (demo ??= await loadFixtures(BUNDLED_FIXTURES_DIR));

async function ok(app: FastifyInstance, options: InjectOptions) {
  const res = await app.inject(options);
  expect(res.statusCode, `${JSON.stringify(options)}: ${res.body}`).toBeLessThan(300);
  return res;
}

/**
 * The demo, used: a grid started and part-way through its start, a composition playing on
 * the grid the seed starts, an alert fired, an annotation and an incident added (one
 * relative), a session logged in, the clock moved on by hours and minutes.
 */
async function usedDemo(): Promise<{ app: FastifyInstance; clock: ManualClock; token: string }> {
  const { app, clock } = await makeDemoApp();
  apps.push(app);
  clock.advance(2 * HOUR);
  await ok(app, { method: 'POST', url: `${INSTANCES}?command=play`, headers: DEMO, payload: { compositionName: '/Tests/Checkout Load' } });
  clock.advance(90_000);
  await ok(app, { method: 'POST', url: `${CLOUD}/grid/101/action`, headers: DEMO, payload: { action: 'start' } });
  await ok(app, { method: 'POST', url: '/concerto/mpulse/api/alerts/demo-alert/fire', headers: DEMO, payload: { message: 'fired' } });
  await ok(app, { method: 'POST', url: ANNOTATIONS, headers: DEMO, payload: { title: 'deploy', text: 'x', start: T0 - DAY, domainIds: [12346] } });
  await ok(app, { method: 'POST', url: '/_emulator/incidents', payload: { domainId: 12346, startAgoMs: 30 * 60_000, endAgoMs: -30 * 60_000, loadTimeFactor: 3 } });
  const token = (await ok(app, { method: 'PUT', url: `${REPO}/Tokens`, payload: { userName: 'demo@example.com', password: 'demo' } })).json().token as string;
  // Grid 101 is ALLOCATING, its servers part-way.
  clock.advance(10_123);
  return { app, clock, token };
}

/** Every read of every interface, by interface: what a copy must answer the same. */
const READS: Array<[string, string[]]> = [
  ['provisioning', [`${CLOUD}/grid`, `${CLOUD}/grid/101`, `${CLOUD}/grid/102`, `${CLOUD}/cloudserver`, '/_emulator/lifecycles', '/_emulator/clock']],
  ['annotations', [ANNOTATIONS, `${ANNOTATIONS}?from=${T0 - 7 * DAY}`]],
  ['alerts', ['/_emulator/alerts', '/_emulator/alerts/demo-alert']],
  ['objects', [`${REPO}/Objects/grid`, `${REPO}/Objects/domain`, `${REPO}/Objects/alert`, `${REPO}/Objects/composition`, `${REPO}/Objects/result`, `${REPO}/Objects/user`]],
  ['compositions', [INSTANCES, RESULTS]],
  ['query', ['/_emulator/incidents', `${QUERY}/${SHOP}/summary`, `${QUERY}/${SHOP}/timers-metrics?date-comparator=LastHour`]],
];

async function readAll(app: FastifyInstance, prefix = '', headers: Record<string, string> = DEMO): Promise<Record<string, { status: number; body: string; now: unknown }>> {
  const answers: Record<string, { status: number; body: string; now: unknown }> = {};
  for (const [, urls] of READS) {
    for (const url of urls) {
      const res = await app.inject({ url: `${prefix}${url}`, headers });
      answers[url] = { status: res.statusCode, body: res.body, now: res.headers['x-emulator-now'] };
    }
  }
  return answers;
}

describe('an export carries its clock', () => {
  it('is written with the clock, and the relative times of the seed relative to it', async () => {
    const { app, clock } = await usedDemo();
    const exported = (await ok(app, { url: '/_emulator/state' })).json() as State;
    expect(exported.clock).toEqual({ now: clock.now(), scale: 1, frozen: true, loadedAt: T0 });
    // The demo's annotations came with startAgoMs: they keep it, aged by the time that passed.
    const seed = await demoSeed();
    const elapsed = clock.now() - T0;
    const seeded = seed.annotations.find((a) => a.startAgoMs !== undefined)!;
    expect(exported.annotations.find((a) => a.id === seeded.id)).toMatchObject({ startAgoMs: seeded.startAgoMs! + elapsed });
    // One added on stage (an absolute start given by a create) is written relative too: it keeps its age.
    expect(exported.annotations.find((a) => a.title === 'deploy')).toMatchObject({ startAgoMs: clock.now() - (T0 - DAY) });
    const incident = exported.incidents.find((i) => i.loadTimeFactor === 3)!;
    expect(incident).toMatchObject({ startAgoMs: 30 * 60_000 + 10_123, endAgoMs: -30 * 60_000 + 10_123 });
  });

  it.each([
    ['the default world of another emulator, whose clock is days apart', ''],
    ['a sandbox made from it', '/sandbox/copy'],
  ])('loaded on its clock into %s, answers every read of every interface as the source did', async (_, prefix) => {
    const { app, token } = await usedDemo();
    const text = (await ok(app, { url: '/_emulator/state' })).body;
    const source = await readAll(app);
    const sourceAsUser = await readAll(app, '', { 'x-auth-token': token });

    const copy = await appAt(T0 + 3 * DAY, parseState({}, 'empty'));
    const load = prefix
      ? { method: 'PUT' as const, url: '/_emulator/sandboxes/copy', headers: { 'content-type': 'application/json' }, payload: text }
      : { method: 'PUT' as const, url: '/_emulator/state', headers: { 'content-type': 'application/json' }, payload: text };
    await ok(copy.app, load);
    // It exports exactly what it was given (before the reads below use its sessions).
    expect((await ok(copy.app, { url: `${prefix}/_emulator/state` })).body).toBe(text);
    const copied = await readAll(copy.app, prefix);
    for (const [name, urls] of READS) {
      for (const url of urls) expect(copied[url], `${name}: GET ${url}`).toEqual(source[url]);
    }
    expect(await readAll(copy.app, prefix, { 'x-auth-token': token })).toEqual(sourceAsUser);
  });

  it('loaded as the fixtures of an emulator started a week later, shows the same ages and lifecycle positions', async () => {
    const { app, clock } = await usedDemo();
    const exported = (await ok(app, { url: '/_emulator/state' })).json() as State;
    const later = clock.now() + 7 * DAY + 5 * HOUR;
    const copy = await appAt(later, parseState(exported, 'export'));

    // Annotations: a relative one (of the seed, or added on stage) is as many hours ago as it
    // was; an absolute one (a fixture's start) is where it was.
    const before = (await ok(app, { url: ANNOTATIONS, headers: DEMO })).json() as Array<{ id: number; start: number; lastModified: number }>;
    const after = (await ok(copy.app, { url: ANNOTATIONS, headers: DEMO })).json() as Array<{ id: number; start: number; lastModified: number }>;
    const relative = new Set(exported.annotations.filter((a) => a.startAgoMs !== undefined).map((a) => a.id));
    expect(relative.size).toBeGreaterThan(5);
    expect(relative.has(exported.annotations.find((a) => a.title === 'deploy')!.id)).toBe(true);
    const ageOf = (list: typeof before, now: number) => new Map(list.map((a) => [a.id, relative.has(a.id) ? now - a.start : a.start]));
    expect(ageOf(after, later)).toEqual(ageOf(before, clock.now()));
    const modified = (list: typeof before, now: number) => list.map((a) => now - a.lastModified);
    expect(modified([...after].sort((a, b) => a.id - b.id), later)).toEqual(modified([...before].sort((a, b) => a.id - b.id), clock.now()));

    // Lifecycles: every resource in the same state, as long in it, as long before the next.
    const positions = async (a: FastifyInstance, now: number) =>
      ((await ok(a, { url: '/_emulator/lifecycles' })).json().resources as Array<{ kind: string; id: number; state: string; since: number; next?: { at: number } }>).map(
        (r) => ({ kind: r.kind, id: r.id, state: r.state, since: now - r.since, next: r.next ? r.next.at - now : undefined }),
      );
    const was = await positions(app, clock.now());
    expect(was.find((r) => r.kind === 'grid' && r.id === 101)!.next).toBeGreaterThan(0);
    expect(await positions(copy.app, later)).toEqual(was);
    const next = async (a: FastifyInstance, now: number) => (await ok(a, { url: '/_emulator/clock' })).json().nextTransitionAt - now;
    expect(await next(copy.app, later)).toBe(await next(app, clock.now()));
    // A composition playing: as far into its play, started as long ago.
    const instances = async (a: FastifyInstance, now: number) =>
      ((await ok(a, { url: INSTANCES, headers: DEMO })).json().instances as Array<{ startTime: string }>).map(({ startTime, ...rest }) => ({
        ...rest,
        startedAgo: now - Date.parse(startTime),
      }));
    const playing = await instances(app, clock.now());
    expect(playing).toMatchObject([{ state: 'Playing' }]);
    expect(await instances(copy.app, later)).toEqual(playing);

    // Alerts fired as long ago; incidents added relative as long ago.
    const fired = async (a: FastifyInstance, now: number) => ((await ok(a, { url: '/_emulator/alerts/demo-alert' })).json().history as Array<{ at: number }>).map((e) => now - e.at);
    expect(await fired(copy.app, later)).toEqual(await fired(app, clock.now()));
    const incident = async (a: FastifyInstance, now: number) => {
      const found = ((await ok(a, { url: '/_emulator/incidents' })).json() as Array<{ start: number; end: number; loadTimeFactor: number }>).find((i) => i.loadTimeFactor === 3)!;
      return [now - found.start, now - found.end];
    };
    expect(await incident(copy.app, later)).toEqual(await incident(app, clock.now()));
  });

  it('saved in a fixtures folder, seeds an emulator that shows the same ages; one file with a clock per folder', async () => {
    const { app, clock } = await usedDemo();
    const dir = await mkdtemp(join(tmpdir(), 'export-clock-'));
    try {
      await writeFile(join(dir, 'demo.json'), (await ok(app, { url: '/_emulator/state' })).body);
      // A file written by hand beside it: its times are read against the export's clock too.
      await writeFile(join(dir, 'more.json'), JSON.stringify({ annotations: [{ id: 7, title: 't', text: 'x', startAgoMs: HOUR, domainIds: [], user: 'u' }] }));
      const folder = await loadFixtures(dir);
      expect(folder.clock).toEqual({ now: clock.now(), scale: 1, frozen: true, loadedAt: T0 });
      const later = clock.now() + 7 * DAY;
      const copy = await appAt(later, folder);
      const ages = async (a: FastifyInstance, now: number) =>
        ((await ok(a, { url: ANNOTATIONS, headers: DEMO })).json() as Array<{ id: number; start: number }>)
          .filter((x) => x.id !== 7)
          .map((x) => [x.id, now - x.start]);
      const seed = await demoSeed();
      const relative = new Set(seed.annotations.filter((x) => x.startAgoMs !== undefined).map((x) => x.id));
      const relativeAges = async (a: FastifyInstance, now: number) => (await ages(a, now)).filter(([id]) => relative.has(id));
      expect(await relativeAges(copy.app, later)).toEqual(await relativeAges(app, clock.now()));
      const grid = async (a: FastifyInstance, now: number) => {
        const { state, next } = (await ok(a, { url: '/_emulator/lifecycles/grid/101' })).json();
        return { state, next: next.at - now };
      };
      expect(await grid(copy.app, later)).toEqual(await grid(app, clock.now()));

      await writeFile(join(dir, 'other.json'), JSON.stringify({ clock: { now: T0, scale: 1, frozen: false } }));
      await expect(loadFixtures(dir)).rejects.toThrow(/other\.json:1:2: \$\.clock: a folder holds at most one file with a clock \(an export\); also at \S*demo\.json:\d+:\d+ \$\.clock/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('loaded with ?clock=real, runs on the world\'s own time with the same ages', async () => {
    const { app, clock } = await usedDemo();
    const text = (await ok(app, { url: '/_emulator/state' })).body;
    const copy = await appAt(T0 + 30 * DAY, parseState({}, 'empty'));
    await ok(copy.app, { method: 'PUT', url: '/_emulator/state?clock=real', headers: { 'content-type': 'application/json' }, payload: text });
    expect(copy.clock.now()).toBe(T0 + 30 * DAY);
    const grid = async (a: FastifyInstance) => (await ok(a, { url: '/_emulator/lifecycles/grid/101' })).json();
    const [was, is] = [await grid(app), await grid(copy.app)];
    expect(is.state).toBe(was.state);
    expect(is.next.at - copy.clock.now()).toBe(was.next.at - clock.now());
    const bad = await copy.app.inject({ method: 'PUT', url: '/_emulator/state?clock=later', headers: { 'content-type': 'application/json' }, payload: text });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('querystring field \'clock\' must be one of "keep", "real"');
    const unknown = await copy.app.inject({ method: 'PUT', url: '/_emulator/state?clok=real', headers: { 'content-type': 'application/json' }, payload: text });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe("querystring: unknown field 'clok'");
  });

  it('read in a worker thread (a body from 256 KiB on), still carries its clock', async () => {
    const { app, clock } = await usedDemo();
    const exported = (await ok(app, { url: '/_emulator/state' })).json() as State;
    const user = 'demo@example.com';
    for (let i = 0; i < 3000; i++) exported.annotations.push({ id: 2_000_000 + i, title: `note ${i}`, text: 'x'.repeat(60), start: T0 - i * 60_000, domainIds: [12346], user } as State['annotations'][number]);
    const text = JSON.stringify(exported);
    expect(text.length).toBeGreaterThan(256 * 1024);
    const copy = await appAt(T0 + 3 * DAY, parseState({}, 'empty'));
    await ok(copy.app, { method: 'PUT', url: '/_emulator/state', headers: { 'content-type': 'application/json' }, payload: text });
    expect(copy.clock.now()).toBe(clock.now());
  });

  it('refused while its stores are built, leaves the clock and the state as they were', async () => {
    const copy = await appAt(T0 + 3 * DAY, await demoSeed());
    const before = (await ok(copy.app, { url: '/_emulator/state' })).body;
    const bad = {
      clock: { now: T0, scale: 1, frozen: true },
      users: [{ userName: 'a', password: 'p' }],
      annotations: [{ id: 1, title: 't', text: 'x', startAgoMs: 10, end: T0 - 1000, domainIds: [], user: 'a' }],
    };
    const res = await copy.app.inject({ method: 'PUT', url: '/_emulator/state', payload: bad });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/end \(\d+\) is before start/);
    expect(copy.clock.now()).toBe(T0 + 3 * DAY);
    expect((await ok(copy.app, { url: '/_emulator/state' })).body).toBe(before);
  });

  it('without a clock (an export made before exports had one), loads as before: times as they are, the clock untouched', async () => {
    const { app } = await usedDemo();
    const { clock: _clock, ...old } = (await ok(app, { url: '/_emulator/state' })).json() as State;
    const copy = await appAt(T0 + 3 * DAY, parseState({}, 'empty'));
    await ok(copy.app, { method: 'PUT', url: '/_emulator/state', payload: old });
    expect(copy.clock.now()).toBe(T0 + 3 * DAY);
    const exported = (await ok(copy.app, { url: '/_emulator/state' })).json() as State;
    // Absolute times as they were; the annotations' relative times resolved against the copy's clock.
    expect(exported.grids).toEqual(old.grids);
    expect(exported.alerts.filter((a) => !a.rule)).toEqual(old.alerts.filter((a) => !a.rule));
    // An alert with a threshold rule went on watching over the days the clock moved on: its history
    // as it was, then what its rule found since (the demo's relative incident, resolved against the copy's clock).
    for (const was of old.alerts.filter((a) => a.rule)) {
      const now = exported.alerts.find((a) => a.uid === was.uid)!;
      expect(now.history.slice(0, was.history.length)).toEqual(was.history);
      expect(now.history.slice(was.history.length).every((e) => e.by === 'rule' && e.at > was.ruleStatus!.evaluatedAt)).toBe(true);
    }
    expect(exported.annotations.map((a) => a.startAgoMs)).toEqual(old.annotations.map((a) => a.startAgoMs));
  });
});

describe('POST /_emulator/reset', () => {
  it('keeps emulated time by default, and with ?clock=real returns it to real time, the seed resolved against it', async () => {
    const wall = T0 + 1234;
    const { app, clock } = await appAt(T0, await demoSeed(), {}, () => wall);
    clock.advance(2 * DAY);
    const kept = await ok(app, { method: 'POST', url: '/_emulator/reset' });
    expect(kept.json().clock.now).toBe(T0 + 2 * DAY);

    const real = await ok(app, { method: 'POST', url: '/_emulator/reset?clock=real' });
    expect(real.json().clock.now).toBe(wall);
    expect(clock.now()).toBe(wall);
    // "Last 7 days" is the browser's again: the seed's relative annotations are as old as the seed says.
    const seed = await demoSeed();
    const seeded = seed.annotations.find((a) => a.startAgoMs !== undefined)!;
    const listed = (await ok(app, { url: ANNOTATIONS, headers: DEMO })).json() as Array<{ id: number; start: number }>;
    expect(listed.find((a) => a.id === seeded.id)!.start).toBe(wall - seeded.startAgoMs!);

    // A sandbox's clock follows the same real time.
    await ok(app, { method: 'PUT', url: '/_emulator/sandboxes/s1' });
    await ok(app, { method: 'POST', url: '/sandbox/s1/_emulator/clock/advance', payload: { ms: 2 * DAY } });
    expect((await ok(app, { method: 'POST', url: '/sandbox/s1/_emulator/reset?clock=real' })).json().clock.now).toBe(wall);

    const bad = await app.inject({ method: 'POST', url: '/_emulator/reset?clock=yesterday' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('querystring field \'clock\' must be one of "keep", "real"');
    expect(clock.now()).toBe(wall);
  });

  it('of a seed that is an export: on real time by default (SEED_CLOCK=real), on its clock with SEED_CLOCK=keep', async () => {
    const { app, clock } = await usedDemo();
    const exported = parseState((await ok(app, { url: '/_emulator/state' })).json(), 'export');
    const real = await appAt(T0 + 7 * DAY, exported);
    expect(real.clock.now()).toBe(T0 + 7 * DAY);
    const keep = await appAt(T0 + 7 * DAY, exported, { seedClock: 'keep' });
    expect(keep.clock.now()).toBe(clock.now());
    keep.clock.advance(HOUR);
    await ok(keep.app, { method: 'POST', url: '/_emulator/reset' });
    expect(keep.clock.now()).toBe(clock.now());
    expect(await readAll(keep.app)).toEqual(await readAll(app));
  });
});
