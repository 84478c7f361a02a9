// Where the labels of a time axis go (the annotations' axis): pure arithmetic on pixels, kept
// apart from the page so that it can be tested.

/** The width a label of `text` takes, in px, at the axis's 10 px type (a generous average). */
export const labelWidth = (text, charWidth = 6.2) => text.length * charWidth;

/**
 * The labels of an axis `width` px wide: each tick's label 3 px right of its line, and "now"
 * right of the now line, or left of it where it would run past the right edge. A tick label
 * that would touch the "now" label (within `gap` px) or run past the edge is left out; its
 * line stays. `ticks` are `{ x, label }`; `nowX` is undefined when now is off the axis.
 */
export function axisLabels(ticks, nowX, width, { gap = 4, charWidth = 6.2 } = {}) {
  let now;
  if (nowX !== undefined) {
    const w = labelWidth('now', charWidth);
    now = nowX + 3 + w <= width - 2 ? { x: nowX + 3, anchor: 'start', from: nowX + 3, to: nowX + 3 + w } : { x: nowX - 3, anchor: 'end', from: nowX - 3 - w, to: nowX - 3 };
  }
  const labels = ticks.map(({ x, label }) => {
    const from = x + 3;
    const to = from + labelWidth(label, charWidth);
    const touchesNow = now !== undefined && from < now.to + gap && to + gap > now.from;
    return { x: from, label, shown: !touchesNow && to <= width };
  });
  return { now, ticks: labels };
}
