import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HAVE_CHROMIUM, SKIP_REASON, closeDemoPage, openDemoPage, waitUntil, type DemoPage, type Served } from './harness.js';

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

// The real-user chart: a domain's last 24 hours from the Query API, with its annotations and
// incidents on the same time axis.
describe.skipIf(!HAVE_CHROMIUM)('the real-user chart in Chromium', () => {
  let session: DemoPage;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    session = await openDemoPage();
    ({ served, page, problems } = session);
  });
  afterAll(() => closeDemoPage(session));

  it("draws shop.example.com's load time and traffic, its annotation and its incident", async () => {
    await page.goto(served.url);
    await waitUntil('the chart', async () => (await page.locator('#rum-chart svg path.load').count()) === 1);
    expect(await page.locator('#rum-domain').inputValue()).toBe('12346');
    // 1440 minutes: a line of 1440 points.
    const d = (await page.locator('#rum-chart path.load').getAttribute('d')) ?? '';
    expect(d.split('L').length).toBe(1440);
    // The seed's checkout slowdown (6 to 5 hours ago) and the hotfix annotation (5 hours ago).
    expect(await page.locator('#rum-chart rect.incident').count()).toBe(1);
    expect(await page.locator('#rum-chart g.mark').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#rum-chart g.mark text').allTextContents()).toContain('Hotfix 4.14.1');
    expect(problems).toEqual([]);
  });

  it('shows an incident added through the control API once the clock moves', async () => {
    const created = await served.app.inject({
      method: 'POST',
      url: '/_emulator/incidents',
      payload: { domainId: 12346, title: 'CDN purge', startAgoMs: 3_600_000, endAgoMs: 1_800_000, loadTimeFactor: 3 },
    });
    expect(created.statusCode).toBe(201);
    await served.app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 60_000 } });
    await waitUntil('the new incident', async () => (await page.locator('#rum-chart rect.incident').count()) === 2, 20_000);
    expect(problems).toEqual([]);
  });
});
