import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.js';
import { version } from '../../src/config.js';

let app: FastifyInstance;
afterEach(() => app?.close());

/** What the CloudTest Jenkins plugin does to check a server: the content of the first `meta[name=buildnumber]`. */
function buildNumberOf(html: string): string | undefined {
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    if (/\bname\s*=\s*"?buildnumber"?/i.test(tag)) return /\bcontent\s*=\s*"([^"]*)"/i.exec(tag)?.[1];
  }
  return undefined;
}

describe('the service front page, /concerto/', () => {
  it('is an HTML page whose buildnumber meta tag gives a version number, with the version in a header too', async () => {
    ({ app } = await makeApp());
    for (const url of ['/concerto/', '/concerto']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['x-emulator-version']).toBe(version());
      const build = buildNumberOf(res.body);
      expect(build).toBe(version());
      // The plugin parses it as a version number: dot-separated numbers.
      expect(build).toMatch(/^\d+(\.\d+)*/);
    }
  });

  it('needs no token, and is served in a sandbox too', async () => {
    ({ app } = await makeApp({}, { sandboxes: 'auto' }));
    const res = await app.inject({ url: '/sandbox/s1/concerto/' });
    expect(res.statusCode).toBe(200);
    expect(buildNumberOf(res.body)).toBe(version());
  });

  it('answers other methods 405', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ method: 'POST', url: '/concerto/' });
    expect(res.statusCode).toBe(405);
  });
});

describe('the downloads, /concerto/downloads/...', () => {
  it('answer a JSON 404 that says the command-line tools are not emulated and what to use instead', async () => {
    ({ app } = await makeApp());
    const res = await app.inject({ url: '/concerto/downloads/scommand/scommand.zip' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/json');
    const body = res.json();
    expect(body).toMatchObject({ statusCode: 404, error: 'Not Found' });
    expect(body.message).toContain('not emulated');
    expect(body.message).toContain('cloud-emulator/client');
  });
});
