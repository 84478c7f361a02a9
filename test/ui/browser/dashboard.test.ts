import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { TEST_USER, authSeed } from '../../helpers/app.js';
import { HAVE_CHROMIUM, SKIP_REASON, launchBrowser, serve, serveDemo, waitForText, waitUntil, watchPageErrors, type Served } from './harness.js';

// The whole demo a newcomer runs, driven through the page in a real browser: one browser,
// one emulator on a frozen clock that only the page's own buttons move.
// The picture in the docs changes only when asked (npm run screenshot); every run writes one
// under test-results/ to look at.
const SCREENSHOT = new URL(
  process.env.UPDATE_SCREENSHOTS ? '../../../docs/screenshot-dashboard.png' : '../../../test-results/screenshot-dashboard.png',
  import.meta.url,
).pathname;
const CLOUD = '/concerto/services/rest/CloudService/v1';
const TOKEN = { 'x-auth-token': 'demo-token' };

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

describe.skipIf(!HAVE_CHROMIUM)('dashboard in Chromium', () => {
  let served: Served;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  const grid = (id: number) => page.locator(`article[data-kind="grid"][data-id="${id}"]`);
  const environment = (id: number) => page.locator(`article[data-kind="environment"][data-id="${id}"]`);
  const alert = (uid: string) => page.locator(`article[data-alert="${uid}"]`);
  const stateOf = (card: ReturnType<typeof grid>) => card.locator('header .badge');
  /** What the emulator itself says, to check the page shows the truth. */
  const read = async (url: string) => (await served.app.inject({ url, headers: TOKEN })).json();

  beforeAll(async () => {
    served = await serveDemo();
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    problems = watchPageErrors(page);
    // confirm() before reset and delete: the test says yes.
    page.on('dialog', (dialog) => void dialog.accept());
  });

  afterAll(async () => {
    await browser?.close();
    await served?.app.close();
  });

  /** Error notes this test provokes on purpose; any other is a failure. */
  let expected: RegExp[] = [];
  afterEach(() => {
    const unexpected = problems.splice(0).filter((p) => !expected.some((re) => re.test(p)));
    expected = [];
    expect(unexpected).toEqual([]);
  });

  it('loads with every grid, environment, RSDB and alert of the seed, signed in as the demo user', async () => {
    await page.goto(served.url);
    await waitForText(stateOf(grid(101)), 'LOADED');
    await waitForText(page.locator('#who'), 'demo@example.com');
    await waitForText(page.locator('#live'), 'live');
    const repository = await read('/concerto/services/rest/RepositoryService/v1/Objects/grid');
    expect(await page.locator('article[data-kind="grid"]').count()).toBe(repository.objects.length);
    await waitForText(stateOf(grid(102)), 'CHECKED');
    expect(await page.locator('article[data-kind="environment"]').count()).toBeGreaterThan(0);
    expect(await page.locator('article[data-kind="rsdb"]').count()).toBeGreaterThan(0);
    await waitForText(alert('demo-alert'), 'CLEARED');
    await waitForText(page.locator('#clock-time'), '09:00:00');
  });

  it('lists the latest deliveries of the outbox, as a fire makes them', async () => {
    await waitForText(page.locator('#deliveries'), 'no delivery yet');
    const uid = '5f0c7a2e-9d41-4b7a-8c3e-1a2b3c4d5e6f';
    expect((await served.app.inject({ method: 'POST', url: `/concerto/mpulse/api/alerts/${uid}/fire` })).statusCode).toBe(204);
    // One per channel, newest first: the webhook after the e-mail, both kept in the outbox only (nothing is sent by default).
    const items = page.locator('#deliveries li');
    await waitForText(items.first(), `fire ${uid} → webhook https://hooks.example.com/alerts/checkout`);
    await waitForText(items.nth(1), `fire ${uid} → email ops@example.com`);
    await waitForText(items.first().locator('.badge'), 'stored');
    await waitForText(items.first(), 'DELIVERY_ALLOW_HOSTS');
    await served.app.inject({ method: 'POST', url: `/concerto/mpulse/api/alerts/${uid}/clear` });
  });

  it("reads without filling the request journal: the page's own requests are marked and left out", async () => {
    const newest = async () => (await served.app.inject({ url: '/_emulator/journal?limit=1' })).json().entries[0]?.id ?? -1;
    const before = await newest();
    // A while of the page's life: without an event stream on the emulator it reads everything
    // every few seconds (a read is awaited); with one, it reads nothing meanwhile.
    await Promise.race([page.waitForResponse((r) => r.url().includes('/_emulator/lifecycles'), { timeout: 7000 }).catch(() => undefined), page.waitForTimeout(6000)]);
    expect(await newest()).toBe(before);
    // Its reads of the interfaces (the catalogue, signing in) are there when asked for.
    const all = (await served.app.inject({ url: '/_emulator/journal?include=dashboard&limit=500' })).json().entries;
    expect(all.filter((e: { headers: Record<string, string> }) => e.headers['x-emulator-client'] === 'dashboard').length).toBeGreaterThan(0);
  });

  it('starts a grid, and the clock buttons carry it to CHECKED with its servers and journal', async () => {
    await grid(101).locator('button[name=start]').click();
    await waitForText(stateOf(grid(101)), 'ALLOCATING');
    await waitForText(grid(101).locator('.servers tbody'), 'PENDING');
    // The page's own requests show in its journal when asked.
    await page.locator('#journal-filter input[name=include]').check();
    await waitForText(page.locator('#journal tbody'), `POST${CLOUD}/grid/101/action`);
    await page.locator('#journal-filter input[name=include]').uncheck();

    await page.locator('button[data-advance="10000"]').click();
    await waitForText(page.locator('#clock-time'), '09:00:10');
    await waitForText(stateOf(grid(101)), 'CHECKING');
    await waitForText(grid(101).locator('.progress .current'), 'CHECKING');

    await page.locator('button[data-advance="10000"]').click();
    await waitForText(stateOf(grid(101)), 'CHECKED');
    expect((await read(`${CLOUD}/grid/101`)).state).toBe('CHECKED');
    const servers = grid(101).locator('.servers tbody tr');
    expect(await servers.count()).toBe((await read(`${CLOUD}/grid/101`)).cloudServers.length);
    await waitForText(servers.first(), 'RUNNING');
    await waitForText(servers.first(), /ec2-[\d-]+\./);
    await waitForText(grid(101).locator('.journal'), 'Grid deployment complete.');
    expect(await grid(101).getAttribute('class')).toContain('fam-ready');
  });

  it('shows lifecycles in progress, fires an alert and puts an annotation on the axis (the screenshot)', async () => {
    await grid(103).locator('button[name=start]').click();
    await environment(301).locator('button[name=start]').click();
    await waitForText(stateOf(environment(301)), 'ALLOCATING_DATABASE');
    // The environment allocates its database for 4 s, then holds ALLOCATED_DATABASE for 1 s.
    const startedAt = served.clock.now();
    for (let second = 1; second <= 4; second++) {
      await page.locator('button[data-advance="1000"]').click();
      await waitForText(page.locator('#clock-time'), new Date(startedAt + second * 1000).toISOString().slice(11, 19));
    }
    await waitForText(stateOf(environment(301)), 'ALLOCATED_DATABASE');
    await waitForText(environment(301).locator('.progress .done'), 'ALLOCATING_DATABASE');
    await waitForText(environment(301).locator('.progress'), 'RUNNING');

    await alert('demo-alert').locator('input[name=message]').fill('Checkout is failing for 12% of users');
    await alert('demo-alert').locator('button[name=fire]').click();
    await waitForText(alert('demo-alert').locator('header'), 'FIRING');
    await waitForText(alert('demo-alert').locator('.history li').first(), 'Checkout is failing for 12% of users');
    const history = (await served.app.inject({ url: '/_emulator/alerts/demo-alert' })).json().history;
    expect(history.at(-1)).toMatchObject({ action: 'fire', message: 'Checkout is failing for 12% of users' });

    const form = page.locator('#ann-form');
    await form.locator('input[name=title]').fill('Deploy 2.7.0');
    await form.locator('input[name=text]').fill('Canary rollout of the checkout service');
    await page.locator('#ann-now').click();
    await form.locator('button[type=submit]').click();
    await waitForText(page.locator('#ann-list'), 'Deploy 2.7.0');
    const created = ((await read('/concerto/mpulse/api/annotations/v1')) as Array<{ id: number; title: string; start: number }>).find(
      (a) => a.title === 'Deploy 2.7.0',
    );
    expect(created).toBeDefined();
    expect(created!.start).toBe(served.clock.now());
    const marker = page.locator(`#ann-axis g.ann[data-annotation="${created!.id}"]`);
    await marker.waitFor();
    expect(await marker.getAttribute('class')).toContain('point');

    await page.evaluate(() => {
      window.scrollTo(0, 0);
      document.querySelector('#toasts')?.replaceChildren();
    });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe('PNG');
  });

  it('edits and deletes an annotation from the axis', async () => {
    const created = ((await read('/concerto/mpulse/api/annotations/v1')) as Array<{ id: number; title: string }>).find((a) => a.title === 'Deploy 2.7.0')!;
    await page.locator(`#ann-axis g.ann[data-annotation="${created.id}"]`).click();
    await waitForText(page.locator('#ann-form-title'), `#${created.id}`);
    await page.locator('#ann-form input[name=title]').fill('Deploy 2.7.1');
    await page.locator('#ann-form input[name=end]').fill('2026-11-22T10:00:00');
    await page.locator('#ann-form button[type=submit]').click();
    await waitForText(page.locator('#ann-list'), 'Deploy 2.7.1');
    const updated = await read(`/concerto/mpulse/api/annotations/v1/${created.id}`);
    expect(updated).toMatchObject({ title: 'Deploy 2.7.1', end: Date.UTC(2026, 10, 22, 10, 0, 0) });
    const bar = page.locator(`#ann-axis g.ann[data-annotation="${created.id}"]`);
    await waitForText(bar, 'Deploy 2.7.1');
    expect(await bar.getAttribute('class')).toContain('range');

    // Someone else's annotation shows up without a reload.
    const other = await served.app.inject({
      method: 'POST',
      url: '/concerto/mpulse/api/annotations/v1',
      headers: TOKEN,
      payload: { title: 'Added by a script', text: 'through the API', start: served.clock.now() - 3_600_000, domainIds: [12346] },
    });
    expect(other.statusCode).toBe(200);
    await page.locator(`#ann-axis g.ann[data-annotation="${other.json().id}"]`).waitFor();
    await waitForText(page.locator('#ann-list'), 'Added by a script');

    await page.locator('#ann-domain').selectOption({ label: 'www.example.com' });
    await page.locator(`#ann-list li[data-annotation="${other.json().id}"]`).waitFor({ state: 'detached' });
    await page.locator('#ann-domain').selectOption({ label: 'shop.example.com' });
    await page.locator(`#ann-list li[data-annotation="${other.json().id}"]`).waitFor();
    await page.locator('#ann-domain').selectOption('');

    await page.locator(`#ann-list li[data-annotation="${created.id}"] button`, { hasText: 'delete' }).click();
    await page.locator(`#ann-list li[data-annotation="${created.id}"]`).waitFor({ state: 'detached' });
    expect((await served.app.inject({ url: `/concerto/mpulse/api/annotations/v1/${created.id}`, headers: TOKEN })).statusCode).toBe(404);
  });

  it('makes a grid fail: a failed server, then a start whose outcome is ALLOCATE_FAILED', async () => {
    const firstServer = grid(101).locator('.servers tbody tr').first();
    await firstServer.locator('button', { hasText: 'fail' }).click();
    await waitForText(firstServer, 'FAILED');

    await grid(101).locator('button[name=terminate]').click();
    await waitForText(stateOf(grid(101)), 'TERMINATING');
    await grid(101).locator('button[name=settle]').click();
    await waitForText(stateOf(grid(101)), 'TERMINATED');
    expect(await grid(101).getAttribute('class')).toContain('fam-terminated');

    await grid(101).locator('select[name=outcome]').selectOption('ALLOCATE_FAILED');
    await grid(101).locator('button[name=start]').click();
    await waitForText(stateOf(grid(101)), 'ALLOCATING');
    await waitForText(grid(101).locator('.progress'), 'ALLOCATE_FAILED');
    await page.locator('#advance-next').click();
    await grid(101).locator('button[name=settle]').click();
    await waitForText(stateOf(grid(101)), 'ALLOCATE_FAILED');
    expect(await grid(101).getAttribute('class')).toContain('fam-failed');
    expect((await read(`${CLOUD}/grid/101`)).state).toBe('ALLOCATE_FAILED');
  });

  it('disables an alert (fire then answers 409) and clears it once enabled again', async () => {
    const card = alert('demo-alert');
    await card.locator('input[name=enabled]').uncheck();
    await waitForText(card, 'disabled: fire and clear answer 409');
    expected.push(/demo-alert\/fire → 409: alert 'demo-alert' \(Demo alert\) is disabled/);
    await card.locator('button[name=fire]').click();
    await waitForText(page.locator('#toasts'), '409');
    await card.locator('input[name=enabled]').check();
    await card.locator('button[name=clear]').click();
    await waitForText(card.locator('header'), 'CLEARED');
    await waitForText(card.locator('.history li').first(), 'CLEAR');
  });

  it('adds and removes a fault rule, and filters the journal', async () => {
    await page.locator('#fault-form input[name=times]').fill('2');
    await page.locator('#fault-form button[type=submit]').click();
    const row = page.locator('#faults tbody tr').first();
    await waitForText(row, 'answer 503');
    const [rule] = (await served.app.inject({ url: '/_emulator/faults' })).json();
    expect(rule).toMatchObject({ path: '/concerto/mpulse/api/annotations/v1*', action: { status: 503 }, remaining: 2 });
    await row.locator('button', { hasText: 'remove' }).click();
    await waitForText(page.locator('#faults tbody'), 'no fault rule');

    // A rule of scope all also hits the page's own reads (the default scope leaves them
    // alone): it says so once, and the rest keeps working.
    // (The page reads the lifecycles after every transition; a grid's own view may come with
    // its event, without a read.)
    await served.app.inject({ method: 'POST', url: '/_emulator/faults', payload: { id: 'grids-down', method: 'GET', path: '/_emulator/lifecycles', action: { status: 503 }, scope: 'all' } });
    expected.push(/GET \/_emulator\/lifecycles → 503/);
    await grid(104).locator('button[name=start]').click();
    await waitForText(page.locator('#toasts'), /GET \/_emulator\/lifecycles → 503/);
    // Once the rule is gone the page is live again. (Waiting for that with the rule still on
    // depended on a batch of events that needs no read of the lifecycles: on a busy machine
    // the events of a moment come together, and every batch read them.)
    await served.app.inject({ method: 'DELETE', url: '/_emulator/faults/grids-down' });
    await waitForText(page.locator('#live'), 'live');
    await page.locator('button[data-advance="1000"]').click();
    await waitForText(stateOf(grid(104)), 'ALLOCATING', 15_000);

    const methods = () => page.locator('#journal tbody tr td:nth-child(2)').allTextContents();
    await page.locator('#journal-filter input[name=include]').check();
    await waitUntil("the journal lists the page's requests too", async () => new Set(await methods()).size > 1);
    await page.locator('#journal-filter select[name=method]').selectOption('POST');
    await waitUntil('the journal lists POSTs only', async () => new Set(await methods()).size === 1);
    expect(new Set(await methods())).toEqual(new Set(['POST']));
    expect((await methods()).length).toBeGreaterThan(2);
    await page.locator('#journal-filter select[name=method]').selectOption('');
    await waitUntil('the journal lists every method again', async () => new Set(await methods()).size > 1);
    await page.locator('#journal-filter input[name=include]').uncheck();
  });

  it('changes the clock speed and freezes it again', async () => {
    await page.locator('#clock-scale').selectOption('60');
    await page.locator('#clock-freeze').click();
    await waitForText(page.locator('#clock-mode'), '×60');
    expect((await served.app.inject({ url: '/_emulator/clock' })).json()).toMatchObject({ scale: 60, frozen: false });
    await page.locator('#clock-freeze').click();
    await waitForText(page.locator('#clock-mode'), 'frozen');
    await page.locator('#clock-scale').selectOption('1');
    await waitForText(page.locator('#clock-freeze'), 'resume');
  });

  it('exports the state, resets to the seed, and imports the export back', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export').click()]);
    const file = await download.path();
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    expect(exported.grids.find((g: { id: number }) => g.id === 101).deployment).toBeDefined();

    await page.locator('#reset').click();
    await waitForText(stateOf(grid(101)), 'LOADED');
    await waitForText(alert('demo-alert').locator('.history'), 'never fired');
    expect((await read(`${CLOUD}/grid/101`)).state).toBe('LOADED');

    await page.locator('#import').setInputFiles(file);
    await waitForText(stateOf(grid(101)), 'ALLOCATE_FAILED');
    await waitForText(alert('demo-alert').locator('.history'), 'Checkout is failing for 12% of users');
  });
});

describe.skipIf(!HAVE_CHROMIUM)('dashboard sign-in', () => {
  let browser: Browser;
  let served: Served | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterEach(async () => {
    await served?.app.close();
    served = undefined;
  });
  afterAll(async () => browser?.close());

  it("signs in as the seed's first user when it has no demo user, without a refused log-in", { timeout: 90_000 }, async () => {
    served = await serve(authSeed());
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('response', (r) => r.status() === 401 && refused.push(`${r.request().method()} ${r.url()}`));
    await page.goto(served.url);
    await waitForText(page.locator('#who'), TEST_USER.userName);
    await waitForText(page.locator('#grids'), 'no grid in the repository');
    expect(await page.locator('#login').isVisible()).toBe(false);
    expect(refused).toEqual([]);
    await page.close();
  });

  it("offers the world's users and tokens in the sign-in dialog, and says why a log-in failed", { timeout: 90_000 }, async () => {
    const other = { userName: 'other@example.com', password: 'pw2', tenant: 'Default' };
    served = await serve({ ...authSeed(), users: [{ ...TEST_USER }, other], tokens: [{ token: 'forever', userName: other.userName, neverExpires: true }] });
    const page = await browser.newPage();
    await page.goto(served.url);
    await waitForText(page.locator('#who'), TEST_USER.userName);
    await page.locator('#who').click();
    const dialog = page.locator('#login');
    await dialog.waitFor({ state: 'visible' });
    expect(await dialog.locator('#login-offered button').allTextContents()).toEqual([TEST_USER.userName, other.userName, 'token forever']);
    await dialog.locator('input[name=userName]').fill(TEST_USER.userName);
    await dialog.locator('input[name=password]').fill('wrong');
    await dialog.locator('button[type=submit]').click();
    await waitForText(page.locator('#login-error'), 'bad credentials');
    await dialog.locator(`#login-offered button[data-user="${other.userName}"]`).click();
    await dialog.waitFor({ state: 'hidden' });
    await waitForText(page.locator('#who'), other.userName);
    await page.locator('#who').click();
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('#login-offered button[data-token="forever"]').click();
    await dialog.waitFor({ state: 'hidden' });
    await waitForText(page.locator('#who'), 'signed in with a session token');
    await page.close();
  });

  it('asks for credentials when the world has no user at all', { timeout: 90_000 }, async () => {
    served = await serve({});
    const page = await browser.newPage();
    await page.goto(served.url);
    const dialog = page.locator('#login');
    await dialog.waitFor({ state: 'visible' });
    expect(await dialog.locator('#login-offered').isVisible()).toBe(false);
    await page.close();
  });

  it('asks for the admin token once when ADMIN_TOKEN is set, and keeps it for the tab', { timeout: 90_000 }, async () => {
    served = await serveDemo({ adminToken: 'let-me-in' });
    const page = await browser.newPage();
    await page.goto(served.url);
    const dialog = page.locator('#admin');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('input[name=token]').fill('guess');
    await dialog.locator('button[type=submit]').click();
    await waitForText(page.locator('#admin-error'), 'admin token is wrong');
    await dialog.locator('input[name=token]').fill('let-me-in');
    await dialog.locator('button[type=submit]').click();
    await dialog.waitFor({ state: 'hidden' });
    await waitForText(page.locator('article[data-kind="grid"][data-id="101"] header .badge'), 'LOADED');
    await page.reload();
    await waitForText(page.locator('#live'), 'live');
    expect(await dialog.isVisible()).toBe(false);
    await page.close();
  });
});
