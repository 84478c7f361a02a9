// The page's heartbeat: a poll every second, sooner after an action, and the user's actions
// with their outcome reported.
import { ApiFailure } from './api.js';
import { $, notifyOnce, toast } from './dom.js';

const POLL_MS = 1000;

let poll = async () => undefined;
let ticking = false;
let timer = null;
/** Set when a refresh is asked for during a poll: that poll's answers may predate the change. */
let again = false;
let stopped = false;
/** Settles when the poll under way (if any) has ended. */
let current = Promise.resolve();

/** Starts polling with `fn`, which reads the emulator and draws what it read. */
export function startPolling(fn) {
  poll = fn;
  document.addEventListener('visibilitychange', () => !document.hidden && refreshSoon());
  return tick();
}

/**
 * Stops polling; resolves once the poll under way has ended, so that no request of this page
 * reaches the emulator after it (in SANDBOXES=auto, a request re-creates a deleted sandbox).
 */
export function stopPolling() {
  stopped = true;
  clearTimeout(timer);
  return current;
}

export function resumePolling() {
  stopped = false;
  refreshSoon();
}

export function refreshSoon() {
  if (stopped) return;
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

function tick() {
  clearTimeout(timer);
  if (ticking || stopped) return current;
  ticking = true;
  current = pollOnce();
  return current;
}

async function pollOnce() {
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
    if (!stopped) timer = setTimeout(tick, again ? 30 : POLL_MS);
    again = false;
  }
}

/** Runs a user's action, reports a failure the way the emulator worded it, then refreshes. */
export async function act(fn, success) {
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
