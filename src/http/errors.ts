import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type DomainErrorKind } from '../core/errors.js';
import type { ErrorBody } from './error-body.js';

export { ErrorBodySchema, type ErrorBody } from './error-body.js';

/** An error a route throws on purpose; the error handler renders it as ErrorBody. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message = 'the security token is missing or invalid') =>
  new ApiError(401, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);

/** The one place a domain error becomes a status code. */
export const STATUS_OF: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  unavailable: 503,
  full: 507,
};

export function errorBody(statusCode: number, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message };
}

export function sendError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(statusCode)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send(errorBody(statusCode, message));
}

/** How one interface words the errors Fastify itself raises before a handler runs. */
export interface ErrorStyle {
  /** Status for a body whose Content-Type is not JSON: 415 for annotations, 400 elsewhere. */
  unsupportedMediaType: 400 | 415;
  /** Fields an interface adds to the body of a domain error (the Query API's `code`). */
  domainErrorFields?: (error: DomainError) => Record<string, string> | undefined;
}

/** Words a schema-validation failure the way a person would say it. */
function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const path = first.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'required') return `${where}: missing required field '${[path, params.missingProperty].filter(Boolean).join('.')}'`;
  if (first.keyword === 'additionalProperties') return `${where}: unknown field '${[path, params.additionalProperty].filter(Boolean).join('.')}'`;
  return `${where}${path ? ` field '${path}'` : ''} ${first.message ?? 'is invalid'}`;
}

/** Installs the JSON error body for every error raised inside `app`'s scope. */
export function installErrorHandling(app: FastifyInstance, style: ErrorStyle): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return sendError(reply, error.statusCode, error.message, error.headers);
    if (error instanceof DomainError) {
      const retry = error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : undefined;
      const fields = style.domainErrorFields?.(error);
      if (!fields) return sendError(reply, STATUS_OF[error.kind], error.message, retry);
      const status = STATUS_OF[error.kind];
      return reply
        .code(status)
        .headers(retry ?? {})
        .type('application/json; charset=utf-8')
        .send({ ...errorBody(status, error.message), ...fields });
    }
    if (error.validation) return sendError(reply, 400, validationMessage(error));
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(
          reply,
          style.unsupportedMediaType,
          request.headers['content-type'] === undefined
            ? 'the request has no Content-Type: send the body as application/json'
            : `unsupported Content-Type '${request.headers['content-type']}': send application/json`,
        );
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendError(reply, 400, 'the body is empty but Content-Type is application/json');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendError(reply, 400, 'the body is not valid JSON');
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(reply, 413, 'the body is larger than this server accepts');
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(reply, 400, 'Content-Length does not match the body');
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendError(reply, status, error.message);
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, 500, 'internal server error; try again later');
  });
}
