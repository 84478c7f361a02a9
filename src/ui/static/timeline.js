// The timeline scrubber: the world's timeline (GET /_emulator/timeline) as a bar as long as
// the timeline, its steps as marks (done or still to come), a cursor at the timeline's offset
// that moves with the emulated clock, seeking by a click on a mark or on the bar (POST
// /_emulator/timeline/seek), and the record toggle (POST /_emulator/timeline/record {"on":...}).
// scrub.js does the arithmetic.
import { ApiFailure, api, auth, forgetSession, seedTokenOfUser, useSeedToken } from './api.js';
import { $, h } from './dom.js';
import { act } from './live.js';
import { emulatedNow, forgetEverything } from './model.js';
import { PATHS } from './paths.js';
import { formatOffset, fractionOf, neighbourStep, offsetAt, offsetNow, spanOf, stepLabel, ticksOf } from './scrub.js';

const path = (rest = '') => `${PATHS.control}/timeline${rest}`;

/**
 * The timeline as last read (null: none read yet, or the emulator has no timelines), and the
 * emulated time it was read at, from which its offset moves on.
 */
let timeline = null;
let readAt = 0;
/** Set when the emulator answers 404: it has no timelines, and the bar stays hidden. */
let unsupported = false;

function take(answer) {
  if (!answer || !Array.isArray(answer.steps)) return;
  timeline = answer;
  readAt = emulatedNow();
}

/** Reads the timeline; an emulator without timelines (404) hides the bar and is no error. */
export async function readTimeline() {
  try {
    take(await api('GET', path()));
    unsupported = false;
  } catch (err) {
    if (!(err instanceof ApiFailure) || err.status !== 404) throw err;
    unsupported = true;
    timeline = null;
  }
}

const currentOffset = () => (timeline ? offsetNow(timeline, readAt, emulatedNow()) : 0);

/** Set while a seek is under way; `queued`: where to go once it is over (the last asked wins). */
let seeking = false;
let queued;
/** The offset last asked for, from which the arrow keys go on while a seek is under way. */
let asked = 0;

/**
 * A seek rebuilds the world from the seed at the timeline's start and replays the steps up to
 * the offset: like a reset, it drops what the page read and a session it logged in to (signed
 * in again at the next read). Its answer is the timeline after it, drawn at once.
 */
async function seek(to) {
  const answer = await api('POST', path('/seek'), { body: { to } });
  forgetEverything();
  // A token of the seed is there again; a session logged in to is gone.
  if (auth.token !== (await seedTokenOfUser())) forgetSession();
  take(answer);
  renderTimeline();
  return answer;
}

/** Seeks to `ms`; asked while a seek is under way, once it is over (only the last such ask). */
async function seekTo(ms) {
  asked = ms;
  if (seeking) {
    queued = ms;
    return;
  }
  seeking = true;
  $('#timeline-panel').setAttribute('aria-busy', 'true');
  try {
    for (let to = ms; to !== undefined; to = queued) {
      queued = undefined;
      await act(() => seek(to), () => `timeline at ${formatOffset(to)}`);
    }
  } finally {
    seeking = false;
    $('#timeline-panel').removeAttribute('aria-busy');
  }
}

const setText = (el, text) => {
  if (el.textContent !== text) el.textContent = text;
};

/** Draws the bar, its marks and the record toggle from the timeline last read. */
export function renderTimeline() {
  const panel = $('#timeline-panel');
  if (unsupported || !timeline) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const steps = timeline.steps;
  const empty = steps.length === 0;
  panel.classList.toggle('no-steps', empty);
  const record = $('#timeline-record');
  const recording = timeline.recording === true;
  record.setAttribute('aria-pressed', String(recording));
  setText(record, recording ? 'stop recording' : 'record');
  record.classList.toggle('recording', recording);
  record.title = recording
    ? 'stop recording (POST /_emulator/timeline/record {"on":false})'
    : 'add each request that changes the world from now on as a step (POST /_emulator/timeline/record {"on":true})';
  $('#timeline-empty').hidden = !empty;
  $('#timeline-save').hidden = empty;
  $('#timeline-scrubber').hidden = empty;
  if (empty) {
    setText($('#timeline-empty'), recording ? 'no timeline yet: recording' : 'no timeline');
    setText($('#timeline-next'), '');
    setText($('#timeline-offset'), '');
    return;
  }
  const span = spanOf(timeline.lengthMs);
  const place = (el, ms) => {
    el.style.left = `${(fractionOf(ms, span) * 100).toFixed(3)}%`;
  };
  const ticks = $('#timeline-ticks');
  ticks.replaceChildren(
    ...ticksOf(span).map((at) => {
      const tick = h('span', { class: 'tick' }, formatOffset(at));
      place(tick, at);
      return tick;
    }),
  );
  const marks = $('#timeline-marks');
  const focused = document.activeElement?.closest?.('#timeline-marks') ? document.activeElement.dataset.index : undefined;
  marks.replaceChildren(
    ...steps.map((step, index) => {
      const label = stepLabel(step);
      const request = step.request ? `${String(step.request.method ?? '').toUpperCase()} ${step.request.path ?? ''}` : '';
      const state = step.done ? 'done' : 'pending';
      const answered = step.done && Number.isInteger(step.status) ? ` (answered ${step.status})` : '';
      const mark = h(
        'button',
        {
          type: 'button',
          class: `mark ${state}${index === timeline.next ? ' next' : ''}`,
          dataset: { index: String(index), at: String(step.atMs) },
          title: `${formatOffset(step.atMs)} ${label}${step.name && request ? ` (${request})` : ''}: ${state}${answered}`,
          'aria-label': `seek to ${formatOffset(step.atMs)}: ${label}, ${state}`,
          onclick: (event) => {
            event.stopPropagation();
            seekTo(step.atMs);
          },
        },
        h('span', { class: 'mark-label' }, label),
      );
      place(mark, step.atMs);
      return mark;
    }),
  );
  if (focused !== undefined) marks.querySelector(`[data-index="${focused}"]`)?.focus();
  const track = $('#timeline-track');
  track.setAttribute('aria-valuemin', '0');
  track.setAttribute('aria-valuemax', String(span));
  const done = steps.filter((s) => s.done).length;
  const next = Number.isInteger(timeline.next) ? steps[timeline.next] : undefined;
  setText(
    $('#timeline-next'),
    next ? `${done} of ${steps.length} steps done; next: ${formatOffset(next.atMs)} ${stepLabel(next)}` : `all ${steps.length} steps done`,
  );
  drawCursor();
}

/** Runs between reads: the cursor and the offset, moving with the emulated clock. */
function drawCursor() {
  if (!timeline || timeline.steps.length === 0 || $('#timeline-panel').hidden) return;
  const span = spanOf(timeline.lengthMs);
  const offset = currentOffset();
  const left = `${(fractionOf(offset, span) * 100).toFixed(3)}%`;
  const cursor = $('#timeline-cursor');
  if (cursor.style.left !== left) cursor.style.left = left;
  const played = $('#timeline-played');
  if (played.style.width !== left) played.style.width = left;
  const text = `${formatOffset(Math.floor(offset / 1000) * 1000)} of ${formatOffset(timeline.lengthMs ?? 0)}`;
  setText($('#timeline-offset'), text);
  const track = $('#timeline-track');
  const now = String(Math.min(span, Math.max(0, Math.round(offset))));
  if (track.getAttribute('aria-valuenow') !== now) track.setAttribute('aria-valuenow', now);
  if (track.getAttribute('aria-valuetext') !== text) track.setAttribute('aria-valuetext', text);
}

export function wireTimeline() {
  const track = $('#timeline-track');
  // A click on the bar seeks to that point, in whole seconds.
  track.addEventListener('click', (event) => {
    if (!timeline) return;
    const box = track.getBoundingClientRect();
    if (box.width <= 0) return;
    seekTo(offsetAt((event.clientX - box.left) / box.width, spanOf(timeline.lengthMs)));
  });
  // From the keyboard: the arrows go to the step before or after the cursor, Home to the start, End to the last step.
  track.addEventListener('keydown', (event) => {
    if (!timeline || timeline.steps.length === 0) return;
    const steps = timeline.steps;
    let to;
    if (event.key === 'Home') to = 0;
    else if (event.key === 'End') to = steps[steps.length - 1].atMs;
    else if (event.key === 'ArrowRight' || event.key === 'ArrowUp' || event.key === 'ArrowLeft' || event.key === 'ArrowDown') {
      const index = neighbourStep(steps, seeking ? asked : currentOffset(), event.key === 'ArrowRight' || event.key === 'ArrowUp' ? 1 : -1);
      to = index < 0 ? (event.key === 'ArrowLeft' || event.key === 'ArrowDown' ? 0 : undefined) : steps[index].atMs;
    } else return;
    event.preventDefault();
    if (to !== undefined) seekTo(to);
  });
  // The steps as a fixture file, to save into a fixture folder (a recorded rehearsal, say).
  $('#timeline-save').addEventListener('click', () =>
    act(async () => {
      const fixture = await api('GET', path('/fixture'));
      const blob = new Blob([`${JSON.stringify(fixture, null, 2)}\n`], { type: 'application/json' });
      const link = h('a', { href: URL.createObjectURL(blob), download: 'timeline.json' });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    }, 'timeline saved as timeline.json'),
  );
  $('#timeline-record').addEventListener('click', () =>
    act(
      async () => {
        const on = timeline?.recording !== true;
        // What the page does while recording is played again after a seek: with the seed's token,
        // which the seek keeps, not with a session of the rehearsal, which it drops.
        if (on) await useSeedToken();
        const answer = await api('POST', path('/record'), { body: { on } });
        if (Array.isArray(answer?.steps)) take(answer);
        else if (typeof answer?.recording === 'boolean' && timeline) timeline = { ...timeline, recording: answer.recording };
        renderTimeline();
        return answer;
      },
      () => (timeline?.recording ? 'recording the requests made from now on' : 'recording stopped'),
    ),
  );
  setInterval(drawCursor, 250);
}
