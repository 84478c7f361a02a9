// The sandbox picker in the top bar: which world this page drives, the others to switch to,
// and making and deleting them. Sandboxes are managed in the default world's control API,
// whichever world the page drives.
import { ApiFailure, api, dialogUntil } from './api.js';
import { $, h, toast } from './dom.js';
import { sandboxNameProblem } from './base.js';
import { PATHS, SANDBOX, SANDBOXES, pageUrlOf } from './paths.js';
import { resumeLive, stopLive } from './live.js';

/** Set when the list must be read again: at first, and when the event stream says a sandbox came or went. */
let stale = true;
let listing = null;
/** The last answer of GET /_emulator/sandboxes. */
let known = null;
/** The options last drawn, so that a read does not redraw a list the user may have open. */
let drawn = '';

const managed = (name = '') => `${PATHS.control}/sandboxes${name ? `/${name}` : ''}`;

export function wireSandboxes() {
  document.title = `${SANDBOX ?? 'default'} · cloud-emulator dashboard`;
  const select = $('#sandbox-select');
  select.classList.toggle('sandboxed', SANDBOX !== null);
  $('#sandbox-delete').hidden = SANDBOX === null;
  renderSandboxes();
  select.addEventListener('focus', () => readSandboxes().catch(() => undefined));
  select.addEventListener('change', () => location.assign(pageUrlOf(select.value || null)));
  $('#sandbox-new').addEventListener('click', createSandbox);
  $('#sandbox-delete').addEventListener('click', deleteSandbox);
  $('#sandbox-form input[name=name]').addEventListener('input', (event) => {
    const text = event.target.value.trim();
    event.target.setCustomValidity(text === '' ? '' : (sandboxNameProblem(text, SANDBOXES.name, SANDBOXES.rule) ?? ''));
  });
}

/**
 * Reads the list when it may have changed. Sandboxes come and go rarely: the list is read at
 * first, when the user opens it, and when the default world's event stream reports a sandbox
 * created or deleted (a page in a sandbox hears of those only when the list is opened).
 */
export async function maybeReadSandboxes() {
  if (!stale) return;
  await readSandboxes();
}

/** A sandbox.created or sandbox.deleted event: the list is read again with the next batch. */
export function sandboxesChanged() {
  stale = true;
}

function readSandboxes() {
  // A failing read is tried again at the next refresh, not at once.
  stale = false;
  listing ??= api('GET', managed(), { inDefault: true })
    .then((list) => {
      known = list;
      renderSandboxes();
    })
    .finally(() => {
      listing = null;
    });
  return listing;
}

function renderSandboxes() {
  // With SANDBOXES=off there is one world only: nothing to pick.
  $('#sandbox-picker').hidden = known?.mode === 'off';
  const names = (known?.sandboxes ?? []).map((s) => s.name);
  if (SANDBOX !== null && !names.includes(SANDBOX)) names.push(SANDBOX);
  names.sort();
  const select = $('#sandbox-select');
  if (known) {
    select.title = `the world this page shows and steers: ${known.sandboxes.length} of at most ${known.max} sandboxes (SANDBOXES=${known.mode}), each under ${SANDBOXES.prefix}<name>/`;
  }
  const signature = names.join('/');
  if (signature === drawn && select.options.length > 0) return;
  drawn = signature;
  select.replaceChildren(
    h('option', { value: '' }, 'default'),
    // A sandbox may be called "default" through the API; the picker keeps it apart from the default world.
    ...names.map((name) => h('option', { value: name }, name === 'default' ? `${SANDBOXES.prefix}default` : name)),
  );
  select.value = SANDBOX ?? '';
}

async function createSandbox() {
  const form = $('#sandbox-form');
  form.reset();
  let made = null;
  const accepted = await dialogUntil($('#sandbox-dialog'), form, $('#sandbox-error'), '', async (data) => {
    const name = String(data.get('name') ?? '').trim();
    const problem = sandboxNameProblem(name, SANDBOXES.name, SANDBOXES.rule);
    if (problem) return problem;
    try {
      // PUT replaces a sandbox that exists, world and all: look first, so that "new" never wipes one.
      const existing = await api('GET', managed(name), { inDefault: true }).catch((err) => {
        if (err instanceof ApiFailure && err.status === 404) return null;
        throw err;
      });
      if (existing) return `sandbox '${name}' exists already: choose it in the list`;
      await api('PUT', managed(name), { inDefault: true });
    } catch (err) {
      return err instanceof ApiFailure ? `${err.message} (${err.status || 'no answer'})` : String(err?.message ?? err);
    }
    made = name;
    return undefined;
  }, { cancellable: true });
  if (accepted && made !== null) location.assign(pageUrlOf(made));
}

async function deleteSandbox() {
  if (SANDBOX === null) return;
  if (!confirm(`Delete sandbox '${SANDBOX}'? Its whole world goes: resources, clock, tokens, fault rules and journal. The page goes back to the default world.`)) return;
  // A request of this page after the delete would, with SANDBOXES=auto, make the sandbox again.
  await stopLive();
  try {
    await api('DELETE', managed(SANDBOX), { inDefault: true });
  } catch (err) {
    // Someone else deleted it first: the outcome is the same.
    if (!(err instanceof ApiFailure && err.status === 404)) {
      toast(err instanceof ApiFailure ? err.describe() : String(err?.message ?? err), 'error');
      resumeLive();
      return;
    }
  }
  location.assign(pageUrlOf(null));
}
