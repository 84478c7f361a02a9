// The clock in the top bar: emulated time, its speed, the next transition, and every
// "next … in …" countdown on the page.
import { api } from './api.js';
import { $, h } from './dom.js';
import { countdown, duration, hms, ymd } from './format.js';
import { applyClock, clockRequest, emulatedNow, model } from './model.js';
import { PATHS } from './paths.js';
import { act } from './live.js';

/** Reads the clock (with everything else); the answer is dropped when a newer one is already shown. */
export async function readClock() {
  const request = clockRequest();
  const status = await api('GET', `${PATHS.control}/clock`);
  applyClock(status, request);
}

/**
 * Changes the clock. Its answer is the clock as it now stands, shown at once: a freeze stops
 * every countdown the moment it is pressed, not a read later.
 */
async function changeClock(method, path, body) {
  const request = clockRequest();
  const status = await api(method, path, { body });
  if (applyClock(status, request)) renderClock();
  return status;
}

export function renderClock() {
  const c = model.clock;
  if (!c) return;
  const scale = $('#clock-scale');
  if (document.activeElement !== scale) {
    if (![...scale.options].some((o) => Number(o.value) === c.scale)) scale.append(h('option', { value: String(c.scale) }, `×${c.scale}`));
    scale.value = [...scale.options].find((o) => Number(o.value) === c.scale).value;
  }
  $('#clock-freeze').textContent = c.frozen ? 'resume' : 'freeze';
  const mode = $('#clock-mode');
  mode.textContent = c.frozen ? 'frozen' : c.scale === 1 ? 'real time' : `×${c.scale}`;
  mode.className = `chip${c.frozen ? ' frozen' : ''}`;
  $('#advance-next').disabled = c.nextTransitionAt === undefined;
  drawClock();
}

// Writes only what changed: while the clock is frozen, redrawing leaves the page untouched.
const setText = (el, text) => {
  if (el.textContent !== text) el.textContent = text;
};

/** Runs between reads: the clock face and every "next in …" countdown. */
function drawClock() {
  if (!model.clock) return;
  for (const el of document.querySelectorAll('.clock .pending')) el.classList.remove('pending');
  const now = emulatedNow();
  setText($('#clock-time'), hms(now));
  $('#clock-time').dateTime = new Date(Math.floor(now)).toISOString();
  setText($('#clock-date'), `${ymd(now)} UTC`);
  const next = model.clock.nextTransitionAt;
  setText($('#clock-next'), next === undefined ? 'no transition scheduled' : `next transition in ${countdown(next, now)} (${hms(next)})`);
  for (const el of document.querySelectorAll('[data-countdown]')) {
    setText(el, `next: ${el.dataset.label} in ${countdown(Number(el.dataset.countdown), now)}`);
  }
}

export function wireClock() {
  const advance = `${PATHS.control}/clock/advance`;
  for (const el of document.querySelectorAll('[data-advance]')) {
    el.addEventListener('click', () => act(() => changeClock('POST', advance, { ms: Number(el.dataset.advance) })));
  }
  $('#advance-next').addEventListener('click', () =>
    act(() => changeClock('POST', advance, { to: 'next' }), (r) => `advanced ${duration(r.advancedMs)} to ${hms(r.now)}`),
  );
  $('#clock-scale').addEventListener('change', (event) =>
    act(() => changeClock('PUT', `${PATHS.control}/clock`, { scale: Number(event.target.value) })),
  );
  $('#clock-freeze').addEventListener('click', () =>
    act(() => changeClock('PUT', `${PATHS.control}/clock`, { frozen: !model.clock?.frozen })),
  );
  setInterval(drawClock, 250);
}
