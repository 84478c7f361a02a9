import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AUTH, PATHS, authSeed, makeApp } from '../helpers/app.js';

/**
 * Deadlines on connections, over a real loopback socket: a client that sends its request
 * slowly (or not at all) is answered 408 and disconnected, so that many of them cannot use
 * up the server's file descriptors, and the server keeps answering everyone else.
 */

const { ANNOTATIONS } = PATHS;
/** Far above any deadline used here: only a server that never cuts the client off reaches it. */
const GIVE_UP_MS = 10_000;
/**
 * Short, so that the tests are quick, but well above a stall of a busy machine: a client's
 * own request must not run into it between connecting and sending.
 */
const DEADLINE_MS = 1000;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listen(config: Parameters<typeof makeApp>[1]): Promise<number> {
  ({ app } = await makeApp(authSeed(), config));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

interface Ending {
  /** Everything the server sent, as text. */
  received: string;
  /** Whether the server closed the connection (false: the test gave up waiting). */
  closed: boolean;
  /** Body bytes the client had sent when the connection ended. */
  bodyBytesSent: number;
}

/**
 * Opens a connection, sends `head`, then the body one byte per `everyMs` (never, for 0),
 * and reports what came back once the server closes the connection.
 */
function slowClient(port: number, head: string, body: string, everyMs: number): Promise<Ending> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head);
      if (everyMs > 0) {
        timer = setInterval(() => {
          if (sent < body.length && socket.writable) socket.write(body[sent++]);
        }, everyMs);
      }
    });
    const giveUp = setTimeout(() => finish(false), GIVE_UP_MS);
    const finish = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ received: Buffer.concat(chunks).toString('utf8'), closed, bodyBytesSent: sent });
    };
    socket.on('data', (c) => chunks.push(c));
    // The server may reset the connection after its answer; what it sent is what counts.
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

const postHead = (contentLength: number) =>
  `POST ${ANNOTATIONS} HTTP/1.1\r\nHost: x\r\nX-Auth-Token: ${AUTH['x-auth-token']}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;

function expect408(ending: Ending, requestTimeoutMs: number) {
  expect(ending.closed, 'the server never closed the connection').toBe(true);
  const [head, body] = ending.received.split('\r\n\r\n');
  expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(JSON.parse(body)).toEqual({
    statusCode: 408,
    error: 'Request Timeout',
    message: `the request did not arrive in full within ${requestTimeoutMs} ms (REQUEST_TIMEOUT_MS)`,
  });
}

describe('REQUEST_TIMEOUT_MS', () => {
  it('answers a client that stalls mid-body 408 and closes its connection, while health keeps answering', async () => {
    const port = await listen({ requestTimeoutMs: DEADLINE_MS });
    const body = JSON.stringify({ title: 'slow', text: 'x'.repeat(60), start: 1 }).padEnd(100);
    const stalled = slowClient(port, `${postHead(100)}${body.slice(0, 5)}`, '', 0);
    const health = await fetch(`http://127.0.0.1:${port}/_emulator/health`);
    expect(health.status).toBe(200);
    expect408(await stalled, DEADLINE_MS);
    // Nothing was created from the part that arrived.
    const list = await fetch(`http://127.0.0.1:${port}${ANNOTATIONS}?date-start=0`, { headers: AUTH });
    expect(await list.json()).toEqual([]);
  });

  it('counts the whole request, so a client trickling bytes cannot keep it alive', async () => {
    const port = await listen({ requestTimeoutMs: DEADLINE_MS });
    const body = JSON.stringify({ title: 'slow', text: 'x'.repeat(60), start: 1 }).padEnd(100);
    // A byte every 50 ms would take 5 s for the body: every byte is activity, none resets the deadline.
    const ending = await slowClient(port, postHead(100), body, 50);
    expect408(ending, DEADLINE_MS);
    expect(ending.bodyBytesSent).toBeLessThan(100);
  });

  it('cuts off headers that never end, and a connection that sends nothing', async () => {
    const port = await listen({ requestTimeoutMs: DEADLINE_MS });
    const [headers, silent] = await Promise.all([
      slowClient(port, `GET /_emulator/health HTTP/1.1\r\nHost: x\r\n`, `X-Slow: ${'a'.repeat(100)}`, 50),
      slowClient(port, '', '', 0),
    ]);
    expect408(headers, DEADLINE_MS);
    expect408(silent, DEADLINE_MS);
  });

  it('does not count the time the server takes to answer, so a fault latency is served in full', async () => {
    const port = await listen({ requestTimeoutMs: DEADLINE_MS });
    const rule = await fetch(`http://127.0.0.1:${port}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: `${ANNOTATIONS}*`, action: { latencyMs: 2 * DEADLINE_MS } }),
    });
    expect(rule.status).toBe(201);
    const res = await fetch(`http://127.0.0.1:${port}${ANNOTATIONS}?date-start=0`, { headers: AUTH });
    expect(res.status).toBe(200);
  });
});

describe('connection deadlines', () => {
  it('are set on the server from the settings, with defaults', async () => {
    await listen({});
    const server = app!.server;
    expect(server.requestTimeout).toBe(30_000);
    expect(server.headersTimeout).toBe(30_000);
    expect(server.keepAliveTimeout).toBe(72_000);
    expect(server.timeout).toBe(600_000);
    await app!.close();
    await listen({ requestTimeoutMs: 5000, keepAliveTimeoutMs: 1000, connectionTimeoutMs: 0 });
    expect([app!.server.requestTimeout, app!.server.headersTimeout, app!.server.keepAliveTimeout, app!.server.timeout]).toEqual([5000, 5000, 1000, 0]);
  });

  it('closes a kept-alive connection that sends no further request', async () => {
    const port = await listen({ keepAliveTimeoutMs: 200 });
    const ending = await slowClient(port, 'GET /_emulator/health HTTP/1.1\r\nHost: x\r\n\r\n', '', 0);
    expect(ending.closed).toBe(true);
    expect(ending.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });
});
