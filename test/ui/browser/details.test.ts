import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { HAVE_CHROMIUM, launchBrowser, serveDemo, waitForText, waitUntil, watchPageErrors, type Served } from './harness.js';

// Details of the page a user sees at once: when a field is shown wrong, how times are
// written, and that a frozen clock holds every countdown still. Each test has its own
// emulator and tab; the browser speaks en-US, whose own time format is 12-hour.

const CLOUD = '/concerto/services/rest/CloudService/v1';
const REPOSITORY = '/concerto/services/rest/RepositoryService/v1';
const TOKEN = { 'x-auth-token': 'demo-token' };
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
    // The page's own request (the fire) shows in its journal when asked for.
    await page.locator('#journal-filter input[name=include]').check();
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

  it('holds every countdown still from the moment the clock is frozen, even when a read saw it running', async () => {
    await open(async (s) => {
      const started = await s.app.inject({ method: 'POST', url: `${CLOUD}/grid/103/action`, headers: TOKEN, payload: { action: 'start' } });
      expect(started.statusCode).toBe(202);
      s.clock.setFrozen(false); // real time, ×1
    });
    await waitForText(page.locator('#clock-mode'), 'real time');
    const countdowns = page.locator('[data-countdown]');
    await countdowns.first().waitFor();

    // From here the page's reads of the clock (a read of everything: the journal's refresh
    // asks for one) happen while it still runs, and their answers arrive only when released:
    // the page has nothing but its own freeze to go by.
    const held: Array<() => Promise<void>> = [];
    let holding = true;
    const isClockRead = (url: URL) => url.pathname === '/_emulator/clock';
    const hold = async (route: Route) => {
      if (!holding || route.request().method() !== 'GET') return route.continue();
      const response = await route.fetch();
      held.push(() => route.fulfill({ response }));
    };
    await page.route(isClockRead, hold);
    await page.locator('#journal-refresh').click();
    await waitUntil('a read is held', async () => held.length > 0);

    await page.locator('#clock-freeze').click();
    await waitForText(page.locator('#clock-mode'), 'frozen');
    const frozenAt = served.clock.now();
    const shown = async () => [await page.locator('#clock-time').innerText(), await page.locator('#clock-next').innerText(), ...(await countdowns.allInnerTexts())];
    const before = await shown();
    expect(before[0]).toBe(new Date(frozenAt).toISOString().slice(11, 19));
    expect(before.slice(2).every((t) => / in \d/.test(t))).toBe(true);
    // Long enough for the page to redraw its countdowns several times over (every 250 ms).
    await page.waitForTimeout(1500);
    expect(await shown()).toEqual(before);

    // The answers read while the clock still ran come in late: older than the freeze, they are
    // dropped, not shown even for a moment.
    await page.locator('#clock-mode').evaluate((mode) => {
      const seen: string[] = [];
      (window as unknown as { modesSeen: string[] }).modesSeen = seen;
      new MutationObserver(() => seen.push(mode.textContent ?? '')).observe(mode, { childList: true, characterData: true, subtree: true });
    });
    holding = false;
    for (const release of held.splice(0)) await release();
    await page.unroute(isClockRead, hold);
    await page.locator('button[data-advance="1000"]').click();
    await waitForText(page.locator('#clock-time'), new Date(frozenAt + 1000).toISOString().slice(11, 19));
    // A read of everything later, the page has read all the advance changed.
    const read = page.waitForResponse((r) => isClockRead(new URL(r.url())));
    await page.locator('#journal-refresh').click();
    await read;
    expect(await page.evaluate(() => (window as unknown as { modesSeen: string[] }).modesSeen.filter((m) => m !== 'frozen'))).toEqual([]);
    expect(await page.locator('#clock-mode').textContent()).toBe('frozen');
    const after = await shown();
    await page.waitForTimeout(1500);
    expect(await shown()).toEqual(after);
  });

  it("lists each repository object's references (type, name, id, internalID), and follows a change to them", { timeout: 60_000 }, async () => {
    await open();
    const domain = page.locator('#obj-list li[data-object="12345"]');
    await waitForText(domain, 'www.example.com');
    expect(await domain.locator('[data-reference]').count()).toBe(0);

    const setReferences = async (references: object[]) => {
      const answer = await served.app.inject({ method: 'POST', url: `${REPOSITORY}/Objects/domain/12345`, headers: TOKEN, payload: { references } });
      expect(answer.statusCode).toBe(204);
    };
    await setReferences([{ name: 'boomerang-1.737.0', type: 'boomerang', internalID: 'boomr' }]);
    const reference = domain.locator('[data-reference="boomerang:9101"]');
    await waitForText(reference, 'boomerang-1.737.0');
    expect(await reference.textContent()).toBe('uses boomerang boomerang-1.737.0 #9101 internalID=boomr');
    // The other domain references nothing, and shows no reference.
    expect(await page.locator('#obj-list li[data-object="12346"] [data-reference]').count()).toBe(0);

    await setReferences([]);
    await waitUntil('the removed reference is gone', async () => (await domain.locator('[data-reference]').count()) === 0);
  });
});
