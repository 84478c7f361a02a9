import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import type { FastifyInstance } from 'fastify';
import { T0, makeApp, type TestApp } from '../helpers/app.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';
import type { State } from '../../src/state.js';
import type { AlertRule } from '../../src/alerts/rule-schemas.js';
import { RULE_FILTERS, RULE_TIMERS } from '../../src/alerts/rule-schemas.js';
import { DRILLDOWNS } from '../../src/query/params.js';
import { STANDARD_TIMERS } from '../../src/query/model.js';

const MIN = 60_000;
let app: FastifyInstance;
let clock: TestApp['clock'];
const readers: SseReader[] = [];
afterEach(async () => {
  readers.splice(0).forEach((r) => r.close());
  await app?.close();
});

/** "median page load time above 4 s for 5 minutes" over shop.example.com (median 2 s), an incident 3x slower from T0+10 to T0+30 min. */
const RULE: AlertRule = { app: 'shop.example.com', metric: 'PageLoad', comparison: 'above', threshold: 4, unit: 's', windowMinutes: 5 };

function seed(rule: Partial<AlertRule> = {}, alert: Record<string, unknown> = {}): Partial<State> {
  return {
    domains: [
      { id: 1, name: 'shop.example.com', apiKey: 'SHOP-KEY' },
      { id: 2, name: 'blog.example.com', apiKey: 'BLOG-KEY' },
    ],
    rumModels: [{ domainId: 1, beaconsPerMinute: 300, pageLoadMedianMs: 2000, pageLoadSigma: 0.5 }],
    incidents: [{ id: 1, domainId: 1, title: 'CDN outage', start: T0 + 10 * MIN, end: T0 + 30 * MIN, loadTimeFactor: 3, errorFactor: 1, trafficFactor: 1 }],
    alerts: [
      {
        uid: 'slow-pages',
        name: 'Slow pages',
        enabled: true,
        channels: [],
        state: 'cleared',
        history: [],
        rule: { ...RULE, ...rule },
        ...alert,
      } as State['alerts'][number],
    ],
  } as Partial<State>;
}

const get = async (uid = 'slow-pages') => {
  const res = await app.inject({ method: 'GET', url: `/_emulator/alerts/${uid}` });
  expect(res.statusCode).toBe(200);
  return res.json();
};

describe('threshold rules', () => {
  it('fire when an incident makes the window hold and clear after it ends, as the clock moves', async () => {
    ({ app, clock } = await makeApp(seed()));
    clock.advance(14 * MIN);
    // Four slow minutes (10..13) are not yet five.
    expect(await get()).toMatchObject({ state: 'cleared', history: [], ruleStatus: { holding: false, breaching: 4, evaluatedAt: T0 + 14 * MIN } });
    clock.advance(6 * MIN);
    const firing = await get();
    expect(firing).toMatchObject({ state: 'firing', lastTriggered: T0 + 15 * MIN, ruleStatus: { holding: true, breaching: 5 } });
    expect(firing.history).toEqual([
      { action: 'fire', at: T0 + 15 * MIN, by: 'rule', value: expect.any(Number), subject: 'Slow pages', message: expect.stringContaining('median PageLoad above 4 s for 5 minutes on shop.example.com') },
    ]);
    // The value is the minute's median, in seconds: about three times the model's 2 s.
    expect(firing.history[0].value).toBeGreaterThan(5);
    expect(firing.ruleStatus.value).toBeGreaterThan(5);
    clock.advance(20 * MIN);
    const cleared = await get();
    expect(cleared).toMatchObject({ state: 'cleared', lastCleared: T0 + 31 * MIN, ruleStatus: { holding: false, breaching: 0 } });
    expect(cleared.history.map((e: { action: string; at: number; by: string }) => [e.action, e.at, e.by])).toEqual([
      ['fire', T0 + 15 * MIN, 'rule'],
      ['clear', T0 + 31 * MIN, 'rule'],
    ]);
    expect(cleared.ruleStatus.value).toBeLessThan(4);
  });

  it('records each change at the instant the condition changed, however late the alert is read', async () => {
    ({ app, clock } = await makeApp(seed()));
    clock.advance(2 * 60 * MIN);
    const alert = await get();
    expect(alert.history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0 + 15 * MIN],
      ['clear', T0 + 31 * MIN],
    ]);
    expect(alert).toMatchObject({ lastTriggered: T0 + 15 * MIN, lastCleared: T0 + 31 * MIN, ruleStatus: { evaluatedAt: T0 + 120 * MIN } });
  });

  it('over a jump longer than two hours, evaluates the last two hours minute by minute and records an earlier change at their start', async () => {
    const long = { id: 1, domainId: 1, start: T0 + 10 * MIN, end: T0 + 10 * 60 * MIN, loadTimeFactor: 3, errorFactor: 1, trafficFactor: 1 };
    ({ app, clock } = await makeApp({ ...seed(), incidents: [long] }));
    clock.advance(5 * 60 * MIN);
    // The fire happened at T0+15 min, in the part not evaluated: it is known from T0+3 h on.
    expect(await get()).toMatchObject({ state: 'firing', history: [{ action: 'fire', at: T0 + 3 * 60 * MIN }], ruleStatus: { evaluatedAt: T0 + 5 * 60 * MIN } });
    clock.advance(6 * 60 * MIN);
    // Within two hours of the end: the clear is at its own minute.
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0 + 3 * 60 * MIN],
      ['clear', T0 + 10 * 60 * MIN + MIN],
    ]);
  });

  it('a longer window fires later; a rule below its threshold and one with filters follow their own beacons', async () => {
    ({ app, clock } = await makeApp(seed({ windowMinutes: 8 })));
    clock.advance(60 * MIN);
    expect((await get()).history.map((e: { at: number }) => e.at)).toEqual([T0 + 18 * MIN, T0 + 31 * MIN]);
    await app.close();
    // The incident leaves the beacon count alone: "fewer than 10 beacons a minute" never holds.
    ({ app, clock } = await makeApp(seed({ metric: 'Beacons', comparison: 'below', threshold: 10, unit: undefined })));
    clock.advance(60 * MIN);
    expect(await get()).toMatchObject({ history: [], ruleStatus: { holding: false } });
    await app.close();
    // A page group the app does not have keeps no beacons: a timer rule on it never holds.
    ({ app, clock } = await makeApp(seed({ filters: { 'page-group': 'Nowhere' } })));
    clock.advance(60 * MIN);
    expect(await get()).toMatchObject({ history: [], ruleStatus: { holding: false, value: null } });
  });

  it('a disabled alert records nothing, and fires at the next change once enabled', async () => {
    ({ app, clock } = await makeApp(seed({}, { enabled: false })));
    clock.advance(20 * MIN);
    expect(await get()).toMatchObject({ state: 'cleared', history: [], ruleStatus: { holding: true } });
    clock.advance(20 * MIN);
    expect(await get()).toMatchObject({ state: 'cleared', history: [], ruleStatus: { holding: false } });
    const enabled = await app.inject({ method: 'PATCH', url: '/_emulator/alerts/slow-pages', payload: { enabled: true } });
    expect(enabled.statusCode).toBe(200);
    // A second incident, added at run time, fires it.
    const incident = await app.inject({
      method: 'POST',
      url: '/_emulator/incidents',
      payload: { domainId: 1, start: T0 + 50 * MIN, end: T0 + 60 * MIN, loadTimeFactor: 3 },
    });
    expect(incident.statusCode).toBe(201);
    clock.advance(30 * MIN);
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0 + 55 * MIN],
      ['clear', T0 + 61 * MIN],
    ]);
  });

  it('fires at the load when the window already holds then (a seed loaded during an incident)', async () => {
    const ongoing = { id: 1, domainId: 1, start: T0 - 20 * MIN, end: T0 + 10 * MIN, loadTimeFactor: 3, errorFactor: 1, trafficFactor: 1 };
    ({ app, clock } = await makeApp({ ...seed(), incidents: [ongoing] }));
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([['fire', T0]]);
    clock.advance(15 * MIN);
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0],
      ['clear', T0 + 11 * MIN],
    ]);
  });

  it('goes on from an export: an import neither fires again nor forgets the window', async () => {
    ({ app, clock } = await makeApp(seed()));
    clock.advance(20 * MIN);
    const exported = (await app.inject({ method: 'GET', url: '/_emulator/state' })).json();
    const alert = exported.alerts.find((a: { uid: string }) => a.uid === 'slow-pages');
    expect(alert).toMatchObject({ state: 'firing', rule: RULE, ruleStatus: { holding: true, evaluatedAt: T0 + 20 * MIN } });
    const put = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: exported });
    expect(put.statusCode).toBe(200);
    clock.advance(20 * MIN);
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0 + 15 * MIN],
      ['clear', T0 + 31 * MIN],
    ]);
  });

  it('go on from an export loaded on a clock a minute and a half later, off the minutes', async () => {
    ({ app, clock } = await makeApp(seed()));
    clock.advance(20 * MIN);
    const exported = (await app.inject({ method: 'GET', url: '/_emulator/state' })).json();
    clock.advance(90_000);
    // On this clock, the export's emulated times move by 90 s: the rule's status is off the minutes.
    expect((await app.inject({ method: 'PUT', url: '/_emulator/state?clock=real', payload: exported })).statusCode).toBe(200);
    expect(await get()).toMatchObject({ state: 'firing', ruleStatus: { holding: true, evaluatedAt: T0 + 21 * MIN } });
    clock.advance(20 * MIN);
    // The incident's times were absolute: the clear is at its own minute; the fire moved with the export.
    expect((await get()).history.map((e: { action: string; at: number }) => [e.action, e.at])).toEqual([
      ['fire', T0 + 15 * MIN + 90_000],
      ['clear', T0 + 31 * MIN],
    ]);
  });

  it("are no lifecycle: the clock's next transition leaves them out", async () => {
    ({ app, clock } = await makeApp(seed()));
    expect((await app.inject({ method: 'GET', url: '/_emulator/clock' })).json()).not.toHaveProperty('nextTransitionAt');
  });

  it('wake the event stream at the fire while the clock runs on its own, with no request', async () => {
    ({ app, clock } = await makeApp(seed()));
    const base = await listen(app);
    const reader = await openSse(`${base}/_emulator/events?types=alert.fired`);
    readers.push(reader);
    // 600 times real time: the fire, 15 emulated minutes on, comes about 1.5 s later.
    const running = await app.inject({ method: 'PUT', url: '/_emulator/clock', payload: { frozen: false, scale: 600 } });
    expect(running.statusCode).toBe(200);
    const fired = await reader.next(20_000);
    expect(fired.data).toMatchObject({ type: 'alert.fired', resourceId: 'slow-pages', at: T0 + 15 * MIN });
  });

  it('sends alert.fired and alert.cleared on the event stream at their emulated instants when only the clock moves', async () => {
    ({ app, clock } = await makeApp(seed()));
    const base = await listen(app);
    const reader = await openSse(`${base}/_emulator/events?kind=alert`);
    readers.push(reader);
    const advance = await app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 40 * MIN } });
    expect(advance.statusCode).toBe(200);
    const [fired, cleared] = await reader.take(2);
    expect(fired.event).toBe('alert.fired');
    expect(fired.data).toMatchObject({ type: 'alert.fired', kind: 'alert', resourceId: 'slow-pages', at: T0 + 15 * MIN });
    expect(fired.data.entry).toMatchObject({ action: 'fire', by: 'rule', at: T0 + 15 * MIN });
    expect(fired.data.view).toMatchObject({ uid: 'slow-pages', rule: RULE });
    expect(fired.data.view).not.toHaveProperty('history');
    expect(cleared.data).toMatchObject({ type: 'alert.cleared', at: T0 + 31 * MIN, entry: { action: 'clear', at: T0 + 31 * MIN } });
  });
});

describe('rule checks', () => {
  it('refuses a rule naming an unknown app, metric or filter, with the nearest name and the JSON path', async () => {
    const bad = seed({ app: 'shop.exmple.com', metric: 'PageLod' as AlertRule['metric'], filters: { contry: 'US' } as AlertRule['filters'] });
    await expect(makeApp(bad)).rejects.toThrow(/\$\.alerts\[0\]\.rule\.metric.*did you mean 'PageLoad'/s);
    await expect(makeApp(seed({ filters: { contry: 'US' } as AlertRule['filters'] }))).rejects.toThrow(/\$\.alerts\[0\]\.rule\.filters.*contry.*did you mean 'country'/s);
    await expect(makeApp(seed({ app: 'shop.exmple.com' }))).rejects.toThrow("$.alerts[0].rule.app: no app is named 'shop.exmple.com' (did you mean 'shop.example.com'?)");
    await expect(makeApp(seed({ metric: 'Beacons', percentile: 95, unit: undefined }))).rejects.toThrow('$.alerts[0].rule.percentile: Beacons is not a timer; only timers have percentiles');
    await expect(makeApp(seed({ unit: 'percent' }))).rejects.toThrow('$.alerts[0].rule.unit: PageLoad is measured in ms or s, not percent');
  });

  it('check names the file, line and JSON path of each bad rule', async () => {
    const dir = join('test-results', 'rule-check');
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(join(dir, 'domains.json'), JSON.stringify({ domains: [{ id: 1, name: 'shop.example.com', apiKey: 'SHOP-KEY' }] }));
      const alert = (uid: string, rule: object) => JSON.stringify({ uid, name: uid, rule: { ...RULE, ...rule } });
      const text = `{\n  "alerts": [\n    ${alert('a', { app: 'shop.exmple.com' })},\n    ${alert('b', { metric: 'PageLod' })},\n    ${alert('c', { filters: { contry: 'US' } })}\n  ]\n}\n`;
      await writeFile(join(dir, 'alerts.json'), text);
      let out = '';
      const code = await runCli(['check', dir], {}, { out: (t) => void (out += t), err: (t) => void (out += t) });
      expect(code).toBe(1);
      expect(out).toMatch(new RegExp(`${dir}/alerts\\.json:3:\\d+: \\$\\.alerts\\[0\\]\\.rule\\.app: no app is named 'shop\\.exmple\\.com' \\(did you mean 'shop\\.example\\.com'\\?\\)`));
      expect(out).toMatch(new RegExp(`${dir}/alerts\\.json:4:\\d+: \\$\\.alerts\\[1\\]\\.rule\\.metric: .*did you mean 'PageLoad'`));
      expect(out).toMatch(new RegExp(`${dir}/alerts\\.json:5:\\d+: \\$\\.alerts\\[2\\]\\.rule\\.filters.*did you mean 'country'`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses more than 20 alerts with a rule', async () => {
    const [one] = seed().alerts!;
    const many = Array.from({ length: 21 }, (_, i) => ({ ...one, uid: `rule-${i}` }));
    await expect(makeApp({ ...seed(), alerts: many })).rejects.toThrow('$.alerts[20].rule: at most 20 alerts may have a rule');
  });

  it('answers 400 naming the field to an import with a bad rule', async () => {
    ({ app, clock } = await makeApp(seed()));
    const res = await app.inject({ method: 'PUT', url: '/_emulator/state', payload: { ...seed({ app: 'nowhere' }), users: [], tokens: [] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain("$.alerts[0].rule.app: no app is named 'nowhere'");
  });

  it("the rule's names are the Query API's: its timers and its filters", () => {
    expect([...RULE_TIMERS]).toEqual(STANDARD_TIMERS.map((t) => t.id));
    expect([...RULE_FILTERS].sort()).toEqual([...DRILLDOWNS].sort());
  });
});
