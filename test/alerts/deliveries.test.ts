import { afterEach, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SMTPServer } from 'smtp-server';
import { T0, makeApp, PATHS } from '../helpers/app.js';
import type { Config } from '../../src/config.js';
import type { World } from '../../src/interfaces.js';
import type { State } from '../../src/state.js';
import type { Delivery } from '../../src/alerts/delivery-schemas.js';
import { listen, openSse, type SseReader } from '../helpers/sse.js';
import { isPrivateAddress } from '../../src/alerts/senders.js';
import { deliveryBytes } from '../../src/alerts/deliveries.js';

/** A loopback HTTP receiver that records each POST and answers with the next status of `statuses` (the last one repeats). */
interface Receiver {
  url: string;
  posts: Array<{ headers: IncomingMessage['headers']; body: string }>;
  /** Resolves when the receiver holds `n` POSTs. */
  got(n: number): Promise<void>;
}

const servers: Array<{ close(cb?: () => void): unknown }> = [];
const apps: FastifyInstance[] = [];
const readers: SseReader[] = [];
afterEach(async () => {
  readers.splice(0).forEach((r) => r.close());
  for (const app of apps.splice(0)) {
    await world(app).stores.alerts.outbox.settled();
    await app.close();
  }
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function receiver(statuses: number[] = [200]): Promise<Receiver> {
  const posts: Receiver['posts'] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      posts.push({ headers: req.headers, body });
      res.writeHead(statuses[Math.min(posts.length, statuses.length) - 1]).end('ok');
      for (const w of waiting.filter((w) => posts.length >= w.n)) w.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    posts,
    got: (n) => (posts.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }))),
  };
}

const world = (app: FastifyInstance) => (app as unknown as { world: World }).world;

function alertSeed(channels: Array<Record<string, unknown>>): Partial<State> {
  return { alerts: [{ uid: 'cdn-down', name: 'CDN down', subject: '[mPulse] CDN down', channels } as never] };
}

async function start(channels: Array<Record<string, unknown>>, config: Partial<Config> = {}) {
  const made = await makeApp(alertSeed(channels), config);
  apps.push(made.app);
  return made;
}

const fire = (app: FastifyInstance, body: Record<string, unknown> = { message: 'p50 page load above 4 s' }, prefix = '') =>
  app.inject({ method: 'POST', url: `${prefix}${PATHS.ALERTS}/cdn-down/fire`, payload: body });

/** The world a path prefix names: a sandbox's (`/sandbox/<name>`), or the default one. */
function worldOf(app: FastifyInstance, prefix: string): World {
  const name = /^\/sandbox\/([^/]+)/.exec(prefix)?.[1];
  return name === undefined ? world(app) : ((app as unknown as { sandboxes: { find(n: string): unknown } }).sandboxes.find(name) as World);
}

async function outbox(app: FastifyInstance, query = '', prefix = ''): Promise<{ total: number; deliveries: Delivery[]; next?: number }> {
  await worldOf(app, prefix).stores.alerts.outbox.settled();
  const res = await app.inject({ method: 'GET', url: `${prefix}${PATHS.CONTROL}/deliveries${query}` });
  expect(res.statusCode).toBe(200);
  return res.json();
}

const advance = (app: FastifyInstance, ms: number) => app.inject({ method: 'POST', url: `${PATHS.CONTROL}/clock/advance`, payload: { ms } });

describe('webhook deliveries', () => {
  it('a fire POSTs the documented payload exactly once to an allow-listed receiver, signed with the channel secret', async () => {
    const hook = await receiver();
    const { app } = await start([{ type: 'webhook', target: hook.url, secret: 's3cret' }], { deliveryAllowHosts: '127.0.0.1', deliveryLinkBase: 'http://emulator.test:8080' });
    expect((await fire(app)).statusCode).toBe(204);
    const { deliveries } = await outbox(app);
    expect(hook.posts).toHaveLength(1);
    const [post] = hook.posts;
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['x-emulator-delivery']).toBe(String(deliveries[0].id));
    expect(post.headers['x-emulator-signature']).toBe(`sha256=${createHmac('sha256', 's3cret').update(post.body).digest('hex')}`);
    expect(JSON.parse(post.body)).toEqual({
      type: 'alert.fired',
      deliveryId: 1,
      alert: { uid: 'cdn-down', name: 'CDN down' },
      state: 'firing',
      at: T0,
      time: new Date(T0).toISOString(),
      message: 'p50 page load above 4 s',
      subject: '[mPulse] CDN down',
      link: 'http://emulator.test:8080/_emulator/alerts/cdn-down',
    });
    expect(deliveries).toEqual([
      expect.objectContaining({ id: 1, alert: 'cdn-down', action: 'fire', channel: 'webhook', target: hook.url, status: 'sent', createdAt: T0, attempts: [{ at: T0, statusCode: 200 }] }),
    ]);
    // The secret signs; it is never part of what the outbox shows.
    expect(JSON.stringify(deliveries)).not.toContain('s3cret');
    // A clear is one more delivery, of its own type.
    await app.inject({ method: 'POST', url: `${PATHS.ALERTS}/cdn-down/clear` });
    await outbox(app);
    expect(hook.posts).toHaveLength(2);
    expect(JSON.parse(hook.posts[1].body)).toMatchObject({ type: 'alert.cleared', state: 'cleared', deliveryId: 2 });
  });

  it('a receiver answering 500 gets its retries only when the clock reaches each retry time, then the delivery fails', async () => {
    const hook = await receiver([500]);
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: '127.0.0.1' });
    await fire(app);
    let [d] = (await outbox(app)).deliveries;
    expect(hook.posts).toHaveLength(1);
    expect(d).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 30_000, attempts: [{ at: T0, statusCode: 500, error: 'answered 500' }] });

    // Reads and a move short of the retry time send nothing.
    await advance(app, 29_999);
    await outbox(app);
    expect(hook.posts).toHaveLength(1);
    await advance(app, 1);
    await hook.got(2);
    [d] = (await outbox(app)).deliveries;
    expect(d.attempts.map((a) => a.at)).toEqual([T0, T0 + 30_000]);
    expect(d.nextAttemptAt).toBe(T0 + 30_000 + 120_000);

    // One advance past both remaining retry times: the first is made, and the next falls due after it.
    await advance(app, 120_000);
    await hook.got(3);
    await advance(app, 480_000);
    await hook.got(4);
    [d] = (await outbox(app)).deliveries;
    expect(d.status).toBe('failed');
    expect(d.attempts.map((a) => a.at)).toEqual([T0, T0 + 30_000, T0 + 150_000, T0 + 630_000]);
    expect(d.nextAttemptAt).toBeUndefined();
    // Four attempts at most: time goes on, nothing more is sent.
    await advance(app, 3_600_000);
    await outbox(app);
    expect(hook.posts).toHaveLength(4);
  });

  it('an unlisted host is refused: the refusal is in the outbox, the fire answers 204 and nothing is sent', async () => {
    const hook = await receiver();
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: 'hooks.example.com' });
    expect((await fire(app)).statusCode).toBe(204);
    const { deliveries } = await outbox(app, '?status=refused');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].attempts[0].error).toBe("host '127.0.0.1' is not listed in DELIVERY_ALLOW_HOSTS");
    expect(hook.posts).toHaveLength(0);
  });

  it('a redirect is not followed: the delivery fails at once, without a retry', async () => {
    const hook = await receiver([302]);
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: '127.0.0.1' });
    await fire(app);
    const [d] = (await outbox(app)).deliveries;
    expect(d).toMatchObject({ status: 'failed', attempts: [{ at: T0, statusCode: 302, error: 'answered 302: redirects are not followed' }] });
    expect(d.nextAttemptAt).toBeUndefined();
    expect(hook.posts).toHaveLength(1);
  });

  it('a receiver that never answers is given up after DELIVERY_TIMEOUT_MS and retried on the emulated clock', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    servers.push({ close: (cb?: () => void) => (silent.closeAllConnections(), silent.close(cb)) });
    const { port } = silent.address() as AddressInfo;
    const { app } = await start([{ type: 'webhook', target: `http://127.0.0.1:${port}/hook` }], { deliveryAllowHosts: '127.0.0.1', deliveryTimeoutMs: 100 });
    expect((await fire(app)).statusCode).toBe(204);
    const [d] = (await outbox(app)).deliveries;
    expect(d).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 30_000, attempts: [{ at: T0, error: 'no answer within DELIVERY_TIMEOUT_MS (100 ms)' }] });
  });

  it('a state imported into a sandbox without ADMIN_TOKEN brings targets that are never sent to', async () => {
    const hook = await receiver();
    const { app } = await start([], { deliveryAllowHosts: '127.0.0.1' });
    const state = { alerts: [{ uid: 'cdn-down', name: 'CDN down', channels: [{ type: 'webhook', target: hook.url }] }] };
    expect((await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/sandboxes/evil`, payload: state })).statusCode).toBe(201);
    await fire(app, {}, '/sandbox/evil');
    const [d] = (await outbox(app, '', '/sandbox/evil')).deliveries;
    expect(d.status).toBe('refused');
    expect(hook.posts).toHaveLength(0);
  });

  it('a listed localhost is sent to: its loopback addresses are the operator\'s choice', async () => {
    const hook = await receiver();
    const target = hook.url.replace('127.0.0.1', 'localhost');
    const { app } = await start([{ type: 'webhook', target }], { deliveryAllowHosts: 'localhost.localdomain,LOCALHOST' });
    await fire(app);
    expect((await outbox(app)).deliveries[0].status).toBe('sent');
  });

  it('sends nothing by default: every channel stays in the outbox as stored, with why', async () => {
    const hook = await receiver();
    const { app } = await start([
      { type: 'webhook', target: hook.url },
      { type: 'email', target: 'oncall@example.com' },
      { type: 'sms', target: '+15550100' },
      { type: 'slack', target: 'https://hooks.slack.com/services/T/B/X', enabled: false },
    ]);
    await fire(app);
    const { deliveries, total } = await outbox(app);
    expect(total).toBe(3);
    expect(deliveries.map((d) => [d.channel, d.status])).toEqual([
      ['sms', 'stored'],
      ['email', 'stored'],
      ['webhook', 'stored'],
    ]);
    expect(deliveries.find((d) => d.channel === 'webhook')!.reason).toContain('DELIVERY_ALLOW_HOSTS');
    expect(deliveries.find((d) => d.channel === 'email')!.payload).toMatchObject({ to: 'oncall@example.com', subject: '[mPulse] CDN down' });
    expect(hook.posts).toHaveLength(0);
  });
});

/** PUT /_emulator/clock (of a sandbox with its prefix): the clock's speed and whether it runs. */
const setClock = (app: FastifyInstance, body: { scale?: number; frozen?: boolean }, prefix = '') =>
  app.inject({ method: 'PUT', url: `${prefix}${PATHS.CONTROL}/clock`, payload: body });

describe('the wake-up timer of retries', () => {
  it('on a running clock, a retry is sent when emulated time reaches it, with no request to the emulator', { timeout: 60_000 }, async () => {
    const hook = await receiver([500, 200]);
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: '127.0.0.1' });
    await fire(app);
    await hook.got(1);
    await world(app).stores.alerts.outbox.settled();
    // The test clock is paused: no timer.
    expect(world(app).dueTimers).toBe(0);
    // At 600 times real speed, the retry 30 s of emulated time later is 50 ms of real time away.
    expect((await setClock(app, { scale: 600, frozen: false })).statusCode).toBe(200);
    expect(world(app).dueTimers).toBe(1);
    // Only the receiver is waited on: nothing asks the emulator anything until the retry has arrived.
    await hook.got(2);
    await world(app).stores.alerts.outbox.settled();
    expect(world(app).dueTimers).toBe(0);
    const [d] = (await outbox(app)).deliveries;
    expect(d.status).toBe('sent');
    expect(d.attempts).toHaveLength(2);
    expect(d.attempts[1].at).toBeGreaterThanOrEqual(T0 + 30_000);
    expect(d.attempts[1].statusCode).toBe(200);
  });

  it('on a paused clock, no timer is set and nothing is sent until the clock is advanced', async () => {
    const hook = await receiver([500, 200]);
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: '127.0.0.1' });
    await fire(app);
    await hook.got(1);
    await world(app).stores.alerts.outbox.settled();
    // A speed set while paused sets no timer either.
    expect((await setClock(app, { scale: 600 })).statusCode).toBe(200);
    expect(world(app).dueTimers).toBe(0);
    await advance(app, 29_999);
    await outbox(app);
    expect(hook.posts).toHaveLength(1);
    expect(world(app).dueTimers).toBe(0);
    await advance(app, 1);
    await hook.got(2);
    expect((await outbox(app)).deliveries[0].status).toBe('sent');
  });

  it('a reset, an import and a deleted sandbox leave no timer, and the old outbox sends nothing more; nor does a closed app', { timeout: 60_000 }, async () => {
    const hook = await receiver([500]);
    const { app } = await start([{ type: 'webhook', target: hook.url }], { deliveryAllowHosts: '127.0.0.1' });
    /** Fires, lets the first attempt fail, and runs the clock at real speed: the retry waits 30 s of real time on the timer. */
    const pendingRetry = async (prefix: string) => {
      const before = hook.posts.length;
      expect((await fire(app, {}, prefix)).statusCode).toBe(204);
      const w = worldOf(app, prefix);
      await hook.got(before + 1);
      await w.stores.alerts.outbox.settled();
      expect((await setClock(app, { scale: 1, frozen: false }, prefix)).statusCode).toBe(200);
      expect(w.dueTimers).toBe(1);
      return { w, outbox: w.stores.alerts.outbox, sent: hook.posts.length };
    };
    /** The old outbox's retry is due: it is not started. */
    const sendsNothing = async (old: Awaited<ReturnType<typeof pendingRetry>>) => {
      old.outbox.due(T0 + 3_600_000);
      await old.outbox.settled();
      expect(hook.posts).toHaveLength(old.sent);
    };

    // A reset: the seed's outbox is empty, and the start's clock is paused.
    let old = await pendingRetry('');
    expect((await app.inject({ method: 'POST', url: `${PATHS.CONTROL}/reset` })).statusCode).toBe(200);
    expect(world(app).dueTimers).toBe(0);
    await advance(app, 3_600_000);
    expect((await outbox(app)).total).toBe(0);
    await sendsNothing(old);

    // An import (PUT /_emulator/state) of a state without deliveries, on a running clock.
    old = await pendingRetry('');
    const imported = await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/state`, payload: alertSeed([{ type: 'webhook', target: hook.url }]) });
    expect(imported.statusCode).toBe(200);
    expect(world(app).clock.status().frozen).toBe(false);
    expect(world(app).dueTimers).toBe(0);
    await sendsNothing(old);

    // A sandbox's timer goes with it.
    old = await pendingRetry('/sandbox/one');
    expect(world(app).dueTimers).toBe(0);
    expect((await app.inject({ method: 'DELETE', url: `${PATHS.CONTROL}/sandboxes/one` })).statusCode).toBe(204);
    expect(old.w.dueTimers).toBe(0);
    old.w.clock.advance(3_600_000);
    await sendsNothing(old);

    // Closing the app clears the timers of every world.
    const main = await pendingRetry('');
    const sandbox = await pendingRetry('/sandbox/two');
    expect(main.w.dueTimers).toBe(1);
    await app.close();
    expect(main.w.dueTimers).toBe(0);
    expect(sandbox.w.dueTimers).toBe(0);
    await sendsNothing({ ...main, sent: sandbox.sent });
    await sendsNothing(sandbox);
  });
});

describe('a provisional sandbox world', () => {
  it('that a refused request drops starts none of its seed\'s pending deliveries; once registered, it does', async () => {
    const hook = await receiver();
    const pending = { id: 1, alert: 'cdn-down', action: 'fire', channel: 'webhook', target: hook.url, status: 'pending', nextAttemptAt: T0, createdAt: T0, payload: { seeded: true }, attempts: [] };
    const made = await makeApp({ ...alertSeed([{ type: 'webhook', target: hook.url }]), deliveries: [pending as never] }, { deliveryAllowHosts: '127.0.0.1' });
    apps.push(made.app);
    const sandboxes = (made.app as unknown as { sandboxes: { provisional(name: string): World } }).sandboxes;
    const provisional = sandboxes.provisional.bind(sandboxes);
    const worlds: World[] = [];
    sandboxes.provisional = (name: string) => {
      worlds.push(provisional(name));
      return worlds[worlds.length - 1];
    };
    // Refused by the body's schema, before the world is registered.
    expect((await fire(made.app, { message: 42 }, '/sandbox/p')).statusCode).toBe(400);
    expect(worlds).toHaveLength(1);
    await worlds[0].stores.alerts.outbox.settled();
    expect(worlds[0].stores.alerts.outbox.nextAttemptAt).toBe(T0);
    expect(worlds[0].dueTimers).toBe(0);
    expect(hook.posts).toHaveLength(0);
    // A request that passes registers its world, which sends the seed's delivery (and the fire's own).
    expect((await fire(made.app, {}, '/sandbox/p')).statusCode).toBe(204);
    await hook.got(2);
    expect(JSON.parse(hook.posts[0].body)).toEqual({ seeded: true });
  });
});

describe('the bytes a delivery is charged', () => {
  it('are its record, target, payload and reason, counted without its payload built, whatever its id, instant and texts', async () => {
    const channels = [
      { type: 'webhook', target: 'https://hooks.example.com/a' },
      { type: 'slack', target: 'https://hooks.slack.com/services/T/B/X' },
      { type: 'pagerduty', target: 'R0UTINGKEY' },
      { type: 'email', target: 'ops@example.com' },
      { type: 'sms', target: '+15550100' },
    ];
    const { app } = await start(channels);
    const messages = [undefined, 'p50 above 4 s', 'p50 above 4 s', 'naïve "quoted" \\ <b>&</b> \u0001 €𝄞', 'x'.repeat(2_000)];
    for (const [i, message] of messages.entries()) {
      expect((await fire(app, message === undefined ? {} : { message, subject: `subject ${i} ⚠` })).statusCode).toBe(204);
      expect((await app.inject({ method: 'POST', url: `${PATHS.ALERTS}/cdn-down/clear` })).statusCode).toBe(204);
      await advance(app, 7 + i * 1_000);
    }
    const exported: Delivery[] = (await app.inject({ method: 'GET', url: `${PATHS.CONTROL}/state` })).json().deliveries;
    // Ids from one digit to two: the webhook's payload holds the id and the instant as numbers.
    expect(exported.map((d) => d.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(world(app).stores.alerts.outbox.bytes).toBe(exported.reduce((sum, d) => sum + deliveryBytes(d), 0));
  });
});

describe('private addresses', () => {
  it('loopback, private, link-local and unspecified addresses are told from public ones', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1']) {
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) expect([a, isPrivateAddress(a)]).toEqual([a, false]);
  });
});

describe('payloads', () => {
  it('slack gets an incoming-webhook message, pagerduty an Events API v2 trigger then a resolve with one dedup key', async () => {
    const { app } = await start([
      { type: 'slack', target: 'https://hooks.slack.com/services/T/B/X' },
      { type: 'pagerduty', target: 'R0UT1NGKEY' },
    ]);
    await fire(app, { message: 'p50 > 4 s <b>' });
    await app.inject({ method: 'POST', url: `${PATHS.ALERTS}/cdn-down/clear` });
    const { deliveries } = await outbox(app);
    const [resolve, , trigger, slack] = deliveries;
    expect(slack.payload.text).toBe(':rotating_light: *[mPulse] CDN down*\np50 &gt; 4 s &lt;b&gt;\n<http://localhost:8080/_emulator/alerts/cdn-down|CDN down>');
    expect(trigger.payload).toMatchObject({
      routing_key: 'R0UT1NGKEY',
      event_action: 'trigger',
      dedup_key: 'cloud-emulator/cdn-down',
      payload: { summary: 'p50 > 4 s <b>', source: 'cloud-emulator', severity: 'critical', timestamp: new Date(T0).toISOString() },
    });
    expect(resolve.payload).toEqual({ routing_key: 'R0UT1NGKEY', dedup_key: 'cloud-emulator/cdn-down', event_action: 'resolve' });
  });
});

describe('e-mail deliveries', () => {
  it('with SMTP_URL, an e-mail channel is sent through the SMTP server with the fired subject', async () => {
    const mails: Array<{ to: string[]; data: string }> = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    servers.push(smtp);
    const { port } = smtp.server.address() as AddressInfo;
    const { app } = await start([{ type: 'email', target: 'oncall@example.com' }], { smtpUrl: `smtp://127.0.0.1:${port}` });
    await fire(app, { message: 'Checkout is slow', subject: 'CDN down in eu-west' });
    const [d] = (await outbox(app)).deliveries;
    expect(d).toMatchObject({ channel: 'email', status: 'sent', attempts: [{ at: T0, statusCode: 250 }] });
    expect(mails).toHaveLength(1);
    expect(mails[0].to).toEqual(['oncall@example.com']);
    expect(mails[0].data).toMatch(/^Subject: CDN down in eu-west\r?$/m);
    expect(mails[0].data).toContain('Checkout is slow');
    expect(mails[0].data).toContain('/_emulator/alerts/cdn-down');
  });
});

describe('who may make the emulator send', () => {
  const imported = (url: string) => ({ alerts: [{ uid: 'cdn-down', name: 'CDN down', channels: [{ type: 'webhook', target: url }] }] });

  it('a target imported through the control API without ADMIN_TOKEN is never sent to', async () => {
    const hook = await receiver();
    const { app } = await start([], { deliveryAllowHosts: '127.0.0.1' });
    expect((await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/state`, payload: imported(hook.url) })).statusCode).toBe(200);
    await fire(app);
    const [d] = (await outbox(app)).deliveries;
    expect(d.status).toBe('refused');
    expect(d.attempts[0].error).toContain('ADMIN_TOKEN');
    expect(hook.posts).toHaveLength(0);
  });

  it('a target imported with ADMIN_TOKEN is the admin\'s, and is sent to', async () => {
    const hook = await receiver();
    const { app } = await start([], { deliveryAllowHosts: '127.0.0.1', adminToken: 'admin' });
    const headers = { authorization: 'Bearer admin' };
    expect((await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/state`, headers, payload: imported(hook.url) })).statusCode).toBe(200);
    await fire(app);
    await world(app).stores.alerts.outbox.settled();
    expect(hook.posts).toHaveLength(1);
  });
});

describe('the outbox', () => {
  it('filters by alert, channel and status, newest first, a page at a time; a bad filter is a 400 naming it', async () => {
    const { app } = await start([
      { type: 'sms', target: '+15550100' },
      { type: 'email', target: 'oncall@example.com' },
    ]);
    for (let i = 0; i < 3; i++) await fire(app);
    const page = await outbox(app, '?channel=sms&limit=2');
    expect(page.total).toBe(6);
    expect(page.deliveries.map((d) => d.id)).toEqual([5, 3]);
    expect((await outbox(app, `?channel=sms&limit=2&before=${page.next}`)).deliveries.map((d) => d.id)).toEqual([1]);
    expect((await outbox(app, '?alert=other')).deliveries).toEqual([]);
    const bad = await app.inject({ method: 'GET', url: `${PATHS.CONTROL}/deliveries?channel=fax` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('channel');
    // The OpenAPI document lists the route with its filters.
    const openapi = (await app.inject({ method: 'GET', url: `${PATHS.CONTROL}/openapi.json` })).json();
    const params = openapi.paths['/_emulator/deliveries'].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(['alert', 'channel', 'status', 'limit', 'before']));
    // One alert's GET shows its latest deliveries.
    const alert = (await app.inject({ method: 'GET', url: `${PATHS.CONTROL}/alerts/cdn-down` })).json();
    expect(alert.deliveries.map((d: Delivery) => d.id)).toEqual([6, 5, 4, 3, 2, 1]);
  });

  it('is bounded in bytes: the oldest finished deliveries make room, and what never fits is refused with 507, changing nothing', async () => {
    const { app } = await start([{ type: 'sms', target: '+15550100' }], { deliveriesWorldMaxBytes: 4000 });
    for (let i = 0; i < 5; i++) expect((await fire(app)).statusCode).toBe(204);
    const { deliveries } = await outbox(app);
    expect(deliveries.map((d) => d.id)).toEqual([5, 4]);
    expect(world(app).stores.alerts.outbox.bytes).toBeLessThanOrEqual(4000);

    const tiny = await start([{ type: 'sms', target: '+15550100' }], { deliveriesWorldMaxBytes: 100 });
    const refused = await fire(tiny.app);
    expect(refused.statusCode).toBe(507);
    expect(refused.json().message).toContain('DELIVERIES_WORLD_MAX_BYTES');
    const alert = (await tiny.app.inject({ method: 'GET', url: `${PATHS.CONTROL}/alerts/cdn-down` })).json();
    expect(alert).toMatchObject({ state: 'cleared', history: [], deliveries: [] });
  });

  it('goes with the state: an export carries it and an import restores it; each sandbox has its own', async () => {
    const { app } = await start([{ type: 'sms', target: '+15550100' }]);
    await fire(app);
    const exported = (await app.inject({ method: 'GET', url: `${PATHS.CONTROL}/state` })).json();
    expect(exported.deliveries).toHaveLength(1);
    await fire(app, {}, '/sandbox/one');
    expect((await outbox(app, '', '/sandbox/one')).deliveries.map((d) => d.id)).toEqual([1]);
    expect((await outbox(app)).total).toBe(1);

    await app.inject({ method: 'POST', url: `${PATHS.CONTROL}/reset` });
    expect((await outbox(app)).total).toBe(0);
    expect((await app.inject({ method: 'PUT', url: `${PATHS.CONTROL}/state`, payload: exported })).statusCode).toBe(200);
    const { deliveries } = await outbox(app);
    expect(deliveries).toEqual(exported.deliveries);
    // Ids go on from the imported ones.
    await fire(app);
    expect((await outbox(app)).deliveries[0].id).toBe(2);
  });

  it('sends delivery.sent and delivery.failed on the event stream', async () => {
    const ok = await receiver([200]);
    const bad = await receiver([404]);
    const { app } = await start(
      [
        { type: 'webhook', target: ok.url },
        { type: 'slack', target: bad.url.replace('/hook', '/slack') },
      ],
      { deliveryAllowHosts: '127.0.0.1' },
    );
    const base = await listen(app);
    const stream = await openSse(`${base}/_emulator/events?kind=delivery`);
    readers.push(stream);
    await fire(app);
    await world(app).stores.alerts.outbox.settled();
    const events = await stream.take(2);
    const byType = Object.fromEntries(events.map((e) => [e.event, e.data]));
    expect(byType['delivery.sent']).toMatchObject({ kind: 'delivery', state: 'sent', view: { channel: 'webhook', status: 'sent' } });
    expect(byType['delivery.failed']).toMatchObject({ kind: 'delivery', state: 'failed', view: { channel: 'slack', attempts: [{ statusCode: 404 }] } });
  });
});
