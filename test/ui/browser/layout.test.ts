import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, serveDemo, waitForText, type Served } from './harness.js';

// What the page looks like before it has read anything, and where its labels go: the top bar
// keeps its layout from the first paint on (placeholders of the size of what comes, no wrong
// value), and the time axis's "now" never lies over a tick's label.
if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM)('the layout of the page, in Chromium', () => {
  let served: Served;
  let browser: Browser;
  beforeAll(async () => {
    served = await serveDemo();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.app.close();
  });

  for (const width of [1440, 1280, 1000]) {
    it(`keeps the top bar as it is at first paint once everything is read (${width} px wide)`, { timeout: 90_000 }, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      // The first paint, held: no answer of the control API comes until it is measured.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route(/\/_emulator\/(clock|lifecycles|events|users|health|sandboxes)/, async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(served.url, { waitUntil: 'domcontentloaded' });
      await page.locator('#clock-time').waitFor();
      const measure = async () => ({
        bar: await page.locator('header.topbar').boundingBox(),
        time: await page.locator('#clock-time').boundingBox(),
        buttons: await page.locator('button[data-advance="1000"]').boundingBox(),
        reset: await page.locator('#reset').boundingBox(),
      });
      const first = await measure();
      // No made-up value: no dashes for a time, no speed the emulator did not give.
      expect(await page.locator('#clock-time').textContent()).not.toContain('-');
      expect(await page.locator('#clock-time').getAttribute('class')).toContain('pending');
      expect(await page.locator('#clock-scale').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.textContent)).toBe('×…');
      release();
      await waitForText(page.locator('#clock-time'), '09:00:00');
      await waitForText(page.locator('#who'), 'demo@example.com');
      await waitForText(page.locator('#live'), 'live');
      expect(await page.locator('#clock-scale').evaluate((el: HTMLSelectElement) => el.selectedOptions[0]?.textContent)).toBe('×1');
      const loaded = await measure();
      expect(await page.locator('#clock-time').getAttribute('class')).not.toContain('pending');
      for (const part of ['bar', 'time', 'buttons', 'reset'] as const) {
        const [a, b] = [first[part]!, loaded[part]!];
        expect(Math.abs(a.x - b.x), `${part} x`).toBeLessThanOrEqual(1);
        expect(Math.abs(a.y - b.y), `${part} y`).toBeLessThanOrEqual(1);
        expect(Math.abs(a.height - b.height), `${part} height`).toBeLessThanOrEqual(1);
      }
      // Brand, clock and session on one row when wide, on two rows narrower: never three.
      const [brand, clock, session] = await Promise.all(['.brand', '.clock', '.session'].map(async (sel) => (await page.locator(`header.topbar > ${sel}`).boundingBox())!));
      const side = (a: typeof brand, b: typeof brand) => a.y < b.y + b.height && b.y < a.y + a.height;
      expect(side(brand, session)).toBe(true);
      if (width >= 1440) expect(side(brand, clock) && side(clock, session)).toBe(true);
      else expect(clock.y).toBeGreaterThanOrEqual(Math.max(brand.y + brand.height, session.y + session.height) - 1);
      await page.close();
    });
  }

  it('leaves out the label of a tick that the "now" label would lie over', { timeout: 90_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(served.url);
    await waitForText(page.locator('#clock-time'), '09:00:00');
    // The last hour ends at 09:00:00 with a tick at 09:00: exactly at now.
    await page.locator('#ann-window').selectOption('3600000');
    await page.locator('#ann-axis .now text').waitFor();
    await page.waitForTimeout(300);
    // Read in one go: the axis is drawn again as the clock and the list change.
    const { now, ticks } = await page.evaluate(() => {
      const rect = (el: Element) => el.getBoundingClientRect().toJSON() as DOMRect;
      return { now: rect(document.querySelector('#ann-axis .now text')!), ticks: [...document.querySelectorAll('#ann-axis .tick text')].map(rect) };
    });
    expect(ticks.length).toBeGreaterThan(2);
    for (const box of ticks) {
      const apart = box.x + box.width <= now.x || now.x + now.width <= box.x;
      expect(apart, `a tick label at ${box.x}..${box.x + box.width}, now at ${now.x}..${now.x + now.width}`).toBe(true);
    }
    await page.close();
  });
});
