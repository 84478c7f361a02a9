import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import './fastify.js';

/**
 * One log line per request, written when the response is finished, instead of Fastify's
 * two (incoming + completed): one line to grep for method, url, status and time. Fastify
 * binds the request id (reqId) to request.log.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Without a logger (LOG_LEVEL=silent, or none given to buildApp), not even the line is built.
    if (this.isLogDisabled(request)) return;
    const line = {
      ...(request.sandbox !== null ? { sandbox: request.sandbox } : {}),
      method: request.method,
      url: request.originalUrl,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request failed');
    else reply.log.info(line, 'request');
  }

  // Every 404 is already the request's own line.
  override routeNotFound(): void {}
}

/** Echoes the request id (the caller's X-Request-Id, or Fastify's) so a caller can find its log line. A step of the request pipeline (http/pipeline.ts). */
export function echoRequestId(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
}
