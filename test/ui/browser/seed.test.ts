import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { buildApp } from '../../../src/app.js';
import { ManualClock } from '../../../src/core/clock.js';
import { BUNDLED_FIXTURES_DIR } from '../../../src/config.js';
import { emptyState, inspectFixtures, loadFixtures } from '../../../src/state.js';
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
    // Generous: a busy machine is slow to open the page.
    await waitForText(page.locator('#live'), 'live', 40_000);
    const banner = page.locator('#seed-problems');
    expect(await banner.isHidden()).toBe(true);

    const file = join(dir, 'users.json');
    const good = readFileSync(file, 'utf8');
    // A trailing comma.
    writeFileSync(file, good.replace(/\}\s*\]\s*,\s*"tokens"/, '},],"tokens"'));
    await waitForText(banner, 'users.json:', 30_000);
    expect(await banner.textContent()).toContain('the last good seed is served');

    writeFileSync(file, good);
    await waitUntil('the banner goes', async () => banner.isHidden(), 30_000);
  }, 120_000);

  it('says the world is empty when the folder had problems at start, until it is fixed', async () => {
    await served?.app.close();
    const broken = mkdtempSync(join(tmpdir(), 'dashboard-seed-empty-'));
    try {
      writeFileSync(join(broken, 'users.json'), '{"users": [}');
      const clock = new ManualClock(Date.UTC(2026, 10, 22, 9));
      // As a start with WATCH does it (index.ts launch): an empty seed, the folder's problems on show.
      const app = await buildApp({ config: { fixturesDir: broken, watch: true }, clock, fixtures: emptyState(), fixturesFrom: broken });
      app.seedWatch!.begin(await inspectFixtures(broken));
      watchResponses(app);
      served = await listen({ app, clock });
      browser ??= await launchBrowser();
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      await page.goto(served.url);
      const banner = page.locator('#seed-problems');
      // Generous: a busy machine is slow to open the page.
      await waitForText(banner, 'users.json:', 40_000);
      expect(await banner.textContent()).toContain('the emulator runs on an empty seed until they are fixed');
      // The empty world has no user to sign in as: the page asks for one, the banner says why.
      writeFileSync(join(broken, 'users.json'), JSON.stringify({ users: [{ userName: 'demo@example.com', password: 'demo' }] }));
      await waitUntil('the folder is loaded', async () => app.world.exportState().users.length === 1, 30_000);
      // Opened again, the page signs in as the demo user and reads everything: no banner.
      await page.reload();
      await waitForText(page.locator('#live'), 'live', 40_000);
      await waitUntil('the banner goes', async () => banner.isHidden(), 30_000);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  }, 120_000);
});
