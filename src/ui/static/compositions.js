// Compositions: each one with load and play buttons; each instance with its state, status,
// play time, the live counts of its result, and a button for each composition command.
import { api } from './api.js';
import { $, button, fact, h } from './dom.js';
import { model, onForget } from './model.js';
import { INSTANCES, PATHS } from './paths.js';
import { act } from './live.js';

/** Where each command is accepted, and the families of the states, as the server gives them (paths.json). */
const ACCEPTED_IN = INSTANCES.acceptedIn;
const inFamily = (name, state) => INSTANCES.families[name].includes(state);
const familyOf = (state) => (inFamily('failed', state) ? 'failed' : inFamily('terminated', state) ? 'terminated' : inFamily('ready', state) ? 'ready' : 'progress');

/** Instances shown: every one not unloaded, and the last few unloaded ones. */
const UNLOADED_SHOWN = 3;

model.compositions = [];
model.instances = [];
onForget(() => {
  model.compositions = [];
  model.instances = [];
});

const clockText = (ms) => {
  const s = Math.floor(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};

/**
 * Reads the compositions (once), and every instance with its result's counts, through the
 * control API, which the request journal does not record.
 */
export async function readCompositions() {
  if (model.compositions.length === 0) model.compositions = await api('GET', `${PATHS.control}/compositions`);
  const instances = await api('GET', `${PATHS.control}/compositions/instances`);
  const live = instances.filter((i) => i.state !== 'Unloaded');
  model.instances = [...live, ...instances.filter((i) => i.state === 'Unloaded').slice(-UNLOADED_SHOWN)];
}

export function renderCompositions() {
  const list = $('#compositions');
  if (!list) return;
  const cards = model.compositions.map((c) =>
    h(
      'article',
      { class: 'card', dataset: { composition: c.path } },
      h('header', {}, h('h3', {}, c.path)),
      h('div', { class: 'meta' }, fact('virtual users', c.virtualUsers), fact('load servers', c.loadServers), fact('plays', clockText(c.durationMs))),
      h(
        'div',
        { class: 'buttons' },
        button('load', () => act(() => api('POST', PATHS.compositions, { query: { command: 'load' }, body: { compositionName: c.path } }), `${c.path}: loading`), { name: 'load' }),
        button('play', () => act(() => api('POST', PATHS.compositions, { query: { command: 'play' }, body: { compositionName: c.path } }), `${c.path}: playing`), { name: 'play' }),
      ),
    ),
  );
  list.replaceChildren(...(cards.length ? cards : [h('p', { class: 'empty' }, 'no composition in the fixtures')]));

  const instances = $('#instances');
  const rows = model.instances.map((i) => {
    const counts = i.messages;
    const path = `${PATHS.compositions}/${i.instanceID}`;
    return h(
      'article',
      { class: `card fam-${familyOf(i.state)}`, dataset: { instance: i.instanceID } },
      h('header', {}, h('h3', {}, `${i.path === '/' ? '' : i.path}/${i.compositionName}`), h('span', { class: `badge fam-${familyOf(i.state)}` }, i.state)),
      h('p', { class: 'muted' }, i.status),
      h(
        'div',
        { class: 'meta' },
        fact('played', clockText(i.totalTime)),
        fact('result', i.resultid),
        fact('messages', counts?.count),
        fact('errors', counts ? `${counts.errors}${counts.count ? ` (${((100 * counts.errors) / counts.count).toFixed(2)} %)` : ''}` : undefined),
        h('small', { class: 'mono muted' }, i.instanceID),
      ),
      h(
        'div',
        { class: 'buttons' },
        ...Object.keys(ACCEPTED_IN).map((command) =>
          button(command, () => act(() => api('PUT', path, { query: { command }, body: {} }), `${i.compositionName}: ${command}`), {
            name: command,
            disabled: !ACCEPTED_IN[command].includes(i.state),
            class: command === 'abort' ? 'danger' : undefined,
          }),
        ),
      ),
    );
  });
  instances.replaceChildren(...(rows.length ? rows : [h('p', { class: 'empty' }, 'no instance: load or play a composition')]));
}
