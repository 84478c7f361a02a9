import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ManualClock, startEmulator, type RunningEmulator } from '../../../src/index.js';
import { blocks, read } from '../../docs/markdown.js';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, waitForText } from './harness.js';

/**
 * The page of docs/frontend.md, served from another origin as a dev server would serve it,
 * in headless Chromium against an emulator: it logs in with the tracing headers of Sentry
 * and OpenTelemetry, starts grid 101 and follows it to CHECKED from the event stream alone.
 */
if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

const PAGE = 'docs/frontend.md';
const html = (() => {
  const found = blocks(PAGE, read(PAGE)).filter((b) => b.info === 'html');
  if (found.length !== 1) throw new Error(`${PAGE}: expected one html block, found ${found.length}`);
  return found[0].text;
})();

describe.skipIf(!HAVE_CHROMIUM)('the frontend page of docs/frontend.md', () => {
  let browser: Browser;
  let frontend: http.Server;
  let frontendUrl: string;
  let emu: RunningEmulator;
  const clock = new ManualClock();

  beforeAll(async () => {
    browser = await launchBrowser();
    emu = await startEmulator({ clock });
    frontend = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
    await new Promise<void>((resolve) => frontend.listen(0, '127.0.0.1', resolve));
    // "localhost" and "127.0.0.1" are different origins to a browser.
    frontendUrl = `http://localhost:${(frontend.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await browser?.close();
    await emu?.close();
    await new Promise((resolve) => frontend?.close(resolve));
  });

  it('sends tracing headers without a CORS error and follows a grid to CHECKED from the stream alone', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    const requests: string[] = [];
    const traced: boolean[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(emu.url)) return;
      requests.push(`${request.method()} ${request.url().slice(emu.url.length)}`);
      if (!request.url().includes('/_emulator/events')) traced.push('traceparent' in request.headers() && 'sentry-trace' in request.headers());
    });
    try {
      await page.goto(`${frontendUrl}?emulator=${encodeURIComponent(emu.url)}`);
      await waitForText(page.locator('#status'), 'live');
      const row = page.locator('tr[data-id="101"]');
      await waitForText(row, 'LOADED');
      const before = requests.length;

      await row.getByRole('button', { name: 'Start' }).click();
      await waitForText(row, 'ALLOCATING');
      // The emulated time passes; the page hears of each state without asking.
      const advanced = await fetch(`${emu.url}/_emulator/clock/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ until: { kind: 'grid', id: 101 } }),
      });
      expect(advanced.status).toBe(200);
      await waitForText(row, 'CHECKED');

      expect(problems).toEqual([]);
      expect(traced.length).toBeGreaterThan(0);
      expect(traced.every(Boolean)).toBe(true);
      // After the first load: the start, and nothing else (no polling).
      expect(requests.slice(before)).toEqual(['POST /concerto/services/rest/CloudService/v1/grid/101/action']);
      expect(requests.filter((r) => r.startsWith('GET /_emulator/events'))).toHaveLength(1);
    } finally {
      await page.close();
    }
  });
});
