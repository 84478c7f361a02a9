import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startEmulator, type RunningEmulator } from '../../src/index.js';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser } from '../ui/browser/harness.js';

/**
 * A frontend served from one origin calling the emulator on another, in a real browser:
 * the browser enforces CORS (preflight for X-Auth-Token and JSON bodies, readable headers),
 * which app.inject() cannot show.
 */
if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM)('a browser page on another origin', () => {
  let browser: Browser;
  let frontend: http.Server;
  let frontendUrl: string;
  const emulators: RunningEmulator[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    frontend = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>frontend</title>'));
    await new Promise<void>((resolve) => frontend.listen(0, '127.0.0.1', resolve));
    // "localhost" and "127.0.0.1" are different origins to a browser.
    frontendUrl = `http://localhost:${(frontend.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await Promise.all(emulators.map((e) => e.close()));
    await browser?.close();
    await new Promise((resolve) => frontend?.close(resolve));
  });

  /** Runs fetch calls in the page and reports what the page's script could see. */
  async function fromPage(emulatorUrl: string) {
    const page = await browser.newPage();
    try {
      await page.goto(frontendUrl);
      return await page.evaluate(async (base) => {
        try {
          const headers = { 'X-Auth-Token': 'demo-token', 'Content-Type': 'application/json' };
          const created = await fetch(`${base}/concerto/mpulse/api/annotations/v1`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ title: 'from a browser', text: 'cross-origin', start: 1790000000000 }),
          });
          const { id } = await created.json();
          const read = await fetch(`${base}/concerto/mpulse/api/annotations/v1/${id}`, { headers });
          const denied = await fetch(`${base}/concerto/services/rest/CloudService/v1/grid/`);
          return {
            ok: true as const,
            origin: location.origin,
            createdStatus: created.status,
            title: (await read.json()).title,
            rateLimit: read.headers.get('x-ratelimit-limit'),
            requestId: read.headers.get('x-request-id'),
            deniedStatus: denied.status,
            deniedMessage: (await denied.json()).message,
          };
        } catch (err) {
          return { ok: false as const, error: String(err) };
        }
      }, emulatorUrl);
    } finally {
      await page.close();
    }
  }

  it('can call the emulator with a token and JSON, and read bodies, errors and rate-limit headers', async () => {
    const emu = await startEmulator();
    emulators.push(emu);
    const seen = await fromPage(emu.url);
    expect(seen).toMatchObject({ ok: true, createdStatus: 200, title: 'from a browser', deniedStatus: 401 });
    if (!seen.ok) throw new Error(seen.error);
    expect(seen.origin).not.toBe(emu.url);
    expect(Number(seen.rateLimit)).toBeGreaterThan(0);
    expect(seen.requestId).toBeTruthy();
    expect(seen.deniedMessage).toBe('the X-Auth-Token header is missing');
  });

  it('is refused by the browser when CORS_ORIGINS does not list its origin, and allowed when it does', async () => {
    const closed = await startEmulator({ corsOrigins: 'https://app.example.com' });
    emulators.push(closed);
    const refused = await fromPage(closed.url);
    expect(refused.ok).toBe(false);

    const listed = await startEmulator({ corsOrigins: `https://app.example.com, ${frontendUrl}` });
    emulators.push(listed);
    expect(await fromPage(listed.url)).toMatchObject({ ok: true, createdStatus: 200 });
  });
});

