import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { stopwatch } from '../core/clock.js';
import { SLICE_MS, turn } from '../core/slices.js';

/**
 * A JSON answer that holds a list of any length, written without holding the event loop:
 * `head`, the items serialised a batch at a time by `serialize` (the serializer of an array
 * of them, whose brackets are cut off), then `tail`. When it is all written within one
 * slice of SLICE_MS (any ordinary list) it is sent whole, with its Content-Length, as the
 * route's serializer would send it; else what is written is streamed (chunked), the event
 * loop turning whenever a slice has taken its time, the next batch written when the client
 * reads on. The bytes are those of serialising the whole answer in one call.
 */

/** Items serialised in one call. */
const BATCH = 32;
/** Pieces are handed on in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

export function sendListInSlices<T>(
  reply: FastifyReply,
  head: string,
  items: Iterator<T>,
  serialize: (batch: T[]) => string,
  tail: string,
): FastifyReply {
  function* pieces(): Generator<string> {
    yield head;
    let first = true;
    let batch: T[] = [];
    for (let item = items.next(); !item.done; item = items.next()) {
      batch.push(item.value);
      if (batch.length < BATCH) continue;
      yield `${first ? '' : ','}${serialize(batch).slice(1, -1)}`;
      first = false;
      batch = [];
    }
    if (batch.length) yield `${first ? '' : ','}${serialize(batch).slice(1, -1)}`;
    yield tail;
  }
  const written = pieces();
  const start: string[] = [];
  const t0 = stopwatch();
  let step = written.next();
  while (!step.done) {
    start.push(step.value);
    if (stopwatch() - t0 >= SLICE_MS) break;
    step = written.next();
  }
  reply.type('application/json; charset=utf-8');
  // A buffer is sent as it is: the text is the serializer's already.
  if (step.done) return reply.send(Buffer.from(start.join('')));
  async function* rest(): AsyncGenerator<string> {
    let parts = start;
    let length = parts.reduce((n, p) => n + p.length, 0);
    let started = stopwatch();
    for (let next = written.next(); !next.done; next = written.next()) {
      parts.push(next.value);
      length += next.value.length;
      if (length >= CHUNK_CHARS) {
        yield parts.join('');
        parts = [];
        length = 0;
      }
      if (stopwatch() - started >= SLICE_MS) {
        await turn();
        started = stopwatch();
      }
    }
    if (length) yield parts.join('');
  }
  return reply.send(Readable.from(rest(), { objectMode: false, highWaterMark: CHUNK_CHARS }));
}
