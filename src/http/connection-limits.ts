import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

type Limits = Pick<Config, 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'connectionTimeoutMs'>;

/**
 * Node looks for requests past their deadline on a timer (30 s by default), so a deadline
 * is enforced up to one interval late. A tenth of the deadline, at most a second, keeps that
 * small; the check walks only the connections with a request under way.
 */
function checkingInterval(requestTimeoutMs: number): number {
  return Math.max(10, Math.min(1000, Math.floor(requestTimeoutMs / 10)));
}

/**
 * What Fastify's own handler answers, with the project's error body and a message that says
 * which deadline passed. A response already under way on the socket is never written into.
 */
function clientErrorHandler({ requestTimeoutMs }: Limits) {
  return function (this: FastifyInstance, err: ConnectionError, socket: Socket): void {
    // A reset connection has nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let statusCode = 400;
    let message = 'Client Error';
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      statusCode = 408;
      message = `the request did not arrive in full within ${requestTimeoutMs} ms (REQUEST_TIMEOUT_MS)`;
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      statusCode = 431;
      message = 'Exceeded maximum allowed HTTP header size';
    }
    this.log.debug({ err, statusCode }, 'connection refused by the HTTP parser or a deadline');
    const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !response?.headersSent) {
      const body = JSON.stringify({ statusCode, error: STATUS_CODES[statusCode], message });
      socket.write(
        `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}

/**
 * The Fastify options that bound how long a connection can hold a file descriptor without
 * doing its part: a request must arrive in full within REQUEST_TIMEOUT_MS (headers too, and
 * a connection that sends nothing at all), an idle kept-alive connection closes after
 * KEEP_ALIVE_TIMEOUT_MS, and a silent one (a client that stopped reading) after
 * CONNECTION_TIMEOUT_MS. Time spent answering is not counted against the request deadline,
 * so a fault latency does not trip it.
 */
export function connectionLimits(config: Limits) {
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      // Node's own header deadline (60 s) would otherwise outlast a shorter request deadline.
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: checkingInterval(config.requestTimeoutMs),
    },
    clientErrorHandler: clientErrorHandler(config),
  };
}
