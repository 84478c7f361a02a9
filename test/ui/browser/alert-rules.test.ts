import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, serveDemo, waitForText, watchPageErrors, type Served } from './harness.js';

// The demo seed's threshold alert on the dashboard: the rule in words, the value of the last
// minute, and its fire once the clock passes five minutes of the CDN outage.

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM)('an alert with a threshold rule in Chromium', () => {
  let served: Served;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    served = await serveDemo();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    problems = watchPageErrors(page);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.app.close();
  });

  it('shows the rule and its value, and the fire by the rule once the clock moves past it', async () => {
    await page.goto(served.url);
    const card = page.locator('article[data-alert="shop-page-load"]');
    await waitForText(card.locator('.rule'), 'median PageLoad above 4 s for 5 min on shop.example.com');
    await waitForText(card.locator('.rule-value'), 'value 2.588 s');
    await waitForText(card.locator('.rule-value'), '0 of 5 min');
    await waitForText(card.locator('header'), 'CLEARED');
    await waitForText(page.locator('#live'), 'live');
    const advanced = await served.app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 600_000 } });
    expect(advanced.statusCode).toBe(200);
    await waitForText(card.locator('header'), 'FIRING');
    await waitForText(card.locator('.rule-value'), 'holding');
    await waitForText(card.locator('.history li').first(), 'by the rule');
    expect(problems).toEqual([]);
  });
});
