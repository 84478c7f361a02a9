// The request journal: the last requests the emulator served, filtered as the user asks.
// The emulator sends no event per request: the panel is read when asked (refresh, a filter),
// after the user's own actions, and after any event of the world's stream while it is on
// screen. The page's own requests are marked and left out (the journal hides them).
import { api } from './api.js';
import { $, h } from './dom.js';
import { hms } from './format.js';
import { model } from './model.js';
import { INTERFACES, PATHS } from './paths.js';
import { act, refreshSoon } from './live.js';


/** The folders every path shares ("/concerto/"), as an example of a prefix to filter by. */
function commonPrefix(paths) {
  const parts = paths.map((p) => p.split('/'));
  const shared = [];
  for (let i = 0; parts.every((p) => i < p.length - 1 && p[i] === parts[0][i]); i++) shared.push(parts[0][i]);
  return `${shared.join('/')}/`;
}

/** The journal query the filter asks for (a status that is not yet a valid one is left out). */
export function journalQuery() {
  const filter = Object.fromEntries(new FormData($('#journal-filter')));
  const statusOk = /^([0-9]{1,3}|[1-5]xx)?$/.test(filter.status ?? '');
  return { ...filter, status: statusOk ? filter.status : '', limit: 200 };
}

let onScreen = false;
/** Whether the journal panel is on screen, where reading it after an event is worth a request. */
export const journalVisible = () => onScreen && !document.hidden;

let journalShown = '';
let journalNewest = -1;
export function renderJournal() {
  const { entries, size, total } = model.journal;
  $('#journal-count').textContent = size === 0 ? 'the journal is off (JOURNAL_SIZE=0)' : `${total} recorded, the last ${size} kept`;
  const key = JSON.stringify([entries[0]?.id, entries.length, entries.at(-1)?.id]);
  if (key === journalShown) return;
  journalShown = key;
  const previous = journalNewest;
  journalNewest = entries[0]?.id ?? -1;
  $('#journal tbody').replaceChildren(
    ...(entries.length
      ? entries.map((e) =>
          h(
            'tr',
            { class: previous >= 0 && e.id > previous ? 'new' : undefined, title: e.faulted ? `fault rule ${e.faulted.join(', ')}` : undefined },
            h('td', {}, hms(e.time)),
            h('td', {}, e.method),
            h('td', {}, e.path, e.query ? h('span', { class: 'muted' }, `?${e.query}`) : null),
            h('td', { class: `s${String(e.status)[0]}` }, e.status === 0 ? 'drop' : e.status, e.faulted ? h('span', { class: 'fault-mark', title: 'a fault rule acted on it' }, ' F') : null),
            h('td', {}, e.durationMs.toFixed(1)),
          ),
        )
      : [h('tr', {}, h('td', { colSpan: 5, class: 'empty' }, 'no request recorded yet'))]),
  );
}

export function wireJournal() {
  const form = $('#journal-filter');
  form.elements.pathPrefix.placeholder = `${commonPrefix(INTERFACES.map((i) => i.prefix))}…`;
  let typing = null;
  form.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(refreshSoon, 250);
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  new IntersectionObserver((seen) => {
    onScreen = seen.some((entry) => entry.isIntersecting);
  }).observe($('#journal-panel'));
  $('#journal-refresh').addEventListener('click', () => refreshSoon());
  $('#journal-clear').addEventListener('click', () => act(() => api('DELETE', `${PATHS.control}/journal`), 'journal cleared'));
}
