import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { makeDemoApp } from '../../helpers/app.js';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, listen, serveDemo, waitForText, waitUntil, watchPageErrors, type Served } from './harness.js';

// The page follows the world's event stream instead of polling. These tests script the stream
// (see fakeEventStream), to its contract:
// `id:`, `event:` and `data:` lines (data: {id, type, at, kind?, resourceId?, state?, view?}),
// a heartbeat as a comment line, resumption by Last-Event-ID.

const CLOUD = '/concerto/services/rest/CloudService/v1';
const TOKEN = { 'x-auth-token': 'demo-token' };

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

interface FakeStream {
  /** The request headers of each connection, in order. */
  connects: Array<Record<string, string | string[] | undefined>>;
  send(type: string, data?: Record<string, unknown>): number;
  comment(text: string): void;
  /** Writes text as it is, for line ends and chunks a server may choose. */
  raw(text: string): void;
  /** Ends every open connection, as a restarting server would. */
  drop(): void;
  /** While set, the stream's path answers 404, as an emulator without the stream would. */
  missing: boolean;
}

/**
 * A scripted event stream at /_emulator/events (and under /sandbox/<name>/), in front of the
 * emulator's own: the server's request listeners are replaced by one that answers the stream's
 * path itself and hands every other request to them, so that a test writes exactly the
 * frames, line ends and chunks it means to.
 */
function fakeEventStream(app: FastifyInstance): FakeStream {
  const open: ServerResponse[] = [];
  const connects: FakeStream['connects'] = [];
  let id = 0;
  const server = app.server;
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const match = /^(?:\/sandbox\/([^/]+))?\/_emulator\/events$/.exec(path);
    if (!match || req.method !== 'GET') {
      for (const handler of handlers) handler.call(server, req, res);
      return;
    }
    if (fake.missing) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ statusCode: 404, error: 'Not Found', message: `no resource at GET ${path}` }));
      return;
    }
    connects.push({ ...req.headers, sandbox: match[1] });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': connected\n\n');
    open.push(res);
    res.on('close', () => open.splice(open.indexOf(res), 1));
  });
  const write = (text: string) => {
    for (const response of open) response.write(text);
  };
  const fake: FakeStream = {
    missing: false,
    connects,
    send(type, data = {}) {
      id++;
      write(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ id, type, ...data })}\n\n`);
      return id;
    },
    comment: (text) => write(`: ${text}\n\n`),
    raw: write,
    drop() {
      for (const response of [...open]) response.end();
    },
  };
  return fake;
}

describe.skipIf(!HAVE_CHROMIUM)('the dashboard follows the event stream', () => {
  let served: Served;
  let stream: FakeStream;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  /** Every request the page makes, but the event stream's. */
  let requests: string[] = [];

  const grid = (id: number) => page.locator(`article[data-kind="grid"][data-id="${id}"]`);
  const stateOf = (card: ReturnType<typeof grid>) => card.locator('header .badge');
  const inject = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => served.app.inject({ method, url, headers: TOKEN, ...(payload ? { payload } : {}) });
  /** Waits until the page has made no request for `quietMs`. */
  const settle = async (quietMs = 500) => {
    let seen = -1;
    await waitUntil('the page is quiet', async () => {
      const now = requests.length;
      if (now === seen) return true;
      seen = now;
      await new Promise((r) => setTimeout(r, quietMs));
      return false;
    });
  };

  beforeAll(async () => {
    const demo = await makeDemoApp();
    stream = fakeEventStream(demo.app);
    served = await listen(demo);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    problems = watchPageErrors(page);
    page.on('request', (request) => {
      if (!new URL(request.url()).pathname.endsWith('/_emulator/events')) requests.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
  });

  afterAll(async () => {
    stream?.drop();
    await browser?.close();
    await served?.app.close();
  });

  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  it('opens the stream, marked as the dashboard, and makes no request while nothing happens', async () => {
    await page.goto(served.url);
    await waitForText(stateOf(grid(101)), 'LOADED');
    await waitForText(page.locator('#live'), 'live');
    expect(stream.connects).toHaveLength(1);
    expect(stream.connects[0]['x-emulator-client']).toBe('dashboard');
    expect(stream.connects[0].accept).toBe('text/event-stream');
    await settle();
    requests = [];
    // Longer than the old one-second poll and than the fallback's five seconds.
    await new Promise((r) => setTimeout(r, 6000));
    expect(requests).toEqual([]);
  });

  it("shows a grid's new state from a transition event, with the view it carries instead of a read", async () => {
    expect((await inject('POST', `${CLOUD}/grid/101/action`, { action: 'start' })).statusCode).toBe(202);
    const view = (await inject('GET', `${CLOUD}/grid/101`)).json();
    requests = [];
    stream.send('transition', { at: served.clock.now(), kind: 'grid', resourceId: 101, state: 'ALLOCATING', view });
    await waitForText(stateOf(grid(101)), 'ALLOCATING');
    await waitForText(grid(101).locator('.servers tbody'), 'PENDING');
    await settle();
    // The lifecycles once (where it is and what comes next); the grid itself came with the event.
    expect(requests).toEqual(['GET /_emulator/lifecycles']);
    requests = [];
    await new Promise((r) => setTimeout(r, 2000));
    expect(requests).toEqual([]);
  });

  it('moves its clock from a heartbeat and from clock.changed, without asking', async () => {
    requests = [];
    const later = served.clock.now() + 3_600_000;
    stream.comment(`heartbeat ${later}`);
    await waitForText(page.locator('#clock-time'), '10:00:00');
    stream.send('clock.changed', { at: later, rate: 60, frozen: false });
    await waitForText(page.locator('#clock-mode'), '×60');
    // CR LF line ends, and a block cut across two writes (a CR and its LF apart).
    stream.raw(`id: 90\r\nevent: clock.changed\r\ndata: ${JSON.stringify({ id: 90, type: 'clock.changed', at: later, rate: 60, frozen: true })}\r`);
    await new Promise((r) => setTimeout(r, 100));
    stream.raw('\n\r\n');
    await waitForText(page.locator('#clock-mode'), 'frozen');
    await settle();
    // No read of the clock: the events said it all. A clock change may end a composition's
    // play, moves the real-user chart's last 24 hours, and, an hour on, the value of the demo's
    // threshold rule with the deliveries its fires make: those are read again, nothing else.
    expect(requests).not.toContain('GET /_emulator/clock');
    const expected = [/^GET \/_emulator\/compositions\/instances$/, /\/timers-metrics$/, /\/annotations\/v1$/, /^GET \/_emulator\/incidents$/, /^GET \/_emulator\/alerts$/, /^GET \/_emulator\/deliveries$/];
    expect(requests.filter((r) => !expected.some((re) => re.test(r)))).toEqual([]);
  });

  it('reads the alerts again on an alert event, and everything on world.reset', async () => {
    expect((await inject('POST', '/concerto/mpulse/api/alerts/demo-alert/fire', { message: 'from a test' })).statusCode).toBeLessThan(300);
    requests = [];
    stream.send('alert.fired', { at: served.clock.now(), kind: 'alert', resourceId: 'demo-alert' });
    await waitForText(page.locator('article[data-alert="demo-alert"]'), 'FIRING');
    await settle();
    expect(requests).toContain('GET /_emulator/alerts');
    expect(requests).not.toContain('GET /_emulator/lifecycles');

    expect((await served.app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    stream.send('world.reset', { at: served.clock.now() });
    await waitForText(stateOf(grid(101)), 'LOADED');
    await waitForText(page.locator('article[data-alert="demo-alert"]'), 'CLEARED');
  });

  it('reads everything again on stream.reset (events it missed that a resume could not replay)', async () => {
    expect((await inject('POST', '/concerto/mpulse/api/alerts/demo-alert/fire', { message: 'from a test' })).statusCode).toBeLessThan(300);
    stream.send('alert.fired', { at: served.clock.now(), kind: 'alert', resourceId: 'demo-alert' });
    await waitForText(page.locator('article[data-alert="demo-alert"]'), 'FIRING');
    await settle();
    // Changes the page was not told of, then the stream says events were missed (no id, as the emulator sends it).
    expect((await served.app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode).toBe(200);
    stream.raw(`event: stream.reset\ndata: ${JSON.stringify({ type: 'stream.reset', at: served.clock.now(), lastId: 1 })}\n\n`);
    await waitForText(page.locator('article[data-alert="demo-alert"]'), 'CLEARED');
  });

  it('reconnects after the stream ends, sending the last event id', async () => {
    const last = stream.send('annotation.created', { at: served.clock.now(), kind: 'annotation', resourceId: 1 });
    await settle();
    stream.drop();
    await waitUntil('the page reconnects', async () => stream.connects.length === 2);
    expect(stream.connects[1]['last-event-id']).toBe(String(last));
    await waitForText(page.locator('#live'), 'live');
  });

  it("keeps its own requests out of the journal panel, which shows the system under test's", async () => {
    await inject('GET', '/concerto/services/rest/RepositoryService/v1/Objects/grid?name=from-the-test');
    await page.locator('#journal-refresh').click();
    await waitForText(page.locator('#journal tbody'), 'from-the-test');
    const shown = (await page.locator('#journal tbody').textContent()) ?? '';
    // The page read the domains and signed in; the journal shows neither.
    expect(shown).not.toContain('/Objects/domain');
    expect(shown).not.toContain('/Tokens');
    const all = (await served.app.inject({ url: '/_emulator/journal?include=dashboard&limit=500' })).json();
    expect(all.entries.some((e: { path: string }) => e.path.endsWith('/Objects/domain'))).toBe(true);
  });

  it("opens its sandbox's stream when it drives a sandbox", async () => {
    const before = stream.connects.length;
    await page.goto(served.url.replace('/_emulator/ui/', '/sandbox/w1/_emulator/ui/'));
    await waitForText(stateOf(grid(101)), 'LOADED');
    await waitUntil('the page opens the stream', async () => stream.connects.length > before);
    expect(stream.connects.at(-1)?.sandbox).toBe('w1');
  });
});

describe.skipIf(!HAVE_CHROMIUM)('the dashboard before a start, and for an audience', () => {
  let served: Served;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    served = await serveDemo();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  });

  afterAll(async () => {
    await browser?.close();
    await served?.app.close();
  });

  const grid = (id: number) => page.locator(`article[data-kind="grid"][data-id="${id}"]`);

  it('shows the outcome a start is set to end in before it starts', async () => {
    const set = await served.app.inject({ method: 'PUT', url: '/_emulator/lifecycles/grid/101/next-start', payload: { outcome: 'ALLOCATE_FAILED' } });
    expect(set.statusCode).toBe(200);
    await page.goto(served.url);
    await waitForText(grid(101).locator('.next-start'), 'next start: fails (ALLOCATE_FAILED)');
    // The progress line ahead is that start's.
    await waitForText(grid(101).locator('.progress li').last(), 'ALLOCATE_FAILED');
    // A grid that starts as usual says nothing; one whose fixture sets another outcome says so.
    await waitForText(grid(102).locator('header .badge'), 'CHECKED');
    expect(await grid(102).locator('.next-start').isHidden()).toBe(true);
    await waitForText(grid(103).locator('.next-start'), 'next start: fails (CHECKED_WITH_FAILURES)');
    await waitForText(grid(104).locator('.next-start'), 'next start: fails (ALLOCATE_FAILED)');
    await waitForText(grid(105).locator('.next-start'), 'next start: CHECKED_AND_DEPLOYING');
    // The page's own start with that outcome uses it up: once the grid failed, the line goes.
    await grid(101).locator('button[name=start]').click();
    await waitForText(grid(101).locator('header .badge'), 'ALLOCATING');
    expect(await grid(101).locator('.next-start').isHidden()).toBe(true);
  });

  it("presenter view: the demo's title, larger type, no admin controls, faults or journal", async () => {
    await page.goto(served.url);
    await waitForText(grid(101).locator('header .badge'), /[A-Z]/);
    const fontSize = () => page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
    const plain = await fontSize();
    for (const id of ['#faults-panel', '#journal-panel', '#reset', '#sandbox-new']) expect(await page.locator(id).isVisible(), id).toBe(true);
    await page.goto(`${served.url}?presenter`);
    await waitForText(page.locator('#brand-title'), 'Load testing in the cloud, emulated');
    await waitForText(page.locator('#brand-subtitle'), 'Grids, test environments');
    expect(await page.title()).toBe('Load testing in the cloud, emulated');
    for (const id of ['#faults-panel', '#journal-panel', '#reset', '#export', '#sandbox-new']) expect(await page.locator(id).isHidden(), id).toBe(true);
    await waitForText(grid(101).locator('header .badge'), /[A-Z]/);
    expect(await grid(101).locator('button[name=settle]').isHidden()).toBe(true);
    expect(await grid(101).locator('button[name=start]').isVisible()).toBe(true);
    expect(await fontSize()).toBeGreaterThan(plain);
    // The toggle leaves it, and says so in the address.
    await page.locator('#presenter-toggle').click();
    expect(await page.locator('#journal-panel').isVisible()).toBe(true);
    expect(new URL(page.url()).searchParams.has('presenter')).toBe(false);
  });

  it('without an event stream on the emulator, reads everything every 5 s and says so', async () => {
    // From now on, the emulator has no stream: its path answers 404.
    fakeEventStream(served.app).missing = true;
    await page.goto(served.url);
    await waitUntil('the page knows there is no stream', async () => (await page.locator('#live').getAttribute('data-mode')) === 'fallback');
    expect(await page.locator('#live').getAttribute('title')).toContain('no event stream');
    await waitForText(grid(102).locator('header .badge'), 'CHECKED');
    await served.app.inject({ method: 'POST', url: `${CLOUD}/grid/102/action`, headers: TOKEN, payload: { action: 'terminate' } });
    await waitForText(grid(102).locator('header .badge'), 'TERMINATING', 8000);
  });
});
