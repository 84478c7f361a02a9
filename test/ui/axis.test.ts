import { describe, expect, it } from 'vitest';
import { axisLabels, labelWidth } from '../../src/ui/static/axis.js';

// The annotations' time axis: the "now" label must not lie over a tick's label.

const overlap = (a: { from: number; to: number }, b: { from: number; to: number }) => a.from < b.to && b.from < a.to;

describe('the labels of the time axis', () => {
  it('leaves out the label of a tick at now (the last hour ending at 09:00, a tick at 09:00)', () => {
    const width = 600;
    const ticks = [{ x: 100, label: '08:15' }, { x: 250, label: '08:30' }, { x: 400, label: '08:45' }, { x: 560, label: '09:00' }];
    const { now, ticks: labels } = axisLabels(ticks, 560, width);
    expect(now).toMatchObject({ anchor: 'start', x: 563 });
    expect(labels.map((l) => l.shown)).toEqual([true, true, true, false]);
  });

  it('puts "now" left of its line at the right edge, and leaves out a tick label it would touch there', () => {
    const width = 600;
    const ticks = [{ x: 300, label: 'Nov 12' }, { x: 560, label: 'Nov 19' }];
    const { now, ticks: labels } = axisLabels(ticks, 595, width);
    expect(now?.anchor).toBe('end');
    expect(now!.to).toBeLessThanOrEqual(width);
    expect(labels[0].shown).toBe(true);
    // "Nov 19" at 563..600 lies under "now" at 573..592.
    expect(labels[1].shown).toBe(false);
  });

  it('never shows a tick label over the now label, nor past the right edge, wherever now is', () => {
    const width = 480;
    const ticks = Array.from({ length: 6 }, (_, i) => ({ x: 8 + i * 90, label: `0${i}:00` }));
    for (let nowX = 8; nowX <= width - 8; nowX += 1) {
      const { now, ticks: labels } = axisLabels(ticks, nowX, width);
      expect(now!.from).toBeGreaterThanOrEqual(0);
      expect(now!.to).toBeLessThanOrEqual(width);
      for (const l of labels.filter((t) => t.shown)) {
        expect(overlap(now!, { from: l.x, to: l.x + labelWidth(l.label) }), `now at ${nowX}, ${l.label}`).toBe(false);
        expect(l.x + labelWidth(l.label)).toBeLessThanOrEqual(width);
      }
      // Only the labels near now are left out.
      expect(labels.filter((t) => !t.shown).length).toBeLessThanOrEqual(2);
    }
  });

  it('shows every tick label when now is off the axis', () => {
    const { now, ticks } = axisLabels([{ x: 10, label: 'Nov 5' }, { x: 200, label: 'Nov 12' }], undefined, 400);
    expect(now).toBeUndefined();
    expect(ticks.every((t) => t.shown)).toBe(true);
  });
});
