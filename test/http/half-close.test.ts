import { afterEach, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { makeDemoApp } from '../helpers/app.js';
import { raw } from '../helpers/raw-http.js';

/**
 * A client that half-closes its side as soon as it has sent its request (raw() ends the
 * socket after writing) still gets every answer, also those not sent at once: the state
 * export is streamed and an imported state is parsed off the main thread.
 */
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The body of a chunked answer, decoded. */
function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

describe('a client that half-closes after its request', () => {
  it('gets the whole streamed export, and an import answered after a worker read it', async () => {
    ({ app } = await makeDemoApp());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const exported = await raw(port, 'GET', '/_emulator/state');
    expect(exported.status).toBe(200);
    const text = exported.headers['transfer-encoding'] === 'chunked' ? dechunk(exported.body) : exported.body;
    expect(text).toBe((await app.inject({ url: '/_emulator/state' })).body);
    const imported = await raw(port, 'PUT', '/_emulator/state', {}, text);
    expect(imported.status, imported.body).toBe(200);
    expect(JSON.parse(imported.body)).toMatchObject({ status: 'replaced' });
  });
});
