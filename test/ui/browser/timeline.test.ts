import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { HAVE_CHROMIUM, SKIP_REASON, closeDemoPage, openDemoPage, waitForText, waitUntil, type DemoPage, type Served } from './harness.js';

if (!HAVE_CHROMIUM) console.warn(SKIP_REASON);

// The timeline scrubber: a timeline set through the control API shows as marks on a bar, and
// a click on a mark (or on the bar) seeks the emulator's timeline there, forwards and back.
const ALERT = '5f0c7a2e-9d41-4b7a-8c3e-1a2b3c4d5e6f';
const CLOUD = '/concerto/services/rest/CloudService/v1';
const STEPS = [
  { at: '+30s', name: 'Checkout goes down', request: { method: 'POST', path: `/concerto/mpulse/api/alerts/${ALERT}/fire`, body: { message: 'Checkout is down' } } },
  { at: '+2m', name: 'Checkout is back', request: { method: 'POST', path: `/concerto/mpulse/api/alerts/${ALERT}/clear` } },
  { at: '+4m', request: { method: 'POST', path: `/concerto/mpulse/api/alerts/${ALERT}/fire`, body: { message: 'Down again' } } },
];

interface Timeline {
  steps: Array<{ at: string; atMs: number; name?: string; done: boolean; status?: number; request: { path: string; headers?: Record<string, string> } }>;
  offsetMs: number;
  next: number | null;
  lengthMs: number;
  recording: boolean;
}

describe.skipIf(!HAVE_CHROMIUM)('the timeline scrubber in Chromium', () => {
  let session: DemoPage;
  let served: Served;
  let page: Page;
  let problems: string[];

  const timeline = async (): Promise<Timeline> => (await served.app.inject({ url: '/_emulator/timeline' })).json();
  const setTimeline = async (steps: unknown[]) => {
    const res = await served.app.inject({ method: 'PUT', url: '/_emulator/timeline', payload: { steps } });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const marks = () => page.locator('#timeline-marks button.mark');
  /** The alert the steps fire and clear, as its card shows it. */
  const alertCard = () => page.locator(`article[data-alert="${ALERT}"]`);
  const markClasses = async () => (await marks().evaluateAll((els) => els.map((el) => el.className))).map((c) => (c.includes('done') ? 'done' : 'pending'));

  beforeAll(async () => {
    session = await openDemoPage();
    ({ served, page, problems } = session);
  });
  afterAll(() => closeDemoPage(session));
  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  it('shows the steps as marks on a bar as long as the timeline, labelled by name or request', { timeout: 40_000 }, async () => {
    await setTimeline(STEPS);
    await page.goto(served.url);
    await waitUntil('three marks', async () => (await marks().count()) === 3);
    expect(await page.locator('#timeline-panel').isVisible()).toBe(true);
    const labels = await marks().evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
    expect(labels[0]).toContain('+30s: Checkout goes down');
    expect(labels[1]).toContain('+2m: Checkout is back');
    // A step without a name goes by its request.
    expect(labels[2]).toContain(`POST /concerto/mpulse/api/alerts/${ALERT}/fire`);
    expect(await marks().nth(0).getAttribute('title')).toContain('Checkout goes down');
    expect(await markClasses()).toEqual(['pending', 'pending', 'pending']);
    // Each mark lies at its offset along the bar: +30s, +2m and +4m of 4 minutes.
    const track = (await page.locator('#timeline-track').boundingBox())!;
    const centres = await marks().evaluateAll((els) => els.map((el) => el.getBoundingClientRect()).map((r) => r.x + r.width / 2));
    const expected = [0.125, 0.5, 1].map((f) => track.x + f * track.width);
    centres.forEach((x, i) => expect(Math.abs(x - expected[i]), `mark ${i}`).toBeLessThanOrEqual(2));
    await waitForText(page.locator('#timeline-offset'), 'of +4m');
    // The marks are buttons: reachable with the keyboard.
    await marks().nth(1).focus();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-index'))).toBe('1');
  });

  it('seeks forward to a later mark: the emulator is there, the steps before it done', async () => {
    await marks().nth(2).click();
    await waitUntil('the timeline at +4m', async () => (await timeline()).offsetMs === 240_000);
    const tl = await timeline();
    // Every step up to the offset is played, the one at it too: fired, cleared, fired again.
    expect(tl.steps.map((step) => step.done)).toEqual([true, true, true]);
    expect(tl.next).toBeNull();
    await waitForText(alertCard(), 'FIRING');
    await waitForText(alertCard(), 'Down again');
    // The page shows it: the marks before are done, the cursor at the end of the bar.
    await waitUntil('the marks done', async () => (await markClasses()).join() === 'done,done,done');
    await waitForText(page.locator('#timeline-offset'), '+4m of +4m');
    expect(await page.locator('#timeline-track').getAttribute('aria-valuenow')).toBe('240000');
    const track = (await page.locator('#timeline-track').boundingBox())!;
    const cursor = (await page.locator('#timeline-cursor').boundingBox())!;
    expect(Math.abs(cursor.x + cursor.width / 2 - (track.x + track.width))).toBeLessThanOrEqual(2);
  });

  it('seeks back to an earlier mark: the steps after it are pending again', async () => {
    await marks().nth(0).click();
    await waitUntil('the timeline at +30s', async () => (await timeline()).offsetMs === 30_000);
    const tl = await timeline();
    // The world as the first step left it: the later steps are to come again.
    expect(tl.steps.map((step) => step.done)).toEqual([true, false, false]);
    expect(tl.next).toBe(1);
    await waitUntil('the later marks pending', async () => (await markClasses()).join() === 'done,pending,pending');
    // Fired once only: the second fire is gone with the world it was made in.
    await waitUntil('the alert fired once', async () => {
      const text = (await alertCard().textContent()) ?? '';
      return text.includes('FIRING') && text.includes('Checkout is down') && !text.includes('Down again');
    });
    await waitForText(page.locator('#timeline-offset'), '+30s of +4m');
  });

  it('seeks to the point of the bar clicked, and moves the cursor as the emulated clock runs', async () => {
    const track = (await page.locator('#timeline-track').boundingBox())!;
    // Three quarters along the bar: +3m, away from the marks (a mark's own click seeks to its step).
    await page.mouse.click(track.x + track.width * 0.75, track.y + track.height / 2);
    await waitUntil('the timeline at +3m', async () => (await timeline()).offsetMs === 180_000);
    await waitForText(page.locator('#timeline-offset'), '+3m of +4m');
    // The emulated clock runs on: so does the cursor, without a read of the timeline.
    await served.app.inject({ method: 'POST', url: '/_emulator/clock/advance', payload: { ms: 20_000 } });
    await waitForText(page.locator('#timeline-offset'), '+3m20s of +4m');
    await waitForText(alertCard(), 'CLEARED');
    // From the keyboard: the left arrow goes to the step before the cursor (+2m), End to the last one.
    await page.locator('#timeline-track').focus();
    await page.keyboard.press('ArrowLeft');
    await waitUntil('the timeline at +2m', async () => (await timeline()).offsetMs === 120_000);
    await page.keyboard.press('End');
    await waitUntil('the timeline at +4m', async () => (await timeline()).offsetMs === 240_000);
  });

  it("records the page's own actions, with the seed's token a seek keeps; the toggle says whether it records", async () => {
    const toggle = page.locator('#timeline-record');
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    await waitUntil('recording', async () => (await timeline()).recording);
    await waitUntil('the toggle pressed', async () => (await toggle.getAttribute('aria-pressed')) === 'true');
    expect(await toggle.textContent()).toBe('stop recording');
    // A grid started from its card while recording: a step, made with the seed's token of the demo user.
    const grid = page.locator('article[data-kind="grid"][data-id="101"]');
    await grid.locator('button[name=start]').click();
    await waitForText(grid.locator('header .badge'), 'ALLOCATING');
    const recorded = (await timeline()).steps.find((step) => step.request.path === `${CLOUD}/grid/101/action`);
    expect(recorded?.request.headers?.['x-auth-token']).toBe('demo-token');
    expect(recorded?.done).toBe(true);
    await toggle.click();
    await waitUntil('not recording', async () => !(await timeline()).recording);
    await waitUntil('the toggle released', async () => (await toggle.getAttribute('aria-pressed')) === 'false');
    expect(await toggle.textContent()).toBe('record');
    // Played again by a seek from the start: the seed's token is there again, and the step succeeds.
    await marks().nth(0).click();
    await waitUntil('the timeline at +30s', async () => (await timeline()).offsetMs === 30_000);
    await page.locator('#timeline-track').focus();
    await page.keyboard.press('End');
    const last = recorded!.atMs;
    await waitUntil('the timeline at the recorded step', async () => (await timeline()).offsetMs === last);
    const replayed = (await timeline()).steps.find((step) => step.request.path === `${CLOUD}/grid/101/action`);
    expect(replayed?.done).toBe(true);
    // Accepted (202) as when it was made, not refused for a token the seek dropped (401).
    expect(replayed?.status).toBe(202);
  });

  it('saves the steps as a fixture file', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#timeline-save').click()]);
    expect(download.suggestedFilename()).toBe('timeline.json');
    const saved = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    const held = await timeline();
    expect(held.steps.length).toBe(STEPS.length + 1);
    expect(saved.timeline.steps.map((step: Timeline['steps'][number]) => [step.at, step.request.path])).toEqual(
      held.steps.map((step) => [step.at, step.request.path]),
    );
  });

  it('in the presenter view: the same bar and marks, without the record toggle', { timeout: 40_000 }, async () => {
    await page.goto(`${served.url}?presenter`);
    await waitUntil('four marks', async () => (await marks().count()) === 4);
    expect(await page.locator('#timeline-track').isVisible()).toBe(true);
    expect(await page.locator('#timeline-record').isHidden()).toBe(true);
    await marks().nth(1).click();
    await waitUntil('the timeline at +2m', async () => (await timeline()).offsetMs === 120_000);
    expect((await timeline()).steps[0].done).toBe(true);
  });

  it('says "no timeline" quietly when there are no steps, and nothing in the presenter view', { timeout: 40_000 }, async () => {
    await setTimeline([]);
    await page.goto(served.url);
    await waitUntil('"no timeline"', () => page.locator('#timeline-empty').isVisible());
    expect(await page.locator('#timeline-empty').textContent()).toBe('no timeline');
    expect(await page.locator('#timeline-scrubber').isHidden()).toBe(true);
    expect(await page.locator('#timeline-record').isVisible()).toBe(true);
    await page.goto(`${served.url}?presenter`);
    await waitForText(page.locator('#brand-title'), 'Load testing');
    await waitUntil('the empty timeline hidden', async () => (await page.locator('#timeline-panel').getAttribute('class'))?.includes('no-steps') === true);
    expect(await page.locator('#timeline-panel').isHidden()).toBe(true);
  });
});
