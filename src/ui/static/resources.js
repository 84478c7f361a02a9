// Grids, test environments and RSDBs: one card each, with its state, progress line, facts
// and actions; read through the provisioning interface only when their lifecycle moved.
import { api } from './api.js';
import { $, button, fact, h } from './dom.js';
import { countdown, duration } from './format.js';
import { KINDS, emulatedNow, model, onForget, positionKey } from './model.js';
import { PATHS, STATES } from './paths.js';
import { act } from './live.js';
import { family, moveTo, pathOf } from './states.js';

const RETRY_MS = 10_000;
/** "kind:id" -> performance.now() before which a failed read is not tried again. */
const retryAt = new Map();
const signature = (p) => `${p.state}|${p.since}|${p.next?.state ?? ''}|${p.next?.at ?? ''}`;
/** "kind:id" -> the state in which a transition event brought the resource's view: no read needed in it. */
const fresh = new Map();

/**
 * A transition event of the world's stream: the card shows its state at once, and its view
 * (the interface's own answer, which the event carries) replaces a read. Returns whether the
 * event was about a resource the cards show (the lifecycles are then read again).
 */
export function acceptTransition(kind, event) {
  if (kind !== 'cloudServer' && !KINDS.includes(kind)) return false;
  const id = event.resourceId;
  const position = model.lifecycles?.resources.find((r) => r.kind === kind && String(r.id) === String(id));
  // When the next step is due is known again once the lifecycles are read; a start seen to
  // begin is on the outcome it was set to end in.
  if (position && typeof event.state === 'string') moveTo(model.lifecycles.tables?.[kind], position, event.state, typeof event.at === 'number' ? event.at : undefined);
  if (position && KINDS.includes(kind) && event.view && typeof event.view === 'object') {
    model.views[kind].set(position.id, event.view);
    fresh.set(positionKey(kind, position.id), event.state);
    if (kind === 'grid') for (const server of event.view.cloudServers ?? []) model.serverGrid.set(server.id, position.id);
  }
  return true;
}

/**
 * Reads a resource through its interface only when its lifecycle moved: the journal then
 * shows one read per change, not one per second.
 */
export async function readChangedResources() {
  const positions = new Map(model.lifecycles.resources.map((r) => [positionKey(r.kind, r.id), r]));
  model.positions = positions;
  // Views a transition event brought are current as long as the state is the event's.
  for (const [key, state] of fresh) {
    const position = positions.get(key);
    if (position?.state !== state) continue;
    model.seen.set(key, signature(position));
    // A grid's view holds its servers as they are now.
    for (const server of (position.kind === 'grid' && model.views.grid.get(position.id)?.cloudServers) || []) {
      const p = positions.get(positionKey('cloudServer', server.id));
      if (p) model.seen.set(positionKey('cloudServer', server.id), signature(p));
    }
  }
  fresh.clear();
  const due = { grid: new Set(), environment: new Set(), rsdb: new Set() };
  for (const [key, position] of positions) {
    const { kind, id } = position;
    if (model.seen.get(key) === signature(position)) continue;
    if (kind === 'cloudServer') {
      const grid = model.serverGrid.get(id);
      if (grid !== undefined) due.grid.add(grid);
      else for (const p of positions.values()) if (p.kind === 'grid' && p.state !== 'LOADED') due.grid.add(p.id);
      continue;
    }
    if (due[kind]) due[kind].add(id);
  }
  for (const kind of KINDS) {
    for (const id of model.views[kind].keys()) if (!positions.has(positionKey(kind, id))) model.views[kind].delete(id);
  }
  // A resource the repository did not list when the page read it (an import added it).
  for (const { kind, id } of positions.values()) if (model.names[kind] && !model.names[kind].has(id)) model.catalogNeeded = true;
  const cloud = PATHS.provisioning;
  const readPath = {
    grid: (id) => `${cloud}/grid/${id}`,
    environment: (id) => `${cloud}/environment/${id}/`,
    rsdb: (id) => `${cloud}/rsdb/${id}`,
  };
  const now = performance.now();
  const reads = KINDS.flatMap((kind) =>
    [...due[kind]].map(async (id) => {
      const key = positionKey(kind, id);
      // After a failure, not again for a while: each try is a request in the journal.
      if ((retryAt.get(key) ?? 0) > now) return;
      let view;
      try {
        view = await api('GET', readPath[kind](id));
      } catch (err) {
        retryAt.set(key, now + RETRY_MS);
        throw err;
      }
      retryAt.delete(key);
      model.views[kind].set(id, view);
      model.seen.set(positionKey(kind, id), signature(positions.get(positionKey(kind, id))));
      if (kind === 'grid') {
        for (const server of view.cloudServers ?? []) {
          model.serverGrid.set(server.id, id);
          const p = positions.get(positionKey('cloudServer', server.id));
          if (p) model.seen.set(positionKey('cloudServer', server.id), signature(p));
        }
      }
    }),
  );
  const results = await Promise.allSettled(reads);
  const failure = results.find((r) => r.status === 'rejected');
  // Servers of no grid this page knows (a grid outside the catalogue) are not read again.
  for (const [key, p] of positions) if (p.kind === 'cloudServer' && !model.seen.has(key)) model.seen.set(key, signature(p));
  if (failure) throw failure.reason;
}

/**
 * What the resource's next start is set to end in, when that is not the success ("next start:
 * fails (ALLOCATE_FAILED)"); '' when it starts as usual or cannot be started now.
 */
export function nextStartText(kind, position) {
  if (!startable(kind, position)) return '';
  const outcome = configuredOutcome(kind, position.id);
  const table = model.lifecycles?.tables?.[kind]?.start;
  if (!outcome || !table || Array.isArray(table)) return '';
  // The first outcome of each table is the success (GET /_emulator/lifecycles).
  if (outcome === Object.keys(table)[0]) return '';
  const end = table[outcome]?.at(-1)?.state ?? outcome;
  return family(end, true, STATES) === 'failed' ? `next start: fails (${outcome})` : `next start: ${outcome}`;
}

/**
 * The outcome the next start is set to end in (the one chosen for that start only, else the
 * resource's own), as GET /_emulator/lifecycles gives it in each resource's nextStart.
 */
const configuredOutcome = (kind, id) =>
  model.lifecycles?.resources.find((r) => r.kind === kind && String(r.id) === String(id))?.nextStart?.outcome;

const startable = (kind, position) => position.isFinal && (kind === 'grid' || !['RUNNING', 'ALLOCATED_DATABASE'].includes(position.state));

// Where terminating is a no-op (NO_TEARDOWN_STATES of src/provisioning/schemas.ts, as the server gives it).
const NO_TEARDOWN = new Set(STATES.noTeardown);

const badge = (state, isFinal) => h('span', { class: `badge fam-${family(state, isFinal, STATES)}` }, state);

/** "kind:id" -> the path last drawn, so that a run keeps the path it was seen taking. */
const paths = new Map();

function progressLine(kind, position) {
  const key = positionKey(kind, position.id);
  const path = pathOf(model.lifecycles?.tables?.[kind], position, paths.get(key), configuredOutcome(kind, position.id));
  paths.set(key, path);
  const { rows, current } = path;
  const fam = family(position.state, position.isFinal, STATES);
  return rows.map((row, i) =>
    h(
      'li',
      {
        class: i === current ? `current fam-${fam}` : `${i < current ? 'done' : 'todo'}${row.monitorsOnly ? ' maybe' : ''}`,
        title: row.monitorsOnly ? 'only for a grid with monitors' : undefined,
      },
      row.state,
    ),
  );
}

/** The next step, with a countdown the clock (clock.js) keeps up to date. */
function nextText(position) {
  if (!position?.next) return null;
  const { at, state } = position.next;
  return h('span', { dataset: { countdown: String(at), label: state } }, `next: ${state} in ${countdown(at, emulatedNow())}`);
}

/** "kind:id" -> {el, update}; cards are built once and updated, so open details and selections stay. */
const cards = new Map();

onForget(() => {
  retryAt.clear();
  fresh.clear();
  for (const container of ['#grids', '#environments', '#rsdbs']) $(container).replaceChildren();
  cards.clear();
  paths.clear();
});

export function renderResources() {
  for (const kind of KINDS) {
    const container = $(kind === 'grid' ? '#grids' : kind === 'environment' ? '#environments' : '#rsdbs');
    const positions = model.lifecycles.resources.filter((r) => r.kind === kind);
    if (positions.length === 0) {
      container.replaceChildren(h('p', { class: 'empty' }, `no ${kind === 'rsdb' ? 'RSDB' : kind === 'grid' ? 'grid' : 'test environment'} in the repository`));
      continue;
    }
    container.querySelector('.empty')?.remove();
    for (const position of positions) {
      const key = positionKey(kind, position.id);
      let card = cards.get(key);
      if (!card) {
        card = (kind === 'grid' ? gridCard : kind === 'environment' ? environmentCard : rsdbCard)(position.id);
        cards.set(key, card);
        container.append(card.el);
      }
      card.update(position, model.views[kind].get(position.id));
    }
    for (const [key, card] of cards) {
      if (key.startsWith(`${kind}:`) && !positions.some((p) => positionKey(kind, p.id) === key)) {
        card.el.remove();
        cards.delete(key);
      }
    }
  }
}

/** The pieces every resource card has: title, state, progress line, next step and actions. */
function cardFrame(kind, id, { outcomes, extraActions = [] }) {
  const title = h('h3');
  const state = h('span');
  const progress = h('ol', { class: 'progress', 'aria-label': 'lifecycle' });
  const meta = h('div', { class: 'meta' });
  const nextStart = h('p', { class: 'next-start', hidden: true });
  const outcome = outcomes
    ? h('select', { name: 'outcome', title: 'how the next start ends (a failure, or success); used up by that start' }, h('option', { value: '' }, 'as configured'))
    : null;
  const base = `${PATHS.provisioning}/${kind}/${id}/action`;
  const start = button('start', () =>
    act(async () => {
      const chosen = outcome?.value;
      const nextStartPath = `${PATHS.control}/lifecycles/${kind}/${id}/next-start`;
      if (chosen) {
        await api('PUT', nextStartPath, { body: { outcome: chosen } });
      }
      try {
        const result = await api('POST', base, { body: { action: 'start' } });
        if (outcome) outcome.value = '';
        return result;
      } catch (err) {
        // The outcome was for this start only: a refused start must not leave it for a later one.
        if (chosen) await api('DELETE', nextStartPath).catch(() => undefined);
        throw err;
      }
    }),
  { class: 'primary', name: 'start' });
  const terminate = button('terminate', () => act(() => api('POST', base, { body: { action: 'terminate' } })), { class: 'danger', name: 'terminate' });
  const settle = button('settle', () => act(() => api('POST', `${PATHS.control}/clock/advance`, { body: { until: { kind, id } } })), {
    name: 'settle',
    dataset: { admin: '' },
    title: 'advance the clock until this resource reaches the end of its current lifecycle',
  });
  const actions = h(
    'div',
    { class: 'buttons' },
    start,
    outcome ? h('label', { class: 'inline', dataset: { admin: '' } }, 'outcome', outcome) : null,
    terminate,
    settle,
    ...extraActions,
  );
  const el = h('article', { class: 'card fam-idle', dataset: { kind, id: String(id) } }, h('header', {}, title, state), progress, nextStart, meta, actions);
  let last = '';
  let outcomesShown = false;
  return {
    el,
    parts: { meta, start, terminate, settle },
    /** Redraws when anything shown changed; returns whether it did. */
    frame(position, view, extraKey = '') {
      if (outcome && !outcomesShown) {
        const names = Object.keys(model.lifecycles?.tables?.[kind]?.start ?? {});
        if (names.length) {
          outcome.append(...names.map((name) => h('option', { value: name }, name)));
          outcomesShown = true;
        }
      }
      const startText = nextStartText(kind, position);
      const key = JSON.stringify([position, view, extraKey, startText]);
      if (key === last) return false;
      last = key;
      nextStart.textContent = startText;
      nextStart.hidden = startText === '';
      const fam = family(position.state, position.isFinal, STATES);
      el.className = `card fam-${fam}`;
      title.replaceChildren(model.names[kind].get(id) ?? position.name, ' ', h('small', { class: 'muted' }, `#${id}`));
      state.replaceChildren(badge(position.state, position.isFinal));
      state.firstChild.classList.add('state');
      progress.replaceChildren(...progressLine(kind, position));
      start.disabled = !startable(kind, position);
      terminate.disabled = NO_TEARDOWN.has(position.state);
      settle.disabled = !position.next;
      return true;
    },
  };
}

function gridCard(id) {
  const frame = cardFrame('grid', id, { outcomes: true });
  const servers = h('tbody');
  const serverCount = h('span');
  const journal = h('ul', { class: 'entries' });
  const journalCount = h('span');
  const stats = h('div', { class: 'small' });
  // -1: not drawn yet. A grid that already has servers when the page opens stays folded.
  let shownServers = -1;
  const serversBox = h(
    'details',
    { class: 'servers' },
    h('summary', {}, 'cloud servers ', serverCount),
    h(
      'table',
      { class: 'table servers' },
      h('thead', {}, h('tr', {}, ...['id', 'name', 'state', 'public host', 'location', ''].map((t) => h('th', {}, t)))),
      servers,
    ),
  );
  frame.el.append(
    serversBox,
    h('details', { class: 'journal' }, h('summary', {}, 'journal ', journalCount), journal),
    h('details', { class: 'statistics' }, h('summary', {}, 'statistics'), stats),
  );
  return {
    el: frame.el,
    update(position, view) {
      const serverPositions = (view?.cloudServers ?? []).map((s) => model.positions.get(positionKey('cloudServer', s.id)));
      if (!frame.frame(position, view, JSON.stringify(serverPositions))) return;
      const { meta } = frame.parts;
      meta.replaceChildren(
        ...[
          fact('instance', view?.instanceId),
          fact('final', view ? String(view.isFinal) : undefined),
          fact('checked load generators', view?.totalCheckedLoadGeneratorServers),
          fact('checked results servers', view?.totalCheckedResultsServers),
          nextText(position),
        ].filter(Boolean),
      );
      const list = view?.cloudServers ?? [];
      serverCount.textContent = `(${list.length})`;
      const locations = new Map((view?.statistics?.locations ?? []).map((l) => [l.locationID, l.locationName]));
      servers.replaceChildren(
        ...(list.length
          ? list.map((server, i) => serverRow(server, serverPositions[i], locations))
          : [h('tr', {}, h('td', { colSpan: 6, class: 'empty' }, 'none: the grid has not been started'))]),
      );
      // Opens by itself when a start happens on screen; a reader's own choice is kept after.
      if (list.length > 0 && shownServers === 0) serversBox.open = true;
      shownServers = list.length;
      const entries = view?.journalEntries ?? [];
      journalCount.textContent = `(${entries.length})`;
      journal.replaceChildren(...entries.map((e) => h('li', { class: e.type }, h('b', {}, e.type), ' ', e.text)));
      // Oldest first, like a log: keep the newest line in view.
      journal.scrollTop = journal.scrollHeight;
      stats.replaceChildren(statistics(view?.statistics));
    },
  };
}

function serverRow(server, position, locations) {
  const state = position?.state ?? '?';
  const cloud = `${PATHS.provisioning}/cloudserver/${server.id}/action`;
  const down = ['SHUTTING_DOWN', 'TERMINATED'].includes(state);
  return h(
    'tr',
    { dataset: { server: String(server.id) } },
    h('td', { class: 'nowrap' }, server.id),
    h('td', { title: `${server.serverClassName} · ${server.cloudType} · ${server.launchCPA}` }, server.name),
    h('td', {}, badge(state, position?.isFinal)),
    h('td', { class: 'mono' }, server.publicHostname ? breakable(server.publicHostname) : '—'),
    h('td', {}, locations.get(server.locationID) ?? `location ${server.locationID}`),
    h(
      'td',
      {},
      h(
        'div',
        { class: 'row-actions' },
      button('restart', () => act(() => api('POST', cloud, { body: { action: 'restart' } })), {
        class: 'small',
        disabled: !['RUNNING', 'BUSY', 'FAILED'].includes(state),
      }),
      button('fail', () => act(() => api('POST', `${PATHS.control}/lifecycles/cloudServer/${server.id}/fail`)), {
        class: 'small danger',
        dataset: { admin: '' },
        disabled: down || state === 'FAILED',
        title: 'make this cloud server FAILED now',
      }),
      button('terminate', () => act(() => api('POST', cloud, { body: { action: 'terminate' } })), { class: 'small', disabled: down }),
      ),
    ),
  );
}

/** A host name that wraps at its dots, not in the middle of a word. */
function breakable(host) {
  return host.split('.').flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), `.${part}`]));
}

function statistics(stats) {
  if (!stats) return h('p', { class: 'empty' }, 'none yet');
  return h(
    'div',
    {},
    h(
      'p',
      {},
      `allocation ${duration(stats.totalAllocationTime)} · health checks ${duration(stats.totalCheckServerTime)} · deployment ${duration(stats.totalDeploymentTime)}`,
    ),
    stats.locations.length
      ? h(
          'table',
          { class: 'table' },
          h('thead', {}, h('tr', {}, ...['location', 'allocated', 'timed out', 'pending min–max', 'busy min–max'].map((t) => h('th', {}, t)))),
          h(
            'tbody',
            {},
            ...stats.locations.map((l) =>
              h(
                'tr',
                {},
                h('td', {}, `${l.locationName} (${l.locationID})`),
                h('td', {}, l.totalServersAllocated),
                h('td', {}, l.totalTimedOutServers),
                h('td', {}, `${duration(l.minPendingTime)} – ${duration(l.maxPendingTime)}`),
                h('td', {}, `${duration(l.minBusyTime)} – ${duration(l.maxBusyTime)}`),
              ),
            ),
          ),
        )
      : null,
  );
}

function environmentCard(id) {
  const externally = button('externally terminate', () => act(() => api('POST', `${PATHS.control}/lifecycles/environment/${id}/externally-terminate`)), {
    class: 'danger',
    dataset: { admin: '' },
    title: 'someone else kills this RUNNING environment: it becomes EXTERNALLY_TERMINATED',
  });
  const frame = cardFrame('environment', id, { outcomes: true, extraActions: [externally] });
  return {
    el: frame.el,
    update(position, view) {
      if (!frame.frame(position, view)) return;
      externally.disabled = position.state !== 'RUNNING';
      frame.parts.meta.replaceChildren(
        ...[
          view?.url
            ? h('span', {}, 'url ', /^https?:\/\//.test(view.url) ? h('a', { href: view.url, target: '_blank', rel: 'noreferrer' }, view.url) : h('b', {}, view.url))
            : null,
          fact('database', view?.databaseInstance?.publicHostName),
          fact('main', view?.mainInstance?.publicHostName),
          fact('last launched', view?.lastLaunched),
          fact('by', view?.lastLaunchedBy),
          fact('last stopped', view?.lastStopped),
          nextText(position),
        ].filter(Boolean),
      );
    },
  };
}

function rsdbCard(id) {
  const frame = cardFrame('rsdb', id, { outcomes: false });
  return {
    el: frame.el,
    update(position, view) {
      if (!frame.frame(position, view)) return;
      const server = view?.cloudServer;
      frame.parts.meta.replaceChildren(
        ...[
          server ? h('span', {}, 'cloud server ', badge(server.state, ['RUNNING', 'TERMINATED'].includes(server.state))) : null,
          fact('public host', server?.publicHostName),
          fact('private host', server?.privateHostName),
          fact('where', server ? `${server.region} / ${server.zone}` : undefined),
          fact('size', server?.instanceSize),
          nextText(position),
        ].filter(Boolean),
      );
    },
  };
}
