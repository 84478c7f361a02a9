import { describe, expect, it } from 'vitest';
import { formatOffset, fractionOf, neighbourStep, offsetAt, offsetNow, spanOf, stepLabel, ticksOf } from '../../src/ui/static/scrub.js';

// The timeline scrubber's arithmetic: where an offset lies on the bar, which offset a click
// on the bar means, and how offsets and steps are written.

describe('offsets on the scrubber', () => {
  it('writes offsets as timelines do', () => {
    expect(formatOffset(0)).toBe('+0s');
    expect(formatOffset(30_000)).toBe('+30s');
    expect(formatOffset(300_000)).toBe('+5m');
    expect(formatOffset(90_000)).toBe('+1m30s');
    expect(formatOffset(7_500_000)).toBe('+2h5m');
    expect(formatOffset(1500)).toBe('+1s500ms');
    expect(formatOffset(250)).toBe('+250ms');
    expect(formatOffset(86_400_000 + 1000)).toBe('+1d1s');
    expect(formatOffset(-60_000)).toBe('-1m');
  });

  it('places an offset on the bar, an offset past the end at the end', () => {
    const span = 300_000;
    expect(fractionOf(0, span)).toBe(0);
    expect(fractionOf(30_000, span)).toBeCloseTo(0.1);
    expect(fractionOf(240_000, span)).toBeCloseTo(0.8);
    expect(fractionOf(300_000, span)).toBe(1);
    expect(fractionOf(900_000, span)).toBe(1);
    expect(fractionOf(-5, span)).toBe(0);
  });

  it('reads a click on the bar back as the offset there, in whole seconds within the timeline', () => {
    const span = 300_000;
    expect(offsetAt(0.5, span)).toBe(150_000);
    expect(offsetAt(0.1234, span)).toBe(37_000);
    expect(offsetAt(-0.2, span)).toBe(0);
    expect(offsetAt(1.3, span)).toBe(span);
    // Round trip: an offset placed and clicked again comes back (to the second).
    for (const at of [0, 1000, 30_000, 61_000, 240_000, 300_000]) expect(offsetAt(fractionOf(at, span), span)).toBe(at);
  });

  it('gives a timeline whose steps are all at +0s a bar of 1 s', () => {
    expect(spanOf(0)).toBe(1000);
    expect(spanOf(Number.NaN)).toBe(1000);
    expect(spanOf(240_000)).toBe(240_000);
    expect(fractionOf(0, spanOf(0))).toBe(0);
  });

  it("moves the offset with the emulated clock, from the timeline's start", () => {
    const start = 1_795_338_000_000;
    const timeline = { startedAt: start, offsetMs: 30_000 };
    const readAt = start + 30_000;
    expect(offsetNow(timeline, readAt, readAt)).toBe(30_000);
    expect(offsetNow(timeline, readAt, readAt + 15_000)).toBe(45_000);
    // The clock set back before the start: a negative offset, the cursor at the start of the bar.
    expect(offsetNow(timeline, readAt, start - 10_000)).toBe(-10_000);
    expect(fractionOf(offsetNow(timeline, readAt, start - 10_000), 240_000)).toBe(0);
  });

  it('without a start, moves the offset read on by the time passed since, never back', () => {
    const readAt = 1_795_338_000_000;
    expect(offsetNow({ offsetMs: 30_000 }, readAt, readAt + 15_000)).toBe(45_000);
    expect(offsetNow({ offsetMs: 30_000 }, readAt, readAt - 10_000)).toBe(30_000);
  });

  it('puts ticks at round intervals, at most six after the start', () => {
    expect(ticksOf(300_000)).toEqual([0, 60_000, 120_000, 180_000, 240_000, 300_000]);
    expect(ticksOf(30_000)).toEqual([0, 5000, 10_000, 15_000, 20_000, 25_000, 30_000]);
    expect(ticksOf(1000)).toEqual([0, 1000]);
    for (const span of [1000, 7000, 45_000, 299_000, 3_600_000, 5 * 86_400_000, 40 * 86_400_000]) {
      const ticks = ticksOf(span);
      expect(ticks[0]).toBe(0);
      expect(ticks.length - 1, `span ${span}`).toBeLessThanOrEqual(6);
      expect(ticks.length, `span ${span}`).toBeGreaterThanOrEqual(2);
      expect(ticks[ticks.length - 1]).toBeLessThanOrEqual(span);
    }
  });
});

describe('the steps on the scrubber', () => {
  const steps = [{ atMs: 0 }, { atMs: 30_000 }, { atMs: 30_000 }, { atMs: 120_000 }, { atMs: 300_000 }];

  it('names a step by its name, else by its request', () => {
    expect(stepLabel({ atMs: 0, name: 'Checkout spike', request: { method: 'POST', path: '/x' } })).toBe('Checkout spike');
    expect(stepLabel({ atMs: 0, name: '  ', request: { method: 'post', path: '/concerto/mpulse/api/alerts/a/fire' } })).toBe(
      'POST /concerto/mpulse/api/alerts/a/fire',
    );
    expect(stepLabel({ atMs: 0 })).toBe('step');
  });

  it('finds the step after and before an offset for the arrow keys', () => {
    expect(neighbourStep(steps, 0, 1)).toBe(1);
    expect(neighbourStep(steps, 30_000, 1)).toBe(3);
    expect(neighbourStep(steps, 45_000, -1)).toBe(2);
    expect(neighbourStep(steps, 30_000, -1)).toBe(0);
    expect(neighbourStep(steps, 0, -1)).toBe(-1);
    expect(neighbourStep(steps, 300_000, 1)).toBe(-1);
    expect(neighbourStep(steps, 500_000, -1)).toBe(4);
  });
});
