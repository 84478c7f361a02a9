/**
 * What went wrong, in the domain's words: the world and the stores throw these, and the HTTP
 * layer maps each kind to its status in one place (http/errors.ts), so no route catches and
 * re-words an error of its own.
 *
 * - `invalid`: the request asks for something malformed or impossible (400).
 * - `unauthorized`: credentials are missing, wrong or expired (401).
 * - `forbidden`: the credentials are good, and their tenant may not have what is asked (403).
 * - `not-found`: the thing addressed does not exist (404).
 * - `conflict`: it exists, or a limit on how many may exist is reached (409).
 * - `unavailable`: the emulator cannot take more of it right now (503).
 * - `full`: keeping it would pass a byte bound of the world or of the process (507).
 */
export type DomainErrorKind = 'invalid' | 'unauthorized' | 'forbidden' | 'not-found' | 'conflict' | 'unavailable' | 'full';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** For `unavailable`: when the client may try again, answered as Retry-After (seconds). */
  retryAfterSeconds?: number;
}

export const invalid = (message: string) => new DomainError('invalid', message);
export const missing = (message: string) => new DomainError('not-found', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const conflicting = (message: string) => new DomainError('conflict', message);
export const unavailable = (message: string) => new DomainError('unavailable', message);
export const full = (message: string) => new DomainError('full', message);
