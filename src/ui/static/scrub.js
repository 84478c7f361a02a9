// The timeline scrubber's arithmetic: offsets (emulated ms since the timeline's start) to
// places on the bar and back, how offsets are written, and which step a key moves to. Pure,
// kept apart from the page so that it can be tested.

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/**
 * An offset written the way timelines write them: "+0s", "+30s", "+5m", "+1m30s", "+2h5m",
 * "+1s500ms"; a negative one (the clock set back before the timeline's start) with "-".
 */
export function formatOffset(ms) {
  const value = Number.isFinite(ms) ? Math.round(ms) : 0;
  let rest = Math.abs(value);
  let text = '';
  for (const [unit, size] of UNITS) {
    if (rest >= size) {
      text += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return `${value < 0 ? '-' : '+'}${text || '0s'}`;
}

/** What a step is called on the bar: its name, else its request's method and path. */
export function stepLabel(step) {
  const name = typeof step?.name === 'string' ? step.name.trim() : '';
  if (name) return name;
  const method = String(step?.request?.method ?? '').toUpperCase();
  const path = String(step?.request?.path ?? '');
  return `${method} ${path}`.trim() || 'step';
}

/**
 * The length of time the bar spans: the timeline's length (the offset of its last step), and
 * at least 1 s, so that a timeline whose steps are all at +0s still has a bar.
 */
export const spanOf = (lengthMs) => (Number.isFinite(lengthMs) && lengthMs > 1000 ? lengthMs : 1000);

/** Where `offsetMs` lies on a bar spanning `spanMs`: 0 (start) to 1 (end), an offset beyond it at its end. */
export function fractionOf(offsetMs, spanMs) {
  if (!Number.isFinite(offsetMs) || !(spanMs > 0)) return 0;
  return Math.min(1, Math.max(0, offsetMs / spanMs));
}

/**
 * The offset of a point of the bar (`fraction` of its width, from its left edge), rounded to
 * `step` ms (whole seconds unless told), within 0 and the span.
 */
export function offsetAt(fraction, spanMs, step = 1000) {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  const ms = Math.round((f * spanMs) / step) * step;
  return Math.min(spanMs, Math.max(0, ms));
}

/**
 * Where the timeline is at emulated time `now` (it plays on the emulated clock): the time since
 * its start (`startedAt`); without one, the offset it had when read (at `readAt`) moved on by
 * the time passed since.
 */
export function offsetNow(timeline, readAt, now) {
  if (Number.isFinite(timeline?.startedAt)) return now - timeline.startedAt;
  const read = Number.isFinite(timeline?.offsetMs) ? timeline.offsetMs : 0;
  return read + Math.max(0, now - readAt);
}

/**
 * The step a key moves to from `offsetMs`: with `direction` 1 the first step after it, with -1
 * the last step before it (steps at the offset itself are neither). -1 when there is none.
 * `steps` are in the timeline's order, by offset.
 */
export function neighbourStep(steps, offsetMs, direction) {
  if (direction > 0) return steps.findIndex((s) => s.atMs > offsetMs);
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i].atMs < offsetMs) return i;
  return -1;
}

const TICK_STEPS = [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400].map((s) => s * 1000);

/**
 * The ticks of a bar spanning `spanMs`: offsets at a round interval (1 s, 5 s, 10 s, ... 1 d),
 * the smallest that gives at most `most` ticks after the start; the start is always one.
 */
export function ticksOf(spanMs, most = 6) {
  const every = TICK_STEPS.find((t) => spanMs / t <= most) ?? Math.ceil(spanMs / most / 86_400_000) * 86_400_000;
  const ticks = [];
  for (let at = 0; at <= spanMs; at += every) ticks.push(at);
  return ticks;
}
