// The cloud-emulator dashboard: plain ES modules, no framework, no build step. It is a
// client like any other: it reads and steers the emulator only through the public control
// API (/_emulator) and the three emulated interfaces, which is also what it demonstrates.
import { family, pathOf } from './states.js';

// The page lives at <root>/_emulator/ui/, so the emulator's root is two folders up; this
// keeps the page working behind a proxy that adds a path prefix.
const ROOT = new URL('../../', location.href);
const REPO = 'concerto/services/rest/RepositoryService/v1';
const CLOUD = 'concerto/services/rest/CloudService/v1';
const ANNOTATIONS = 'concerto/mpulse/api/annotations/v1';
const ALERTS = 'concerto/mpulse/api/alerts';
const CONTROL = '_emulator';
const POLL_MS = 1000;
const DEMO_USER = { userName: 'demo@example.com', password: 'demo' };
const KINDS = ['grid', 'environment', 'rsdb'];

// ---------------------------------------------------------------------------------------
// Small DOM helpers
// ---------------------------------------------------------------------------------------

const $ = (selector, root = document) => root.querySelector(selector);

/** h('button', {class: 'x', onclick}, 'text', child): an element with properties and children. */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false).map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, attrs);
  el.append(...children.flat().filter((c) => c !== null && c !== undefined).map((c) => (c instanceof Node ? c : String(c))));
  return el;
}

function setProps(el, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'class') el.setAttribute('class', value);
    else if (key in el && !(el instanceof SVGElement) && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

function button(label, onclick, props = {}) {
  return h('button', { type: 'button', ...props, onclick }, label);
}

const pad = (n, w = 2) => String(n).padStart(w, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Emulated times are shown in UTC, like the interfaces speak them. */
const hms = (ms) => {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};
const ymd = (ms) => {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
};
const dateTime = (ms) => `${ymd(ms)} ${hms(ms)}`;
const shortDate = (ms) => {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
};
/** "<input type=datetime-local>" value for an instant, read as UTC. */
const toLocalInput = (ms) => new Date(ms).toISOString().slice(0, 19);
const fromLocalInput = (value) => (value ? Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`) : undefined);

function duration(ms) {
  if (ms < 0) ms = 0;
  const sec = Math.round(ms / 1000);
  if (sec < 60) return `${sec} s`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min ${pad(sec % 60)} s`;
  if (sec < 86400) return `${Math.floor(sec / 3600)} h ${pad(Math.floor((sec % 3600) / 60))} min`;
  return `${Math.floor(sec / 86400)} d ${Math.floor((sec % 86400) / 3600)} h`;
}

const notified = new Map();
/** An error toast, unless the same one was shown a moment ago (polling repeats failures). */
function notifyOnce(text) {
  const now = performance.now();
  if (now - (notified.get(text) ?? -Infinity) < 20_000) return;
  notified.set(text, now);
  toast(text, 'error');
}

function toast(text, kind = 'info') {
  // Also in the browser's console, where a developer (or a test) looks for what went wrong.
  if (kind === 'error') console.warn(text);
  const el = h('div', { class: `toast ${kind}` }, text);
  $('#toasts').append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 3500);
}

// ---------------------------------------------------------------------------------------
// Talking to the emulator
// ---------------------------------------------------------------------------------------

class ApiFailure extends Error {
  constructor(status, message, method, path) {
    super(message);
    this.status = status;
    this.method = method;
    this.path = path;
  }
  describe() {
    return this.status === 0
      ? `${this.method} /${this.path}: ${this.message}`
      : `${this.method} /${this.path} → ${this.status}: ${this.message}`;
  }
}

const auth = {
  token: sessionStorage.getItem('ce.token'),
  user: sessionStorage.getItem('ce.user') || null,
  /** Kept in memory only, to sign in again after a reset drops the session. */
  credentials: DEMO_USER,
  admin: sessionStorage.getItem('ce.admin'),
};

const isControl = (path) => path === CONTROL || path.startsWith(`${CONTROL}/`);
const needsSession = (path) => path.startsWith(CLOUD) || path.startsWith(ANNOTATIONS) || path.startsWith(`${REPO}/Objects`) || path.startsWith(ALERTS);

/**
 * One request. Control calls carry the admin token once one was asked for; interface calls
 * carry X-Auth-Token. A 401 asks for what is missing (once, shared by every caller) and
 * the call is tried again.
 */
async function api(method, path, { body, query, retried = false } = {}) {
  const url = new URL(path, ROOT);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (isControl(path) && auth.admin) headers.authorization = `Bearer ${auth.admin}`;
  if (needsSession(path)) {
    if (!auth.token) await signIn();
    headers['x-auth-token'] = auth.token;
  }
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'the emulator does not answer', method, path);
  }
  const text = await response.text();
  let data = null;
  if (text && (response.headers.get('content-type') ?? '').includes('json')) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  } else if (text) data = text;
  if (response.ok) return data;
  const message = (data && typeof data === 'object' && data.message) || response.statusText || 'failed';
  if (response.status === 401 && !retried) {
    if (isControl(path)) {
      await askAdminToken(auth.admin ? `The admin token was refused: ${message}` : '');
      return api(method, path, { body, query, retried: true });
    }
    if (needsSession(path)) {
      auth.token = null;
      await signIn();
      return api(method, path, { body, query, retried: true });
    }
  }
  throw new ApiFailure(response.status, message, method, path);
}

/** `user` null: signed in with a token typed in, whose user the page does not know. */
function rememberSession(token, user) {
  auth.token = token;
  auth.user = user;
  sessionStorage.setItem('ce.token', token);
  sessionStorage.setItem('ce.user', user ?? '');
  showUser();
}

function showUser() {
  $('#who').textContent = auth.user ? `signed in as ${auth.user}` : 'signed in with a session token';
}

let signingIn = null;
/** Gets a session token: with the remembered credentials (the demo user), else by asking. */
function signIn() {
  signingIn ??= (async () => {
    try {
      if (auth.credentials) {
        try {
          const { token } = await api('PUT', `${REPO}/Tokens`, { body: auth.credentials });
          return rememberSession(token, auth.credentials.userName);
        } catch (err) {
          if (!(err instanceof ApiFailure) || err.status !== 401) throw err;
          auth.credentials = null;
        }
      }
      await askCredentials('');
    } finally {
      signingIn = null;
    }
  })();
  return signingIn;
}

/**
 * Shows a dialog until `submit` accepts what was typed (it returns nothing) or explains why
 * not (it returns the text to show). Resolves true once accepted; false if the user escaped a
 * `cancellable` one. Without a token the page can do nothing, so the others cannot be escaped.
 */
function dialogUntil(dialog, form, errorEl, message, submit, { cancellable = false } = {}) {
  return new Promise((resolve) => {
    errorEl.hidden = !message;
    errorEl.textContent = message;
    const finish = (accepted) => {
      form.removeEventListener('submit', onSubmit);
      dialog.removeEventListener('cancel', onCancel);
      dialog.close();
      resolve(accepted);
    };
    const onSubmit = async (event) => {
      event.preventDefault();
      const problem = await submit(new FormData(form));
      if (!problem) return finish(true);
      errorEl.hidden = false;
      errorEl.textContent = problem;
    };
    const onCancel = (event) => {
      event.preventDefault();
      if (cancellable) finish(false);
    };
    form.addEventListener('submit', onSubmit);
    dialog.addEventListener('cancel', onCancel);
    if (!dialog.open) dialog.showModal();
    form.querySelector('input')?.focus();
  });
}

function askCredentials(message, options) {
  const dialog = $('#login');
  const form = $('#login-form');
  return dialogUntil(dialog, form, $('#login-error'), message, async (data) => {
    const token = String(data.get('token') ?? '').trim();
    const userName = String(data.get('userName') ?? '').trim();
    const password = String(data.get('password') ?? '');
    if (token) {
      // A token is checked with a cheap authenticated read.
      const response = await fetch(new URL(`${REPO}/Objects/domain?name=`, ROOT), { headers: { 'x-auth-token': token } }).catch(() => null);
      if (!response?.ok) return 'that token is not valid';
      auth.credentials = null;
      rememberSession(token, null);
      return undefined;
    }
    if (!userName) return 'give a user name and password, or a token';
    const response = await fetch(new URL(`${REPO}/Tokens`, ROOT), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName, password }),
    }).catch(() => null);
    if (!response) return 'the emulator does not answer';
    const body = await response.json().catch(() => ({}));
    if (!response.ok) return body.message ?? `refused (${response.status})`;
    auth.credentials = { userName, password };
    rememberSession(body.token, userName);
    return undefined;
  }, options);
}

let askingAdmin = null;
function askAdminToken(message) {
  askingAdmin ??= dialogUntil($('#admin'), $('#admin-form'), $('#admin-error'), message, async (data) => {
    const token = String(data.get('token') ?? '').trim();
    const response = await fetch(new URL(`${CONTROL}/clock`, ROOT), { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
    if (!response) return 'the emulator does not answer';
    if (!response.ok) return (await response.json().catch(() => ({}))).message ?? `refused (${response.status})`;
    auth.admin = token;
    sessionStorage.setItem('ce.admin', token);
    return undefined;
  }).finally(() => {
    askingAdmin = null;
  });
  return askingAdmin;
}

/** Runs a user's action, reports a failure the way the emulator worded it, then refreshes. */
async function act(fn, success) {
  try {
    const result = await fn();
    if (success) toast(typeof success === 'function' ? success(result) : success);
    return result;
  } catch (err) {
    toast(err instanceof ApiFailure ? err.describe() : String(err?.message ?? err), 'error');
    return undefined;
  } finally {
    refreshSoon();
  }
}

// ---------------------------------------------------------------------------------------
// What the page knows
// ---------------------------------------------------------------------------------------

const model = {
  clock: null,
  /** performance.now() when the clock was read, to let it run on between polls. */
  clockReadAt: 0,
  lifecycles: null,
  /** "kind:id" -> the lifecycle entry of every resource. */
  positions: new Map(),
  /** "kind:id" -> what the resource looked like when it was last read. */
  seen: new Map(),
  names: { grid: new Map(), environment: new Map(), rsdb: new Map() },
  views: { grid: new Map(), environment: new Map(), rsdb: new Map() },
  /** cloud server id -> the grid it belongs to. */
  serverGrid: new Map(),
  alerts: [],
  faults: [],
  journal: { size: 0, total: 0, entries: [] },
  domains: [],
  annotations: [],
  /** Newest journal id of an annotation change this page has already read (-1: none; undefined: not looked yet). */
  annotationMark: undefined,
  annotationsReadAt: 0,
  annotationsRetryAt: 0,
};

/** Emulated now, running on between polls at the clock's speed. */
function emulatedNow() {
  const c = model.clock;
  if (!c) return 0;
  return c.frozen ? c.now : c.now + (performance.now() - model.clockReadAt) * c.scale;
}

const NO_TEARDOWN = new Set(['LOADED', 'TERMINATED', 'TERMINATED_WITH_FAILURES', 'CANCELLED', 'TERMINATING', 'CANCELLING']);

const badge = (state, isFinal) => h('span', { class: `badge fam-${family(state, isFinal)}` }, state);

/** "kind:id" -> the path last drawn, so that a run keeps the path it was seen taking. */
const paths = new Map();

function progressLine(kind, position) {
  const key = positionKey(kind, position.id);
  const path = pathOf(model.lifecycles?.tables?.[kind], position, paths.get(key));
  paths.set(key, path);
  const { rows, current } = path;
  const fam = family(position.state, position.isFinal);
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

function nextText(position) {
  if (!position?.next) return null;
  return h('span', { dataset: { countdown: String(position.next.at), label: position.next.state } }, `next: ${position.next.state}`);
}

// ---------------------------------------------------------------------------------------
// Polling
// ---------------------------------------------------------------------------------------

let ticking = false;
let timer = null;
let catalogNeeded = true;
let catalogRetryAt = 0;

/** Set when a refresh is asked for during a poll: that poll's answers may predate the change. */
let again = false;

function refreshSoon() {
  if (ticking) {
    again = true;
    return;
  }
  clearTimeout(timer);
  timer = setTimeout(tick, 30);
}

function setLive(ok, text) {
  const el = $('#live');
  el.className = `live ${ok ? 'ok' : 'down'}`;
  el.textContent = text ?? (ok ? 'live' : 'emulator not answering');
}

async function tick() {
  clearTimeout(timer);
  if (ticking) return;
  ticking = true;
  try {
    if (!document.hidden) await poll();
    setLive(true);
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 0) setLive(false);
    else {
      setLive(false, 'error');
      notifyOnce(err instanceof ApiFailure ? err.describe() : String(err?.stack ?? err));
    }
  } finally {
    ticking = false;
    timer = setTimeout(tick, again ? 30 : POLL_MS);
    again = false;
  }
}

async function poll() {
  const journalFilter = Object.fromEntries(new FormData($('#journal-filter')));
  const statusOk = /^([0-9]{1,3}|[1-5]xx)?$/.test(journalFilter.status ?? '');
  const [clock, lifecycles, journal, faults, alerts, annotationMarks] = await Promise.all([
    api('GET', `${CONTROL}/clock`),
    api('GET', `${CONTROL}/lifecycles`),
    api('GET', `${CONTROL}/journal`, { query: { ...journalFilter, status: statusOk ? journalFilter.status : '', limit: 200 } }),
    api('GET', `${CONTROL}/faults`),
    api('GET', `${CONTROL}/alerts`),
    // Annotations are read again only when the journal shows someone changed them.
    api('GET', `${CONTROL}/journal`, { query: { pathPrefix: `/${ANNOTATIONS}`, limit: 20 } }),
  ]);
  model.clock = clock;
  model.clockReadAt = performance.now();
  model.lifecycles = lifecycles;
  model.journal = journal;
  model.faults = faults;
  model.alerts = alerts;

  // A failed read of an interface (a fault rule may well hit this page too) is reported and
  // tried again later; the rest of the page goes on.
  const problems = [];
  const attempt = async (fn) => {
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      problems.push(err);
    }
  };
  if (catalogNeeded && performance.now() >= catalogRetryAt) {
    await attempt(async () => {
      try {
        await loadCatalog();
      } catch (err) {
        catalogRetryAt = performance.now() + RETRY_MS;
        throw err;
      }
    });
  }
  await attempt(readChangedResources);
  await attempt(() => maybeReloadAnnotations(annotationMarks));
  for (const problem of problems) notifyOnce(`could not read: ${problem.describe()}`);

  renderClock();
  renderResources();
  renderAlerts();
  renderFaults();
  renderJournal();
  // The axis's now line follows the clock (not while a keyboard user is on an annotation).
  if (model.clock.now !== axisDrawnAt && !$('#ann-axis').contains(document.activeElement)) drawAxis();
}

/** Names of the grids, environments and RSDBs, from the Repository service, and the domains. */
async function loadCatalog() {
  const [grids, environments, rsdbs, domains] = await Promise.all(
    ['grid', 'testenvironment', 'rsdb', 'domain'].map((type) => api('GET', `${REPO}/Objects/${type}`)),
  );
  model.names.grid = new Map(grids.objects.map((o) => [o.id, o.name]));
  model.names.environment = new Map(environments.objects.map((o) => [o.id, o.name]));
  model.names.rsdb = new Map(rsdbs.objects.map((o) => [o.id, o.name]));
  model.domains = domains.objects;
  renderDomainChoices();
  catalogNeeded = false;
  await reloadAnnotations();
}

const positionKey = (kind, id) => `${kind}:${id}`;
const RETRY_MS = 10_000;
/** "kind:id" -> performance.now() before which a failed read is not tried again. */
const retryAt = new Map();
const signature = (p) => `${p.state}|${p.since}|${p.next?.state ?? ''}|${p.next?.at ?? ''}`;

/**
 * Reads a resource through its interface only when its lifecycle moved: the journal then
 * shows one read per change, not one per second.
 */
async function readChangedResources() {
  const positions = new Map(model.lifecycles.resources.map((r) => [positionKey(r.kind, r.id), r]));
  model.positions = positions;
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
  for (const { kind, id } of positions.values()) if (model.names[kind] && !model.names[kind].has(id)) catalogNeeded = true;
  const readPath = {
    grid: (id) => `${CLOUD}/grid/${id}`,
    environment: (id) => `${CLOUD}/environment/${id}/`,
    rsdb: (id) => `${CLOUD}/rsdb/${id}`,
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

async function maybeReloadAnnotations(marks) {
  const newestId = marks.entries.find((e) => e.method !== 'GET' && e.status < 400)?.id ?? -1;
  // Without a journal (JOURNAL_SIZE=0) the list is simply read every ten seconds.
  const stale = marks.size === 0 && performance.now() - model.annotationsReadAt > 10_000;
  if (model.annotationMark === undefined) {
    model.annotationMark = newestId;
    return;
  }
  if ((newestId === model.annotationMark && !stale) || performance.now() < model.annotationsRetryAt) return;
  try {
    await reloadAnnotations();
  } catch (err) {
    model.annotationsRetryAt = performance.now() + RETRY_MS;
    throw err;
  }
  model.annotationMark = newestId;
}

async function reloadAnnotations() {
  const domain = $('#ann-domain').value;
  const span = Number($('#ann-window').value || 0);
  const now = emulatedNow() || model.clock?.now || 0;
  const data = await api('GET', ANNOTATIONS, { query: { domain, ...(span ? { 'date-start': Math.floor(now - span) } : {}) } });
  // ANNOTATIONS_LIST_WRAPPED answers the real service's {"annotations": [...]}.
  model.annotations = Array.isArray(data) ? data : (data?.annotations ?? []);
  model.annotationsReadAt = performance.now();
  renderAnnotations();
}

/** After a reset or an import everything this page has read may be gone. */
function forgetEverything() {
  model.seen.clear();
  model.serverGrid.clear();
  for (const kind of KINDS) model.views[kind].clear();
  model.annotationMark = undefined;
  catalogNeeded = true;
  catalogRetryAt = 0;
  retryAt.clear();
  for (const container of ['#grids', '#environments', '#rsdbs', '#alerts']) $(container).replaceChildren();
  cards.clear();
  alertCards.clear();
  paths.clear();
}

// ---------------------------------------------------------------------------------------
// Clock
// ---------------------------------------------------------------------------------------

function renderClock() {
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

function wireClock() {
  for (const el of document.querySelectorAll('[data-advance]')) {
    el.addEventListener('click', () =>
      act(() => api('POST', `${CONTROL}/clock/advance`, { body: { ms: Number(el.dataset.advance) } })),
    );
  }
  $('#advance-next').addEventListener('click', () =>
    act(() => api('POST', `${CONTROL}/clock/advance`, { body: { to: 'next' } }), (r) => `advanced ${duration(r.advancedMs)} to ${hms(r.now)}`),
  );
  $('#clock-scale').addEventListener('change', (event) =>
    act(() => api('PUT', `${CONTROL}/clock`, { body: { scale: Number(event.target.value) } })),
  );
  $('#clock-freeze').addEventListener('click', () =>
    act(() => api('PUT', `${CONTROL}/clock`, { body: { frozen: !model.clock?.frozen } })),
  );
}

// ---------------------------------------------------------------------------------------
// Grids, test environments, RSDBs
// ---------------------------------------------------------------------------------------

/** "kind:id" -> {el, update}; cards are built once and updated, so open details and selections stay. */
const cards = new Map();

function renderResources() {
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
  const outcome = outcomes
    ? h('select', { name: 'outcome', title: 'how the next start ends (a failure, or success); used up by that start' }, h('option', { value: '' }, 'as configured'))
    : null;
  const base = `${CLOUD}/${kind}/${id}/action`;
  const start = button('start', () =>
    act(async () => {
      const chosen = outcome?.value;
      const nextStart = `${CONTROL}/lifecycles/${kind}/${id}/next-start`;
      if (chosen) await api('PUT', nextStart, { body: { outcome: chosen } });
      try {
        const result = await api('POST', base, { body: { action: 'start' } });
        if (outcome) outcome.value = '';
        return result;
      } catch (err) {
        // The outcome was for this start only: a refused start must not leave it for a later one.
        if (chosen) await api('DELETE', nextStart).catch(() => undefined);
        throw err;
      }
    }),
  { class: 'primary', name: 'start' });
  const terminate = button('terminate', () => act(() => api('POST', base, { body: { action: 'terminate' } })), { class: 'danger', name: 'terminate' });
  const settle = button('settle', () => act(() => api('POST', `${CONTROL}/clock/advance`, { body: { until: { kind, id } } })), {
    name: 'settle',
    title: 'advance the clock until this resource reaches the end of its current lifecycle',
  });
  const actions = h(
    'div',
    { class: 'buttons' },
    start,
    outcome ? h('label', { class: 'inline' }, 'outcome', outcome) : null,
    terminate,
    settle,
    ...extraActions,
  );
  const el = h('article', { class: 'card fam-idle', dataset: { kind, id: String(id) } }, h('header', {}, title, state), progress, meta, actions);
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
      const key = JSON.stringify([position, view, extraKey]);
      if (key === last) return false;
      last = key;
      const fam = family(position.state, position.isFinal);
      el.className = `card fam-${fam}`;
      title.replaceChildren(model.names[kind].get(id) ?? position.name, ' ', h('small', { class: 'muted' }, `#${id}`));
      state.replaceChildren(badge(position.state, position.isFinal));
      state.firstChild.classList.add('state');
      progress.replaceChildren(...progressLine(kind, position));
      start.disabled = !position.isFinal || (kind !== 'grid' && ['RUNNING', 'ALLOCATED_DATABASE'].includes(position.state));
      terminate.disabled = NO_TEARDOWN.has(position.state);
      settle.disabled = !position.next;
      return true;
    },
  };
}

function fact(label, value) {
  return value === undefined || value === null || value === '' ? null : h('span', {}, `${label} `, h('b', {}, value));
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
  const cloud = `${CLOUD}/cloudserver/${server.id}/action`;
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
      button('fail', () => act(() => api('POST', `${CONTROL}/lifecycles/cloudServer/${server.id}/fail`)), {
        class: 'small danger',
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
  const externally = button('externally terminate', () => act(() => api('POST', `${CONTROL}/lifecycles/environment/${id}/externally-terminate`)), {
    class: 'danger',
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

// ---------------------------------------------------------------------------------------
// Alerts
// ---------------------------------------------------------------------------------------

const alertCards = new Map();

function renderAlerts() {
  const container = $('#alerts');
  if (model.alerts.length === 0) {
    container.replaceChildren(h('p', { class: 'empty' }, 'no alert is configured'));
    alertCards.clear();
    return;
  }
  container.querySelector('.empty')?.remove();
  for (const alert of model.alerts) {
    let card = alertCards.get(alert.uid);
    if (!card) {
      card = alertCard(alert.uid);
      alertCards.set(alert.uid, card);
      container.append(card.el);
    }
    card.update(alert);
  }
  for (const [uid, card] of alertCards) {
    if (!model.alerts.some((a) => a.uid === uid)) {
      card.el.remove();
      alertCards.delete(uid);
    }
  }
}

function alertCard(uid) {
  const path = `${ALERTS}/${encodeURIComponent(uid)}`;
  const title = h('h3');
  const state = h('span');
  const enabled = h('input', {
    type: 'checkbox',
    name: 'enabled',
    onchange: () =>
      act(
        () => api('PATCH', `${CONTROL}/alerts/${encodeURIComponent(uid)}`, { body: { enabled: enabled.checked } }),
        (a) => `${a.name}: ${a.enabled ? 'enabled' : 'disabled'}`,
      ),
  });
  const message = h('input', { name: 'message', placeholder: 'message (empty: the default)', class: 'grow' });
  const fire = button('fire', () =>
    act(() => api('POST', `${path}/fire`, { body: message.value ? { message: message.value } : undefined }), 'alert fired'),
  { class: 'danger', name: 'fire' });
  const clear = button('clear', () => act(() => api('POST', `${path}/clear`), 'alert cleared'), { name: 'clear' });
  const channels = h('div', { class: 'meta' });
  const history = h('ol', { class: 'history', reversed: true });
  const historyBox = h('details', {}, h('summary', {}, 'history (newest first)'), history);
  let shownEvents = -1;
  const el = h(
    'article',
    { class: 'card', dataset: { alert: uid } },
    h('header', {}, title, state, h('label', { class: 'switch' }, enabled, 'enabled')),
    channels,
    h('div', { class: 'buttons' }, message, fire, clear),
    historyBox,
  );
  let last = '';
  return {
    el,
    update(alert) {
      const key = JSON.stringify(alert);
      if (key === last) return;
      last = key;
      const firing = alert.state === 'firing';
      el.className = `card fam-${!alert.enabled ? 'terminated' : firing ? 'failed' : 'ready'}`;
      title.replaceChildren(alert.name, ' ', h('small', { class: 'muted mono' }, alert.uid));
      state.replaceChildren(h('span', { class: `badge alert-state fam-${firing ? 'failed' : 'ready'}` }, firing ? 'FIRING' : 'CLEARED'));
      enabled.checked = alert.enabled;
      channels.replaceChildren(
        ...[
          alert.enabled ? null : h('span', { class: 'error' }, 'disabled: fire and clear answer 409'),
          ...alert.channels.map((c) => h('span', {}, `${c.type} `, h('b', {}, c.target))),
          fact('last fired', alert.lastTriggered ? dateTime(alert.lastTriggered) : undefined),
          fact('last cleared', alert.lastCleared ? dateTime(alert.lastCleared) : undefined),
        ].filter(Boolean),
      );
      const events = [...alert.history].reverse();
      if (shownEvents !== -1 && events.length > shownEvents) historyBox.open = true;
      shownEvents = events.length;
      history.replaceChildren(
        ...(events.length
          ? events.map((e) =>
              h(
                'li',
                {},
                h('time', { class: 'mono muted' }, dateTime(e.at)),
                h('span', { class: e.action }, e.action === 'fire' ? 'FIRE' : 'CLEAR'),
                e.message ? h('span', { class: 'grow' }, e.message, e.subject ? h('span', { class: 'muted' }, ` — ${e.subject}`) : null) : null,
              ),
            )
          : [h('li', { class: 'empty' }, 'never fired')]),
      );
    },
  };
}

// ---------------------------------------------------------------------------------------
// Annotations
// ---------------------------------------------------------------------------------------

let selectedAnnotation = null;

function renderDomainChoices() {
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
  const steps = [60e3, 5 * 60e3, 15 * 60e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86400e3, 2 * 86400e3, 7 * 86400e3, 14 * 86400e3, 30 * 86400e3, 365 * 86400e3];
  return steps.find((step) => span / step <= 7) ?? steps[steps.length - 1];
}

/** Ranges as bars, points as markers, on lanes so that nothing overlaps; the emulator's now as a line. */
/** Emulated time of the last drawing of the axis. */
let axisDrawnAt = 0;

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
  const ticks = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const label = step >= 86400e3 ? shortDate(t) : step >= 3600e3 && new Date(t).getUTCHours() === 0 ? shortDate(t) : hms(t).slice(0, 5);
    ticks.push(s('g', { class: 'tick' }, s('line', { x1: x(t), x2: x(t), y1: 0, y2: axisY }), s('text', { x: x(t) + 3, y: axisY + 14 }, label)));
  }
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
  const nowLine = now >= from && now <= to
    ? s('g', { class: 'now' }, s('line', { x1: x(now), x2: x(now), y1: 0, y2: axisY }), s('text', { x: Math.min(x(now) + 3, width - 30), y: axisY + 14 }, 'now'))
    : null;
  container.replaceChildren(
    s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${list.length} annotations between ${dateTime(from)} and ${dateTime(to)} UTC` }, ...ticks, nowLine, ...shapes),
  );
}

function annotationForm() {
  return $('#ann-form');
}

function editAnnotation(a) {
  selectedAnnotation = a.id;
  const form = annotationForm();
  form.elements.id.value = String(a.id);
  form.elements.title.value = a.title;
  form.elements.text.value = a.text;
  form.elements.start.value = toLocalInput(a.start);
  form.elements.end.value = a.end === undefined ? '' : toLocalInput(a.end);
  const ids = new Set(a.domains.map((d) => String(d.id)));
  for (const box of form.querySelectorAll('input[name=domainIds]')) box.checked = ids.has(box.value);
  $('#ann-form-title').textContent = `Edit annotation #${a.id}`;
  $('#ann-save').textContent = 'save';
  $('#ann-delete').hidden = false;
  $('#ann-cancel').hidden = false;
  renderAnnotations();
  form.elements.title.focus();
}

function resetAnnotationForm() {
  selectedAnnotation = null;
  const form = annotationForm();
  form.reset();
  form.elements.id.value = '';
  // Before the first poll the emulator's time is not known yet; main() fills it in then.
  form.elements.start.value = model.clock ? toLocalInput(emulatedNow()) : '';
  $('#ann-form-title').textContent = 'Add an annotation';
  $('#ann-save').textContent = 'add';
  $('#ann-delete').hidden = true;
  $('#ann-cancel').hidden = true;
}

async function annotationsChanged() {
  await reloadAnnotations();
  // This page's own change is already on screen: no second read when the journal shows it.
  const marks = await api('GET', `${CONTROL}/journal`, { query: { pathPrefix: `/${ANNOTATIONS}`, limit: 20 } });
  model.annotationMark = marks.entries.find((e) => e.method !== 'GET' && e.status < 400)?.id ?? -1;
}

function deleteAnnotation(a) {
  if (!confirm(`Delete annotation #${a.id} "${a.title}"?`)) return;
  act(async () => {
    await api('DELETE', `${ANNOTATIONS}/${a.id}`);
    if (selectedAnnotation === a.id) resetAnnotationForm();
    await annotationsChanged();
  }, `annotation #${a.id} deleted`);
}

function wireAnnotations() {
  const form = annotationForm();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const f = form.elements;
    const start = fromLocalInput(f.start.value);
    const end = fromLocalInput(f.end.value);
    const domainIds = [...form.querySelectorAll('input[name=domainIds]:checked')].map((i) => Number(i.value));
    const id = f.id.value;
    act(async () => {
      if (id) {
        await api('PUT', `${ANNOTATIONS}/${id}`, { body: { title: f.title.value, text: f.text.value, start, end: end ?? null, domainIds } });
      } else {
        const created = await api('POST', ANNOTATIONS, {
          body: { title: f.title.value, text: f.text.value, start, ...(end !== undefined ? { end } : {}), ...(domainIds.length ? { domainIds } : {}) },
        });
        toast(`annotation #${created.id} added`);
      }
      resetAnnotationForm();
      await annotationsChanged();
    }, id ? `annotation #${id} saved` : undefined);
  });
  $('#ann-now').addEventListener('click', () => {
    form.elements.start.value = toLocalInput(emulatedNow());
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

// ---------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------

let faultsShown = '';
function renderFaults() {
  const key = JSON.stringify(model.faults);
  if (key === faultsShown) return;
  faultsShown = key;
  const body = $('#faults tbody');
  const does = (action) =>
    'status' in action ? `answer ${action.status}` : 'latencyMs' in action ? `+${action.latencyMs} ms` : 'drop the connection';
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
            h('td', {}, button('remove', () => act(() => api('DELETE', `${CONTROL}/faults/${encodeURIComponent(rule.id)}`), `rule ${rule.id} removed`), { class: 'small danger' })),
          ),
        )
      : [h('tr', {}, h('td', { colSpan: 7, class: 'empty' }, 'no fault rule: every request is served normally'))]),
  );
}

function wireFaults() {
  const form = $('#fault-form');
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
    act(() => api('POST', `${CONTROL}/faults`, { body }), (rule) => `fault rule ${rule.id} added`);
  });
  $('#faults-clear').addEventListener('click', () => act(() => api('DELETE', `${CONTROL}/faults`), 'every fault rule removed'));
}

// ---------------------------------------------------------------------------------------
// Journal
// ---------------------------------------------------------------------------------------

let journalShown = '';
let journalNewest = -1;
function renderJournal() {
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

function wireJournal() {
  const form = $('#journal-filter');
  let typing = null;
  form.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(refreshSoon, 250);
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  $('#journal-clear').addEventListener('click', () => act(() => api('DELETE', `${CONTROL}/journal`), 'journal cleared'));
}

// ---------------------------------------------------------------------------------------
// Reset, export, import, session
// ---------------------------------------------------------------------------------------

function wireSession() {
  $('#reset').addEventListener('click', () => {
    if (!confirm('Reset the emulator to its seed? Every change, token, fault rule and journal entry goes.')) return;
    act(async () => {
      const result = await api('POST', `${CONTROL}/reset`);
      forgetEverything();
      // The reset dropped this page's session token; sign in again before reading.
      auth.token = null;
      await signIn();
      return result;
    }, 'reset to the seed');
  });
  $('#export').addEventListener('click', () =>
    act(async () => {
      const state = await api('GET', `${CONTROL}/state`);
      const blob = new Blob([`${JSON.stringify(state, null, 2)}\n`], { type: 'application/json' });
      const link = h('a', { href: URL.createObjectURL(blob), download: `emulator-state-${new Date(Math.floor(emulatedNow())).toISOString().replace(/[:.]/g, '-')}.json` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    }, 'state exported'),
  );
  $('#import').addEventListener('change', async (event) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    let state;
    try {
      state = JSON.parse(await file.text());
    } catch (err) {
      toast(`${file.name} is not JSON: ${err.message}`, 'error');
      return;
    }
    act(async () => {
      const result = await api('PUT', `${CONTROL}/state`, { body: state });
      forgetEverything();
      auth.token = null;
      await signIn();
      return result;
    }, (r) => `imported ${file.name}: ${Object.entries(r.counts).filter(([, n]) => n).map(([k, n]) => `${n} ${k}`).join(', ')}`);
  });
  $('#who').addEventListener('click', async () => {
    if (await askCredentials('', { cancellable: true })) {
      forgetEverything();
      refreshSoon();
    }
  });
}

async function main() {
  wireClock();
  wireAnnotations();
  wireFaults();
  wireJournal();
  wireSession();
  resetAnnotationForm();
  if (auth.token) showUser();
  setInterval(drawClock, 250);
  document.addEventListener('visibilitychange', () => !document.hidden && refreshSoon());
  await tick();
  // The form's default start is the emulator's time, known only after the first poll.
  if (!annotationForm().elements.id.value) annotationForm().elements.start.value = toLocalInput(emulatedNow());
}

main();
