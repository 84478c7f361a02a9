import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchBrowser, serveDemo, waitForText, waitUntil, watchPageErrors, type Served } from './harness.js';

// Details of the page a user sees at once: when a field is shown wrong, and how times are
// written. Each test has its own emulator and tab; the browser speaks en-US, whose own time
// format is 12-hour.

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

    // A start that is no time is refused, and says how to write one.
    const start = '#ann-form input[name=start]';
    await page.locator(start).fill('3:00 PM');
    expect(await border(start)).toBe(RED);
    expect(await page.locator(start).evaluate((el) => (el as HTMLInputElement).validationMessage)).toContain('YYYY-MM-DD HH:MM:SS');
    await page.locator(start).fill('2026-11-22 15:00:00');
    expect(await border(start)).not.toBe(RED);
  });

  it('writes every time on the 24-hour clock, in a browser whose own format is 12-hour', async () => {
    await open(async (s) => {
      s.clock.advance(6 * 3600_000); // 15:00 UTC
    });
    await waitForText(page.locator('#clock-time'), '15:00:00');
    await page.locator('article[data-alert="demo-alert"] button[name=fire]').click();
    await waitForText(page.locator('article[data-alert="demo-alert"]'), 'last fired 2026-11-22 15:00:00');
    await waitForText(page.locator('#journal tbody tr').first(), '15:00:00');

    // Fields whose display follows the browser's locale (en-US: "11/22/2026, 03:00:00 PM") are not used.
    expect(await page.locator('input[type=datetime-local], input[type=time], input[type=date]').count()).toBe(0);
    await waitUntil('the form starts at the emulator time', async () => (await page.locator('#ann-form input[name=start]').inputValue()) === '2026-11-22 15:00:00');
    await page.locator('#ann-form input[name=title]').fill('Afternoon deploy');
    await page.locator('#ann-form button[type=submit]').click();
    await waitForText(page.locator('#ann-list'), '2026-11-22 15:00:00');
    const text = await page.locator('body').innerText();
    expect(text).not.toMatch(/\b\d{1,2}:\d{2}(:\d{2})?\s?[AP]M\b/i);
    expect(text).toContain('15:00:00');
  });
});
