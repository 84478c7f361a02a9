// Annotations: a time axis, a list, and a form to add or edit one; read again when the
// world's event stream says that someone changed them.
import { api } from './api.js';
import { $, button, h, s, toast } from './dom.js';
import { axisLabels } from './axis.js';
import { dateTime, hms, parseDateTime, shortDate } from './format.js';
import { emulatedNow, model } from './model.js';
import { PATHS } from './paths.js';
import { act } from './live.js';

let selectedAnnotation = null;

export async function reloadAnnotations() {
  const domain = $('#ann-domain').value;
  const span = Number($('#ann-window').value || 0);
  const now = emulatedNow() || model.clock?.now || 0;
  const data = await api('GET', PATHS.annotations, { query: { domain, ...(span ? { 'date-start': Math.floor(now - span) } : {}) } });
  // ANNOTATIONS_LIST_WRAPPED answers the real service's {"annotations": [...]}.
  model.annotations = Array.isArray(data) ? data : (data?.annotations ?? []);
  renderAnnotations();
}

export function renderDomainChoices() {
  const select = $('#ann-domain');
  const chosen = select.value;
  select.replaceChildren(h('option', { value: '' }, 'all domains'), ...model.domains.map((d) => h('option', { value: String(d.id) }, d.name)));
  select.value = model.domains.some((d) => String(d.id) === chosen) ? chosen : '';
  const checks = $('#ann-domains');
  const ticked = new Set([...checks.querySelectorAll('input:checked')].map((i) => i.value));
  checks.replaceChildren(
    h('legend', {}, 'domains (none: all of them)'),
    ...model.domains.map((d) =>
      h('label', {}, h('input', { type: 'checkbox', name: 'domainIds', value: String(d.id), checked: ticked.has(String(d.id)) }), d.name),
    ),
  );
}

function renderAnnotations() {
  const list = model.annotations;
  $('#ann-count').textContent = `${list.length} annotation${list.length === 1 ? '' : 's'}`;
  drawAxis();
  $('#ann-list').replaceChildren(
    ...(list.length
      ? [...list]
          .sort((a, b) => b.start - a.start || b.id - a.id)
          .map((a) =>
            h(
              'li',
              { dataset: { annotation: String(a.id) }, class: a.id === selectedAnnotation ? 'selected' : undefined },
              h('span', { class: 'mono muted' }, a.end === undefined ? dateTime(a.start) : `${dateTime(a.start)} → ${dateTime(a.end)}`),
              h(
                'span',
                { class: 'grow' },
                h('b', {}, a.title),
                a.text ? ` — ${a.text}` : '',
                h('span', { class: 'muted' }, ` · ${a.domains.length ? a.domains.map((d) => d.name).join(', ') : 'all domains'} · ${a.type}`),
              ),
              button('edit', () => editAnnotation(a), { class: 'small' }),
              button('delete', () => deleteAnnotation(a), { class: 'small danger' }),
            ),
          )
      : [h('li', { class: 'empty' }, 'no annotation matches')]),
  );
}

/** A tick step that gives a handful of labels across `span` ms. */
function tickStep(span) {
  const steps = [
    60e3, 5 * 60e3, 15 * 60e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3,
    86400e3, 2 * 86400e3, 7 * 86400e3, 14 * 86400e3, 30 * 86400e3, 365 * 86400e3,
  ];
  return steps.find((step) => span / step <= 7) ?? steps[steps.length - 1];
}

/** Emulated time of the last drawing of the axis. */
let axisDrawnAt = 0;

/** Ranges as bars, points as markers, on lanes so that nothing overlaps; the emulator's now as a line. */
function drawAxis() {
  const container = $('#ann-axis');
  const width = Math.max(320, container.clientWidth);
  const now = emulatedNow();
  axisDrawnAt = model.clock?.now ?? 0;
  const list = model.annotations;
  const windowMs = Number($('#ann-window').value || 0);
  let from;
  let to;
  if (windowMs) {
    from = now - windowMs;
    to = now + windowMs * 0.04;
  } else if (list.length) {
    from = Math.min(...list.map((a) => a.start), now);
    to = Math.max(...list.map((a) => a.end ?? a.start), now);
    const margin = Math.max((to - from) * 0.04, 60e3);
    from -= margin;
    to += margin;
  } else {
    from = now - 3600e3;
    to = now + 300e3;
  }
  const left = 8;
  const usable = width - 2 * left;
  const x = (t) => left + ((t - from) / (to - from)) * usable;
  const laneHeight = 22;
  const lanes = [];
  const placed = [...list]
    .sort((a, b) => a.start - b.start || a.id - b.id)
    .map((a) => {
      const x1 = x(a.start);
      const x2 = a.end === undefined ? x1 : Math.max(x(a.end), x1 + 4);
      const point = a.end === undefined;
      // The label goes inside a wide bar, else after the shape, or before it near the right edge.
      const labelWidth = a.title.length * 6.2 + 4;
      const inside = !point && x2 - x1 > labelWidth + 8;
      let textX = inside ? x1 + 4 : point ? x1 + 9 : x2 + 4;
      let anchor = 'start';
      if (!inside && textX + labelWidth > width - 4) {
        textX = x1 - (point ? 9 : 4);
        anchor = 'end';
      }
      const occupied = [Math.min(x1 - 6, anchor === 'end' ? textX - labelWidth : x1 - 6), Math.max(x2 + 6, anchor === 'start' ? textX + labelWidth : x2 + 6)];
      let lane = lanes.findIndex((end) => end < occupied[0]);
      if (lane < 0) lane = lanes.push(0) - 1;
      lanes[lane] = occupied[1];
      return { a, x1, x2, lane, textX, anchor };
    });
  const top = 8;
  const axisY = top + Math.max(1, lanes.length) * laneHeight + 6;
  const height = axisY + 20;
  const step = tickStep(to - from);
  const tickAt = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const label = step >= 86400e3 ? shortDate(t) : step >= 3600e3 && new Date(t).getUTCHours() === 0 ? shortDate(t) : hms(t).slice(0, 5);
    tickAt.push({ x: x(t), label });
  }
  const nowShown = now >= from && now <= to;
  // The now label takes its place first; a tick label it would touch is left out (axis.js).
  const labels = axisLabels(tickAt, nowShown ? x(now) : undefined, width);
  const ticks = tickAt.map(({ x: tx }, i) => {
    const { x: lx, label, shown } = labels.ticks[i];
    return s('g', { class: 'tick' }, s('line', { x1: tx, x2: tx, y1: 0, y2: axisY }), shown ? s('text', { x: lx, y: axisY + 14 }, label) : null);
  });
  const shapes = placed.map(({ a, x1, x2, lane, textX, anchor }) => {
    const y = top + lane * laneHeight;
    const cls = `ann ${a.end === undefined ? 'point' : 'range'}${a.type === 'USER_ENTERED' ? '' : ' other'}${a.id === selectedAnnotation ? ' selected' : ''}`;
    const tip = `${a.title}\n${a.text}\n${a.end === undefined ? dateTime(a.start) : `${dateTime(a.start)} → ${dateTime(a.end)}`} UTC\n${a.domains.map((d) => d.name).join(', ') || 'all domains'}`;
    const shape =
      a.end === undefined
        ? s('path', { d: `M${x1} ${y + 2} l6 7 l-6 7 l-6 -7 z` })
        : s('rect', { x: x1, y: y + 2, width: x2 - x1, height: 14, rx: 3 });
    return s(
      'g',
      { class: cls, dataset: { annotation: String(a.id) }, role: 'button', tabindex: '0', onclick: () => editAnnotation(a), onkeydown: (e) => e.key === 'Enter' && editAnnotation(a) },
      s('title', {}, tip),
      shape,
      s('text', { x: textX, y: y + 13, 'text-anchor': anchor }, a.title),
    );
  });
  const nowLine = labels.now
    ? s('g', { class: 'now' }, s('line', { x1: x(now), x2: x(now), y1: 0, y2: axisY }), s('text', { x: labels.now.x, y: axisY + 14, 'text-anchor': labels.now.anchor }, 'now'))
    : null;
  container.replaceChildren(
    s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${list.length} annotations between ${dateTime(from)} and ${dateTime(to)} UTC` }, ...ticks, nowLine, ...shapes),
  );
}


/** The axis's now line follows the clock (not while a keyboard user is on an annotation). */
export function followClock() {
  if (model.clock.now !== axisDrawnAt && !$('#ann-axis').contains(document.activeElement)) drawAxis();
}

const annotationForm = () => $('#ann-form');

function editAnnotation(a) {
  selectedAnnotation = a.id;
  const form = annotationForm();
  form.reset();
  form.elements.id.value = String(a.id);
  form.elements.title.value = a.title;
  form.elements.text.value = a.text;
  setTime(form.elements.start, a.start);
  setTime(form.elements.end, a.end);
  const ids = new Set(a.domains.map((d) => String(d.id)));
  for (const box of form.querySelectorAll('input[name=domainIds]')) box.checked = ids.has(box.value);
  $('#ann-form-title').textContent = `Edit annotation #${a.id}`;
  $('#ann-save').textContent = 'save';
  $('#ann-delete').hidden = false;
  $('#ann-cancel').hidden = false;
  renderAnnotations();
  form.elements.title.focus();
}

export function resetAnnotationForm() {
  selectedAnnotation = null;
  const form = annotationForm();
  form.reset();
  form.elements.id.value = '';
  // Before the first read the emulator's time is not known yet; fillStartTime() fills it in then.
  setTime(form.elements.start, model.clock ? emulatedNow() : undefined);
  setTime(form.elements.end, undefined);
  $('#ann-form-title').textContent = 'Add an annotation';
  $('#ann-save').textContent = 'add';
  $('#ann-delete').hidden = true;
  $('#ann-cancel').hidden = true;
}

/** The form's default start is the emulator's time, known only after the first read. */
export function fillStartTime() {
  const form = annotationForm();
  if (model.clock && !form.elements.id.value && !form.elements.start.value) setTime(form.elements.start, emulatedNow());
}

const annotationsChanged = () => reloadAnnotations();

function deleteAnnotation(a) {
  if (!confirm(`Delete annotation #${a.id} "${a.title}"?`)) return;
  act(async () => {
    await api('DELETE', `${PATHS.annotations}/${a.id}`);
    if (selectedAnnotation === a.id) resetAnnotationForm();
    await annotationsChanged();
  }, `annotation #${a.id} deleted`);
}

/**
 * The time fields take "2026-11-22 09:05:07", in UTC on the 24-hour clock, like every time on
 * the page (a datetime-local field would show the browser's locale, often with AM/PM).
 */
function checkTimeField(field) {
  field.setCustomValidity(Number.isNaN(parseDateTime(field.value)) ? 'write the time as YYYY-MM-DD HH:MM:SS (UTC, 24-hour)' : '');
}

function setTime(field, ms) {
  field.value = ms === undefined ? '' : dateTime(ms);
  checkTimeField(field);
}

export function wireAnnotations() {
  const form = annotationForm();
  for (const name of ['start', 'end']) {
    const field = form.elements[name];
    field.addEventListener('input', () => checkTimeField(field));
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const f = form.elements;
    const start = parseDateTime(f.start.value);
    const end = parseDateTime(f.end.value);
    const domainIds = [...form.querySelectorAll('input[name=domainIds]:checked')].map((i) => Number(i.value));
    const id = f.id.value;
    act(async () => {
      if (id) {
        await api('PUT', `${PATHS.annotations}/${id}`, { body: { title: f.title.value, text: f.text.value, start, end: end ?? null, domainIds } });
      } else {
        const created = await api('POST', PATHS.annotations, {
          body: { title: f.title.value, text: f.text.value, start, ...(end !== undefined ? { end } : {}), ...(domainIds.length ? { domainIds } : {}) },
        });
        toast(`annotation #${created.id} added`);
      }
      resetAnnotationForm();
      await annotationsChanged();
    }, id ? `annotation #${id} saved` : undefined);
  });
  $('#ann-now').addEventListener('click', () => {
    setTime(form.elements.start, emulatedNow());
  });
  $('#ann-cancel').addEventListener('click', () => {
    resetAnnotationForm();
    renderAnnotations();
  });
  $('#ann-delete').addEventListener('click', () => {
    const a = model.annotations.find((x) => x.id === selectedAnnotation);
    if (a) deleteAnnotation(a);
  });
  for (const id of ['#ann-domain', '#ann-window']) {
    $(id).addEventListener('change', () => act(reloadAnnotations));
  }
  let width = 0;
  new ResizeObserver(() => {
    const now = $('#ann-axis').clientWidth;
    if (now !== width) {
      width = now;
      drawAxis();
    }
  }).observe($('#ann-axis'));
}
