import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HAVE_CHROMIUM, SKIP_REASON, closeDemoPage, openDemoPage, waitForText, type DemoPage, type Served } from './harness.js';

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

// The compositions panel: play a demo composition from the page, watch its instance's state
// and live counts follow the emulator's clock, and stop it with its button.
describe.skipIf(!HAVE_CHROMIUM)('the compositions panel in Chromium', () => {
  let session: DemoPage;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    session = await openDemoPage();
    ({ served, page, problems } = session);
  });
  afterAll(() => closeDemoPage(session));
  afterEach(() => expect(problems.splice(0)).toEqual([]));

  it('plays a composition, shows its state and counts, and stops it', async () => {
    await page.goto(served.url);
    const card = page.locator('article[data-composition="/Tests/Checkout Load"]');
    await waitForText(card, /200/);
    await card.locator('button[name="play"]').click();
    const instance = page.locator('#instances article').first();
    await waitForText(instance.locator('.badge'), 'Loading');
    expect(await instance.locator('button[name="pause"]').isDisabled()).toBe(true);
    served.clock.advance(20_000 + 10_000 + 400_000);
    await waitForText(instance.locator('.badge'), 'Playing');
    await waitForText(instance, /messages \d+/);
    await waitForText(instance, /errors \d+ \(\d+\.\d\d %\)/);
    await instance.locator('button[name="stop"]').click();
    await waitForText(instance.locator('.badge'), 'Stopping');
    served.clock.advance(30_000);
    await waitForText(instance.locator('.badge'), 'Unloaded');
    await waitForText(instance, 'the run ended Stopped');
  });
});
