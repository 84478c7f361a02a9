// Repository objects: one type's objects as the Objects call lists them, filtered by name or
// by attributes, each with its attributes, the objects it references and its XML body. Read
// when asked (the type, the search box, the reload button), and when the event stream reports
// a change: objects change only when someone changes them.
import { api } from './api.js';
import { $, h, toast } from './dom.js';
import { dateTime, objectQuery } from './format.js';
import { OBJECT_TYPES, PATHS } from './paths.js';

export function wireObjects() {
  const select = $('#obj-type');
  select.replaceChildren(...OBJECT_TYPES.map((t) => h('option', { value: t }, t)));
  if (OBJECT_TYPES.includes('domain')) select.value = 'domain';
  const reload = () => reloadObjects().catch((err) => toast(err.describe?.() ?? String(err), 'error'));
  select.addEventListener('change', reload);
  $('#obj-form').addEventListener('submit', (event) => {
    event.preventDefault();
    reload();
  });
}

export async function reloadObjects() {
  const type = $('#obj-type').value;
  if (!type) return;
  const data = await api('GET', `${PATHS.repository}/Objects/${encodeURIComponent(type)}`, { query: objectQuery($('#obj-filter').value) });
  renderObjects(data?.objects ?? []);
}

function renderObjects(objects) {
  $('#obj-count').textContent = `${objects.length} object${objects.length === 1 ? '' : 's'}`;
  $('#obj-list').replaceChildren(
    ...(objects.length
      ? objects.map((o) =>
          h(
            'li',
            { dataset: { object: String(o.id) } },
            h('span', { class: 'mono muted' }, `#${o.id}`),
            h(
              'span',
              { class: 'grow' },
              h('b', {}, o.name),
              o.description ? h('span', { class: 'muted' }, ` — ${o.description}`) : null,
              h('br'),
              h('span', { class: 'small mono' }, o.attributes.map((a) => `${a.name}=${a.value ?? 'null'}`).join('  ')),
              referenceLines(o.references),
              h('br'),
              h('span', { class: 'small muted' }, `modified ${dateTime(Date.parse(o.lastModified))}`),
              o.body ? h('details', {}, h('summary', { class: 'small' }, 'body'), h('pre', { class: 'small mono' }, o.body)) : null,
            ),
          ),
        )
      : [h('li', { class: 'empty' }, 'no objects match')]),
  );
}

/** The objects one references (its `references`), a line each: type, name, id and internalID. */
function referenceLines(references = []) {
  return references.flatMap((r) => [
    h('br'),
    h(
      'span',
      { class: 'small', dataset: { reference: `${r.type}:${r.id}` } },
      'uses ',
      h('span', { class: 'mono' }, r.type),
      ' ',
      h('b', {}, r.name),
      h('span', { class: 'mono muted' }, ` #${r.id}`),
      r.internalID ? h('span', { class: 'mono muted' }, ` internalID=${r.internalID}`) : null,
    ),
  ]);
}
