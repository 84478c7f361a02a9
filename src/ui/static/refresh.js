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

/** Starts polling with `fn`, which reads the emulator and draws what it read. */
export function startPolling(fn) {
  poll = fn;
  document.addEventListener('visibilitychange', () => !document.hidden && refreshSoon());
  return tick();
}

export function refreshSoon() {
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
