import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { Config } from '../../../src/config.js';
import type { State } from '../../../src/state.js';
import { makeApp, makeDemoApp, type TestApp } from '../../helpers/app.js';

/** Debian's Chromium (`apt-get install chromium`); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const SKIP_REASON = `browser tests skipped: no Chromium at ${CHROMIUM} (install it with: apt-get install -y chromium, or set CHROMIUM_PATH)`;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface Served extends TestApp {
  url: string;
}

/** The demo seed on a frozen ManualClock, listening on a free local port. */
export async function serveDemo(config: Partial<Config> = {}): Promise<Served> {
  return listen(await makeDemoApp(config));
}

/** Another seed on a frozen ManualClock, listening on a free local port. */
export async function serve(fixtures: Partial<State>, config: Partial<Config> = {}): Promise<Served> {
  return listen(await makeApp(fixtures, config));
}

/** Listens on a free local port: for an app a test adds routes to first. */
export async function listen(served: TestApp): Promise<Served> {
  await served.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = served.app.server.address() as AddressInfo;
  return { ...served, url: `http://127.0.0.1:${port}/_emulator/ui/` };
}

/** Waits until the element's text contains `text` (the page polls, so this may take a moment). */
export async function waitForText(locator: Locator, text: string | RegExp, timeout = 10_000): Promise<void> {
  const start = performance.now();
  let last = '';
  while (performance.now() - start < timeout) {
    last = (await locator.textContent({ timeout }).catch(() => '')) ?? '';
    if (typeof text === 'string' ? last.includes(text) : text.test(last)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${String(text)} in ${locator}; last text: ${JSON.stringify(last.slice(0, 300))}`);
}

/** Polls `check` until it holds; the page updates by polling, so assertions wait for it. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeout = 10_000): Promise<void> {
  const start = performance.now();
  while (performance.now() - start < timeout) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Collects what went wrong inside the page: uncaught errors, console errors and the page's error notes. */
export function watchPageErrors(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // The browser logs every 4xx/5xx answer; the page shows those itself, on purpose.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(`console error: ${msg.text()}`);
    // The page's own error notes.
    if (msg.type() === 'warning') problems.push(`note: ${msg.text()}`);
  });
  return problems;
}

/** A dashboard session on the demo seed: the served app, a browser, one wide page, and what goes wrong in it. */
export interface DemoPage {
  served: Served;
  browser: Browser;
  page: Page;
  problems: string[];
}

/** Serves the demo seed and opens one page (1440 x 1000) in a new browser; close both with closeDemoPage. */
export async function openDemoPage(): Promise<DemoPage> {
  const served = await serveDemo();
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  return { served, browser, page, problems: watchPageErrors(page) };
}

export async function closeDemoPage(session: DemoPage | undefined): Promise<void> {
  await session?.browser.close();
  await session?.served.app.close();
}
