// Fault rules: what each does, how often it matched and fired; a form to add one.
import { api } from './api.js';
import { $, button, h } from './dom.js';
import { hms } from './format.js';
import { model } from './model.js';
import { PATHS } from './paths.js';
import { act } from './live.js';

let faultsShown = '';
/** A fixed delay, or a range each fire draws from ({min, max}). */
const latency = (ms) => (typeof ms === 'number' ? ms : `${ms.min}–${ms.max}`);
export function renderFaults() {
  const key = JSON.stringify(model.faults);
  if (key === faultsShown) return;
  faultsShown = key;
  const body = $('#faults tbody');
  const does = (action) =>
    'status' in action ? `answer ${action.status}` : 'latencyMs' in action ? `+${latency(action.latencyMs)} ms` : 'drop the connection';
  body.replaceChildren(
    ...(model.faults.length
      ? model.faults.map((rule) =>
          h(
            'tr',
            { dataset: { rule: rule.id }, class: rule.active ? undefined : 'muted', title: rule.active ? undefined : 'used up or expired' },
            h('td', { class: 'mono' }, rule.id),
            h('td', {}, rule.method),
            h('td', { class: 'mono' }, rule.path),
            h('td', {}, does(rule.action), rule.probability < 1 ? ` (p=${rule.probability})` : ''),
            h('td', {}, rule.remaining ?? '∞', rule.expiresAt ? ` until ${hms(rule.expiresAt)}` : ''),
            h('td', {}, `${rule.matched} / ${rule.fired}`),
            h('td', {}, button('remove', () => act(() => api('DELETE', `${PATHS.control}/faults/${encodeURIComponent(rule.id)}`), `rule ${rule.id} removed`), { class: 'small danger' })),
          ),
        )
      : [h('tr', {}, h('td', { colSpan: 7, class: 'empty' }, 'no fault rule: every request is served normally'))]),
  );
}

export function wireFaults() {
  const form = $('#fault-form');
  // The form starts with a rule for the annotation calls, the example the docs use.
  form.elements.path.defaultValue = `${PATHS.annotations}*`;
  const kind = form.elements.kind;
  const value = form.elements.value;
  kind.addEventListener('change', () => {
    value.disabled = kind.value === 'drop';
    value.value = kind.value === 'status' ? '503' : kind.value === 'latency' ? '2000' : '';
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const f = form.elements;
    const action = f.kind.value === 'status' ? { status: Number(f.value.value) } : f.kind.value === 'latency' ? { latencyMs: Number(f.value.value) } : { drop: true };
    const body = { method: f.method.value, path: f.path.value, action, ...(f.times.value ? { times: Number(f.times.value) } : {}) };
    act(() => api('POST', `${PATHS.control}/faults`, { body }), (rule) => `fault rule ${rule.id} added`);
  });
  $('#faults-clear').addEventListener('click', () => act(() => api('DELETE', `${PATHS.control}/faults`), 'every fault rule removed'));
}
