// The clock in the top bar: emulated time, its speed, the next transition, and every
// "next … in …" countdown on the page.
import { api } from './api.js';
import { $, h } from './dom.js';
import { duration, hms, ymd } from './format.js';
import { emulatedNow, model } from './model.js';
import { PATHS } from './paths.js';
import { act } from './refresh.js';

/** Reads the clock (each poll). */
export async function readClock() {
  model.clock = await api('GET', `${PATHS.control}/clock`);
  model.clockReadAt = performance.now();
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

/** Runs between polls: the clock face and every "next in …" countdown. */
function drawClock() {
  if (!model.clock) return;
  const now = emulatedNow();
  $('#clock-time').textContent = hms(now);
  $('#clock-time').dateTime = new Date(Math.floor(now)).toISOString();
  $('#clock-date').textContent = `${ymd(now)} UTC`;
  const next = model.clock.nextTransitionAt;
  $('#clock-next').textContent = next === undefined ? 'no transition scheduled' : `next transition in ${duration(next - now)} (${hms(next)})`;
  for (const el of document.querySelectorAll('[data-countdown]')) {
    el.textContent = `next: ${el.dataset.label} in ${duration(Number(el.dataset.countdown) - now)}`;
  }
}

export function wireClock() {
  const advance = `${PATHS.control}/clock/advance`;
  for (const el of document.querySelectorAll('[data-advance]')) {
    el.addEventListener('click', () => act(() => api('POST', advance, { body: { ms: Number(el.dataset.advance) } })));
  }
  $('#advance-next').addEventListener('click', () =>
    act(() => api('POST', advance, { body: { to: 'next' } }), (r) => `advanced ${duration(r.advancedMs)} to ${hms(r.now)}`),
  );
  $('#clock-scale').addEventListener('change', (event) =>
    act(() => api('PUT', `${PATHS.control}/clock`, { body: { scale: Number(event.target.value) } })),
  );
  $('#clock-freeze').addEventListener('click', () =>
    act(() => api('PUT', `${PATHS.control}/clock`, { body: { frozen: !model.clock?.frozen } })),
  );
  setInterval(drawClock, 250);
}
