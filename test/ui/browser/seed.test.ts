import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildApp } from '../../../src/app.js';
import { ManualClock } from '../../../src/core/clock.js';
import { BUNDLED_FIXTURES_DIR } from '../../../src/config.js';
import { loadFixtures } from '../../../src/state.js';
import { watchResponses } from '../../helpers/conformance.js';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, listen, waitForText, waitUntil, type Served } from './harness.js';

/**
 * The dashboard of an emulator that reloads its fixtures (WATCH): a broken edit shows its
 * problems above the panels, from the event stream, and fixing it takes them away.
 */
if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM)('the dashboard of a watched fixtures folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-seed-'));
  let served: Served | undefined;
  let browser: Browser | undefined;

  afterAll(async () => {
    await browser?.close();
    await served?.app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the problems of a broken edit until the folder is fixed', async () => {
    cpSync(BUNDLED_FIXTURES_DIR, dir, { recursive: true });
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 9));
    const app = await buildApp({ config: { fixturesDir: dir, watch: true }, clock, fixtures: await loadFixtures(dir), fixturesFrom: dir });
    watchResponses(app);
    served = await listen({ app, clock });
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(served.url);
    await waitForText(page.locator('#live'), 'live');
    const banner = page.locator('#seed-problems');
    expect(await banner.isHidden()).toBe(true);

    const file = join(dir, 'users.json');
    const good = readFileSync(file, 'utf8');
    // A trailing comma.
    writeFileSync(file, good.replace(/\}\s*\]\s*,\s*"tokens"/, '},],"tokens"'));
    await waitForText(banner, 'users.json:');
    expect(await banner.textContent()).toContain('the last good seed is served');

    writeFileSync(file, good);
    await waitUntil('the banner goes', async () => banner.isHidden());
  });
});
