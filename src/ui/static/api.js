// Talking to the emulator: one request helper that carries the right credentials, and the
// dialogs that ask for them.
import { $, h } from './dom.js';
import { noteNow } from './model.js';
import { PATHS, SANDBOX, defaultUrlOf, isControl, needsSession, urlOf } from './paths.js';

const DEMO_USER = { userName: 'demo@example.com', password: 'demo' };

/**
 * Marks every request of the page, so that the request journal can keep the page's own
 * requests apart from those of the system under test (it hides them unless asked).
 */
export const CLIENT_HEADER = { 'x-emulator-client': 'dashboard' };

/** fetch() with the page's mark; every answer's X-Emulator-Now moves the page's emulated clock on. */
export async function send(url, init = {}) {
  const response = await fetch(url, { ...init, headers: { ...CLIENT_HEADER, ...init.headers } });
  const now = Number(response.headers.get('x-emulator-now'));
  if (response.headers.has('x-emulator-now') && Number.isFinite(now)) noteNow(now);
  return response;
}

export class ApiFailure extends Error {
  constructor(status, message, method, path) {
    super(message);
    this.status = status;
    this.method = method;
    this.path = path;
  }
  describe() {
    return this.status === 0
      ? `${this.method} ${this.path}: ${this.message}`
      : `${this.method} ${this.path} → ${this.status}: ${this.message}`;
  }
}

// Each world has its own sessions, so each keeps its own token in the tab; the admin token is
// one for the whole emulator.
const sessionKey = (key) => (SANDBOX === null ? `ce.${key}` : `ce.sandbox.${SANDBOX}.${key}`);

export const auth = {
  token: sessionStorage.getItem(sessionKey('token')),
  user: sessionStorage.getItem(sessionKey('user')) || null,
  /** Kept in memory only, to sign in again after a reset drops the session. */
  credentials: DEMO_USER,
  admin: sessionStorage.getItem('ce.admin'),
};

/**
 * One request to an emulator path ("/_emulator/clock"), in the world this page drives, or in
 * the default one with `inDefault` (where sandboxes are managed). Control calls carry the
 * admin token once one was asked for; interface calls carry X-Auth-Token. A 401 asks for what
 * is missing (once, shared by every caller) and the call is tried again.
 */
export async function api(method, path, { body, query, inDefault = false, retried = false } = {}) {
  const url = inDefault ? defaultUrlOf(path) : urlOf(path);
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
    response = await send(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
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
      return api(method, path, { body, query, inDefault, retried: true });
    }
    if (needsSession(path)) {
      auth.token = null;
      await signIn();
      return api(method, path, { body, query, inDefault, retried: true });
    }
  }
  throw new ApiFailure(response.status, message, method, path);
}

/** `user` null: signed in with a token typed in, whose user the page does not know. */
function rememberSession(token, user) {
  auth.token = token;
  auth.user = user;
  sessionStorage.setItem(sessionKey('token'), token);
  sessionStorage.setItem(sessionKey('user'), user ?? '');
  showUser();
}

export function showUser() {
  $('#who').textContent = auth.user ? `signed in as ${auth.user}` : 'signed in with a session token';
}

/** After a reset or an import, which drop every session: the next call signs in again. */
export function forgetSession() {
  auth.token = null;
}

/**
 * A token of the seed that never expires, for the user the page is signed in as (from GET
 * /_emulator/users); undefined when the world has none. Unlike a session the page logged in
 * to, it is there again after a reset or a timeline's seek, which rebuild the world from the seed.
 */
export async function seedTokenOfUser() {
  const list = await offeredUsers().catch(() => null);
  return list?.tokens?.find((t) => t.userName === auth.user)?.token;
}

/**
 * Signs the page in with the seed's token of its user when there is one (see seedTokenOfUser):
 * the requests it makes while a timeline records then carry a token that a seek keeps. True
 * when the page now uses such a token.
 */
export async function useSeedToken() {
  const token = await seedTokenOfUser();
  if (token === undefined) return false;
  if (auth.token !== token) rememberSession(token, auth.user);
  return true;
}

/**
 * Whom this world's seed lets sign in (GET /_emulator/users): asked once, before the first
 * log-in, so that a seed without the demo user is not tried with it (a 401 on every load);
 * null when the emulator does not say (an older one).
 */
let offered;
async function offeredUsers() {
  if (offered === undefined) {
    try {
      offered = await api('GET', `${PATHS.control}/users`);
    } catch (err) {
      if (!(err instanceof ApiFailure) || err.status === 0) throw err;
      offered = null;
    }
  }
  return offered;
}

/** The demo user when the world has it, else its first user; undefined when it has none. */
function firstChoice(list) {
  const user = list.users.find((u) => u.userName === DEMO_USER.userName) ?? list.users[0];
  return user && { userName: user.userName, password: user.password };
}

let signingIn = null;
/**
 * Gets a session token: with the remembered credentials (at first, the demo user or else the
 * first user of the world, as GET /_emulator/users lists them), else by asking.
 */
export function signIn() {
  signingIn ??= (async () => {
    try {
      if (auth.credentials === DEMO_USER) {
        const list = await offeredUsers();
        if (list) auth.credentials = firstChoice(list) ?? null;
      }
      if (auth.credentials) {
        try {
          const { token } = await api('PUT', `${PATHS.repository}/Tokens`, { body: auth.credentials });
          return rememberSession(token, auth.credentials.userName);
        } catch (err) {
          if (!(err instanceof ApiFailure) || err.status !== 401) throw err;
          auth.credentials = null;
          // The world changed under the page (an import): whom it offers now.
          offered = undefined;
          await offeredUsers().catch(() => undefined);
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
 * `cancellable` one (or pressed its [data-cancel] button). Without a token the page can do
 * nothing, so the others cannot be escaped.
 */
export function dialogUntil(dialog, form, errorEl, message, submit, { cancellable = false } = {}) {
  return new Promise((resolve) => {
    errorEl.hidden = !message;
    errorEl.textContent = message;
    const cancelButton = form.querySelector('[data-cancel]');
    const finish = (accepted) => {
      form.removeEventListener('submit', onSubmit);
      dialog.removeEventListener('cancel', onCancel);
      cancelButton?.removeEventListener('click', onCancelButton);
      dialog.close();
      resolve(accepted);
    };
    const onCancelButton = () => cancellable && finish(false);
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
    cancelButton?.addEventListener('click', onCancelButton);
    if (!dialog.open) dialog.showModal();
    form.querySelector('input')?.focus();
  });
}

/** The world's users and never-expiring tokens as buttons that fill the sign-in form and submit it. */
function offerChoices(form) {
  const box = $('#login-offered');
  const list = offered;
  const choose = (fields) => () => {
    for (const name of ['userName', 'password', 'token']) form.elements[name].value = fields[name] ?? '';
    form.requestSubmit();
  };
  const buttons = [
    ...(list?.users ?? []).map((u) => h('button', { type: 'button', class: 'small', dataset: { user: u.userName }, onclick: choose({ userName: u.userName, password: u.password }) }, u.userName)),
    ...(list?.tokens ?? []).map((t) => h('button', { type: 'button', class: 'small', dataset: { token: t.token }, title: `a session of ${t.userName}`, onclick: choose({ token: t.token }) }, `token ${t.token}`)),
  ];
  box.hidden = buttons.length === 0;
  box.querySelector('.buttons').replaceChildren(...buttons);
}

/** Asks for a user name and password, or a session token; resolves true once signed in. */
export function askCredentials(message, options) {
  const dialog = $('#login');
  const form = $('#login-form');
  offerChoices(form);
  return dialogUntil(dialog, form, $('#login-error'), message, async (data) => {
    const token = String(data.get('token') ?? '').trim();
    const userName = String(data.get('userName') ?? '').trim();
    const password = String(data.get('password') ?? '');
    if (token) {
      // A token is checked with a cheap authenticated read.
      const response = await send(urlOf(`${PATHS.repository}/Objects/domain?name=`), { headers: { 'x-auth-token': token } }).catch(() => null);
      if (!response?.ok) return 'that token is not valid';
      auth.credentials = null;
      rememberSession(token, null);
      return undefined;
    }
    if (!userName) return 'give a user name and password, or a token';
    const response = await send(urlOf(`${PATHS.repository}/Tokens`), {
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
    const response = await send(urlOf(`${PATHS.control}/clock`), { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
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
