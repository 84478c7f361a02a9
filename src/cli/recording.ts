import { PATHS } from '../http/paths.js';
import { MASK } from '../core/secrets.js';

/** A recording, an ignore file or a file `record` or `verify` cannot use: the message is shown as is, exit code 2. */
export class ParityInputError extends Error {}

/**
 * The recording format of `record` and `verify`: JSON Lines, one exchange a line, secrets
 * masked. See docs/parity.md.
 */
export interface RecordedExchange {
  /** 1, 2, ... in the order the answers ended. */
  seq: number;
  /** When the request arrived, ISO 8601. */
  startedAt: string;
  /** From the request's arrival to the answer's last byte, in milliseconds. */
  durationMs: number;
  method: string;
  /** The path as the client sent it, percent-encoding kept; a secret path segment masked. */
  path: string;
  /** The query string without its `?`; '' when there is none. */
  query: string;
  request: RecordedMessage;
  status: number;
  response: RecordedMessage;
}

export interface RecordedMessage {
  /** The chosen headers (lower-case names), secret ones masked. */
  headers: Record<string, string | string[]>;
  /** The body as text (UTF-8), secret fields masked; absent when there was none. */
  body?: string;
  /** The body's size in bytes, as sent. */
  bodyBytes: number;
  /** True when only the first part of the body was kept (`--max-body-bytes`). */
  bodyCut?: boolean;
}

/** The request headers a recording keeps: what says how to read the body, who is asked, and the credentials (masked). */
export const RECORDED_REQUEST_HEADERS = ['content-type', 'accept', 'x-tenant-name', 'x-auth-token', 'authentication', 'authorization'];

/** The answer headers a recording keeps, and the ones verify compares (content-type). */
export const RECORDED_RESPONSE_HEADERS = ['content-type', 'location', 'allow', 'retry-after'];

const TOKENS_PATH = `${PATHS.repository}/Tokens`.toLowerCase();

/** Whether a request is the Repository log-in (`PUT .../Tokens`). */
export function isLogIn(method: string, path: string): boolean {
  return method === 'PUT' && trimSlashes(path).toLowerCase() === TOKENS_PATH;
}

/** Whether a request is the Repository log-out (`DELETE .../Tokens/<token>`). */
export function isLogOut(method: string, path: string): boolean {
  if (method !== 'DELETE') return false;
  const lower = trimSlashes(path).toLowerCase();
  return lower.startsWith(`${TOKENS_PATH}/`) && !lower.slice(TOKENS_PATH.length + 1).includes('/');
}

function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

/** The path with the session token of a log-out masked: it is the one path that holds a secret. */
export function maskPath(method: string, path: string): string {
  if (!isLogOut(method, path)) return path;
  return `${path.slice(0, path.lastIndexOf('/', path.length - (path.endsWith('/') ? 2 : 1)) + 1)}${MASK}`;
}
