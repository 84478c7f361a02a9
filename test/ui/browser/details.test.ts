import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchBrowser, serveDemo, waitForText, watchPageErrors, type Served } from './harness.js';

// Details of the page a user sees at once. Each test has its own emulator and tab; the
// browser speaks en-US.

/** --failed in style.css. */
const RED = 'rgb(198, 40, 40)';

describe.skipIf(!HAVE_CHROMIUM)('dashboard details', () => {
  let browser: Browser;
  let served: Served;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => browser?.close());
  afterEach(async () => {
    await context?.close();
    await served?.app.close();
    expect(problems).toEqual([]);
  });

  async function open(prepare?: (s: Served) => Promise<void>) {
    served = await serveDemo();
    await prepare?.(served);
    context = await browser.newContext({ locale: 'en-US', timezoneId: 'America/New_York', viewport: { width: 1440, height: 1000 } });
    page = await context.newPage();
    problems = watchPageErrors(page);
    await page.goto(served.url);
    await waitForText(page.locator('#live'), 'live');
  }

  const border = (selector: string) => page.locator(selector).evaluate((el) => getComputedStyle(el).borderTopColor);

  it('shows a field as wrong only once the user typed in it or tried to submit', async () => {
    await open();
    const title = '#ann-form input[name=title]';
    expect(await page.locator(title).inputValue()).toBe('');
    expect(await border(title)).not.toBe(RED);

    await page.locator('#ann-form button[type=submit]').click();
    expect(await border(title)).toBe(RED);
    await page.locator(title).fill('Deploy');
    expect(await border(title)).not.toBe(RED);
    await page.locator(title).fill('');
    expect(await border(title)).toBe(RED);

    // After an annotation is added the form is empty again, and no longer marked.
    await page.locator(title).fill('Deploy 2.8.0');
    await page.locator('#ann-form button[type=submit]').click();
    await waitForText(page.locator('#ann-list'), 'Deploy 2.8.0');
    expect(await page.locator(title).inputValue()).toBe('');
    expect(await border(title)).not.toBe(RED);
  });

});
