import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchBrowser, serveDemo, waitForText, waitUntil, watchPageErrors, type Served } from './harness.js';

// The sandbox picker: the page loaded under /sandbox/<name>/ drives that sandbox and nothing
// else, and the picker in the top bar lists, makes, switches and deletes sandboxes.

const CLOUD = '/concerto/services/rest/CloudService/v1';
const TOKEN = { 'x-auth-token': 'demo-token' };

describe.skipIf(!HAVE_CHROMIUM)('dashboard sandbox picker', () => {
  let browser: Browser;
  let served: Served;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  /** Every request the page sent to the emulator, as method and path. */
  let sent: string[];
  /** Every answer the page got that was not 2xx or 304. */
  let refused: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => browser?.close());
  afterEach(async () => {
    await context?.close();
    await served?.app.close();
    expect(problems).toEqual([]);
  });

  async function open(config: Parameters<typeof serveDemo>[0] = {}, path = '/_emulator/ui/', { waitLive = true } = {}) {
    served = await serveDemo(config);
    context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    page = await context.newPage();
    problems = watchPageErrors(page);
    sent = [];
    refused = [];
    page.on('request', (r) => sent.push(`${r.method()} ${new URL(r.url()).pathname}`));
    page.on('response', (r) => {
      if (r.status() >= 300 && r.status() !== 304) refused.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    // confirm() before a delete: the test says yes.
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(new URL(path, served.url).href);
    if (waitLive) await waitForText(page.locator('#live'), 'live');
  }

  /** What the emulator itself says. */
  const read = async (url: string) => (await served.app.inject({ url, headers: TOKEN })).json();
  const sandboxNames = async () => ((await read('/_emulator/sandboxes')).sandboxes as Array<{ name: string }>).map((s) => s.name);
  const select = () => page.locator('#sandbox-select');
  const badge = (id: number) => page.locator(`article[data-kind="grid"][data-id="${id}"] header .badge`);
  const pathname = () => new URL(page.url()).pathname;

  async function create(name: string) {
    await page.locator('#sandbox-new').click();
    await page.locator('#sandbox-dialog').waitFor({ state: 'visible' });
    await page.locator('#sandbox-form input[name=name]').fill(name);
    await page.locator('#sandbox-form button[type=submit]').click();
  }

  it('makes sandbox w1, drives it and only it, switches back, and deletes it', { timeout: 90_000 }, async () => {
    await open();
    expect(await page.title()).toContain('default');
    expect(await select().inputValue()).toBe('');
    await waitForText(select().locator('option:checked'), 'default');
    await waitForText(badge(101), 'LOADED');

    await create('w1');
    await page.waitForURL((url) => url.pathname === '/sandbox/w1/_emulator/ui/');
    await waitForText(page.locator('#live'), 'live');
    expect(await page.title()).toContain('w1');
    expect(await select().inputValue()).toBe('w1');
    expect(await sandboxNames()).toEqual(['w1']);
    const landedAt = sent.length;

    await waitForText(badge(101), 'LOADED');
    await page.locator('article[data-kind="grid"][data-id="101"] button[name=start]').click();
    await waitForText(badge(101), 'ALLOCATING');
    expect((await read(`/sandbox/w1${CLOUD}/grid/101`)).state).toBe('ALLOCATING');
    expect((await read(`${CLOUD}/grid/101`)).state).toBe('LOADED');
    // The journal of the default world saw no start.
    const journal = (await read('/_emulator/journal')).entries as Array<{ method: string; path: string }>;
    expect(journal.filter((e) => e.method === 'POST' && e.path.includes('/grid/'))).toEqual([]);

    // Every call of the page went to w1, except the list of sandboxes, which the default world keeps.
    const calls = sent.slice(landedAt);
    expect(calls.some((c) => c.startsWith('POST /sandbox/w1/concerto/'))).toBe(true);
    expect(calls.filter((c) => !c.includes(' /sandbox/w1/') && !/^GET \/_emulator\/sandboxes(\/|$)/.test(c))).toEqual([]);

    // Back to the default world, where nothing moved.
    await select().selectOption('');
    await page.waitForURL((url) => url.pathname === '/_emulator/ui/');
    await waitForText(page.locator('#live'), 'live');
    expect(await page.title()).toContain('default');
    await waitForText(badge(101), 'LOADED');
    await waitForText(select(), 'w1');

    // And to w1 again, to delete it: the page comes back to the default world, and does not
    // make the sandbox again (SANDBOXES=auto makes one on any request to its name).
    await select().selectOption('w1');
    await page.waitForURL((url) => url.pathname === '/sandbox/w1/_emulator/ui/');
    await waitForText(badge(101), 'ALLOCATING');
    await page.locator('#sandbox-delete').click();
    await page.waitForURL((url) => url.pathname === '/_emulator/ui/');
    await waitForText(page.locator('#live'), 'live');
    // A while later (without an event stream on the emulator, after its next read of everything).
    await Promise.race([page.waitForResponse((r) => new URL(r.url()).pathname === '/_emulator/lifecycles', { timeout: 7000 }).catch(() => undefined), page.waitForTimeout(6000)]);
    expect(await sandboxNames()).toEqual([]);
    expect(sent.filter((c) => c.includes('/sandbox/w1/')).length).toBeGreaterThan(0);
    expect(await select().locator('option').allTextContents()).toEqual(['default']);
    // Each world signed in with its own token: no call was refused on the way, but for the
    // look that made sure 'w1' did not exist before it was made.
    // (An emulator without the event stream answers its path 404: the page then reads every few seconds.)
    expect(refused).toEqual(['GET /_emulator/sandboxes/w1 404']);
  });

  it('says why a name cannot be used, and shows what the server answered', async () => {
    await open({ maxSandboxes: 1 });
    await create('no spaces');
    await waitForText(page.locator('#sandbox-error'), "'no spaces' is not a sandbox name: use 1 to 64 characters of A-Z, a-z, 0-9, _ and -");
    await page.locator('#sandbox-form input[name=name]').fill('x'.repeat(65));
    await page.locator('#sandbox-form button[type=submit]').click();
    await waitForText(page.locator('#sandbox-error'), 'is not a sandbox name');
    expect(await page.locator('#sandbox-form input[name=name]').evaluate((el) => (el as HTMLInputElement).validity.valid)).toBe(false);
    expect(await sandboxNames()).toEqual([]);

    // A sandbox that exists is not replaced (PUT would wipe it).
    expect((await served.app.inject({ method: 'PUT', url: '/_emulator/sandboxes/taken' })).statusCode).toBe(201);
    await served.app.inject({ method: 'POST', url: `/sandbox/taken${CLOUD}/grid/101/action`, headers: TOKEN, payload: { action: 'start' } });
    await page.locator('#sandbox-form input[name=name]').fill('taken');
    await page.locator('#sandbox-form button[type=submit]').click();
    await waitForText(page.locator('#sandbox-error'), "sandbox 'taken' exists already");
    expect((await read(`/sandbox/taken${CLOUD}/grid/101`)).state).toBe('ALLOCATING');

    // MAX_SANDBOXES is 1 and 'taken' is it: the server's 503 says so.
    await page.locator('#sandbox-form input[name=name]').fill('w2');
    await page.locator('#sandbox-form button[type=submit]').click();
    await waitForText(page.locator('#sandbox-error'), "cannot create sandbox 'w2': 1 sandboxes exist and MAX_SANDBOXES is 1");
    await waitForText(page.locator('#sandbox-error'), '(503)');
    expect(pathname()).toBe('/_emulator/ui/');

    await page.locator('#sandbox-form button[data-cancel]').click();
    await page.locator('#sandbox-dialog').waitFor({ state: 'hidden' });
    expect(await sandboxNames()).toEqual(['taken']);
  });

  it('lists the sandboxes with the admin token when ADMIN_TOKEN is set', async () => {
    await open({ adminToken: 'let-me-in' }, '/_emulator/ui/', { waitLive: false });
    const dialog = page.locator('#admin');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('input[name=token]').fill('let-me-in');
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'hidden' });
    await waitForText(page.locator('#live'), 'live');
    const made = await served.app.inject({ method: 'PUT', url: '/_emulator/sandboxes/ci-8', headers: { authorization: 'Bearer let-me-in' } });
    expect(made.statusCode).toBe(201);
    const listed = page.waitForRequest((r) => new URL(r.url()).pathname === '/_emulator/sandboxes');
    await select().focus();
    expect((await listed).headers().authorization).toBe('Bearer let-me-in');
    await waitForText(select(), 'ci-8');
  });

  it('hides the picker when sandboxes are off, and still names the world in the title', async () => {
    await open({ sandboxes: 'off' });
    await waitUntil('the picker is hidden', async () => !(await page.locator('#sandbox-picker').isVisible()));
    expect(await page.title()).toContain('default');
  });

  it('opens a sandbox made elsewhere, with a session of its own', async () => {
    await open({}, '/sandbox/team-a/_emulator/ui/');
    expect(await page.title()).toContain('team-a');
    expect(await select().inputValue()).toBe('team-a');
    await waitForText(page.locator('#who'), 'demo@example.com');
    await waitForText(badge(101), 'LOADED');
    expect(await sandboxNames()).toEqual(['team-a']);
    // The page read its settings from beside itself, and signed in to team-a, in team-a.
    expect(sent).toContain('GET /sandbox/team-a/_emulator/ui/paths.json');
    expect(sent).toContain('PUT /sandbox/team-a/concerto/services/rest/RepositoryService/v1/Tokens');
    expect(sent).not.toContain('PUT /concerto/services/rest/RepositoryService/v1/Tokens');
  });
});
