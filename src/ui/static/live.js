// The page's heartbeat: the world's event stream (GET /_emulator/events, text/event-stream),
// read with fetch() so that it carries the admin token like every other call. Each event
// refreshes only what it changed; nothing is read on a timer. An emulator without the stream
// (404) is read every FALLBACK_POLL_MS instead. And the user's actions, with their outcome
// reported.
import { ApiFailure, api, auth, send } from './api.js';
import { $, notifyOnce, toast } from './dom.js';
import { PATHS, urlOf } from './paths.js';

/** Without an event stream on the server: one read of everything this often. */
export const FALLBACK_POLL_MS = 5000;
/** Waits before reconnecting after a lost stream, growing with each failure in a row. */
const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000, 30_000];
/** Events that arrive within this window are handled together. */
const BATCH_MS = 60;
/** The longest SSE block the page holds while waiting for its end; a longer one drops the stream. */
const MAX_BLOCK_CHARS = 4 * 1024 * 1024;

let handlers = { readAll: async () => undefined, onEvents: async () => undefined };
let stopped = false;
/** Aborts the stream's request. */
let streamAbort = null;
/** The id of the last event taken in, sent as Last-Event-ID on a reconnect. */
let lastEventId = null;
let failures = 0;
let reconnectTimer = null;
let fallbackTimer = null;
/** 'stream', 'fallback' (no stream on the server) or 'connecting'. */
let mode = 'connecting';

/** Reads and events waiting to be handled, and the work under way (one at a time). */
let pending = [];
let fullReadAsked = false;
let batchTimer = null;
let working = false;
let current = Promise.resolve();

/** Settles the promise startLive returns, once the first read of everything has been made. */
let firstReadDone = null;

/**
 * Starts the page: opens the event stream, then reads everything once (`readAll`): events
 * that arrive meanwhile wait and go to `onEvents`, in batches, after it. Resolves once that
 * first read is done.
 */
export function startLive(options) {
  handlers = options;
  const first = new Promise((resolve) => {
    firstReadDone = resolve;
  });
  connect();
  return first;
}

/** Until the first read is made, anything that stops the stream from opening reads without it. */
const readIfFirst = () => firstReadDone && refreshSoon();

/**
 * Stops the stream and every read; resolves once the work under way has ended, so that no
 * request of this page reaches the emulator after it (in SANDBOXES=auto, a request re-creates
 * a deleted sandbox).
 */
export function stopLive() {
  stopped = true;
  streamAbort?.abort();
  clearTimeout(reconnectTimer);
  clearTimeout(fallbackTimer);
  clearTimeout(batchTimer);
  return current;
}

export function resumeLive() {
  stopped = false;
  refreshSoon();
  connect();
}

/** Whether the page reads everything on a timer, for want of an event stream on the emulator. */
export const polling = () => mode === 'fallback';

/** Asks for a read of everything soon (after the user's own action, or a change of world). */
export function refreshSoon() {
  fullReadAsked = true;
  schedule();
}

/** Hands events (or a read to make) to the page, batched. */
function schedule() {
  if (stopped || batchTimer !== null) return;
  batchTimer = setTimeout(() => {
    batchTimer = null;
    if (working) return; // runBatch looks again when it ends
    current = runBatch();
  }, BATCH_MS);
}

async function runBatch() {
  working = true;
  try {
    while (!stopped && (fullReadAsked || pending.length)) {
      const full = fullReadAsked;
      const events = pending;
      fullReadAsked = false;
      pending = [];
      try {
        if (full) {
          await handlers.readAll();
          // A read of everything reads the annotations and objects only with the catalogue: their
          // events that came meanwhile are still to be taken (the rest, the read covered).
          const unread = events.filter((e) => /^(annotation|object)\./.test(String(e.type ?? '')));
          if (unread.length) await handlers.onEvents(unread);
        } else await handlers.onEvents(events);
        if (mode !== 'connecting' || full) setLive(true);
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 0) setLive(false);
        else {
          setLive(false, 'error');
          notifyOnce(err instanceof ApiFailure ? err.describe() : String(err?.stack ?? err));
        }
      }
      if (full && firstReadDone) {
        firstReadDone();
        firstReadDone = null;
      }
    }
  } finally {
    working = false;
  }
}

function setLive(ok, text) {
  const el = $('#live');
  const how =
    mode === 'fallback'
      ? `no event stream on this emulator: read every ${FALLBACK_POLL_MS / 1000} s`
      : mode === 'stream'
        ? 'following the event stream'
        : 'connecting to the event stream';
  el.className = `live ${ok ? 'ok' : 'down'}`;
  el.dataset.mode = mode;
  el.title = how;
  el.textContent = text ?? (ok ? (mode === 'fallback' ? 'live (polling)' : 'live') : 'emulator not answering');
}

function reconnectLater() {
  if (stopped) return;
  const wait = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
  failures++;
  clearTimeout(reconnectTimer);
  reconnectTimer = setTimeout(connect, wait);
}

/** Opens the stream; on its end or failure, opens it again after a wait. */
async function connect() {
  if (stopped) return;
  clearTimeout(reconnectTimer);
  streamAbort?.abort();
  const abort = new AbortController();
  streamAbort = abort;
  const headers = { accept: 'text/event-stream' };
  if (auth.admin) headers.authorization = `Bearer ${auth.admin}`;
  if (lastEventId !== null) headers['last-event-id'] = lastEventId;
  let response;
  try {
    response = await send(urlOf(`${PATHS.control}/events`), { headers, cache: 'no-store', signal: abort.signal });
  } catch {
    if (abort.signal.aborted) return;
    mode = 'connecting';
    setLive(false);
    readIfFirst();
    return reconnectLater();
  }
  if (response.status === 404) {
    // An emulator without the event stream: read everything now and then instead.
    await response.body?.cancel().catch(() => undefined);
    mode = 'fallback';
    refreshSoon();
    return pollFallback();
  }
  if (response.status === 401) {
    await response.body?.cancel().catch(() => undefined);
    // A control call asks for the admin token (the page's one dialog for it); then again.
    try {
      await api('GET', `${PATHS.control}/clock`);
    } catch {
      // reported by the next read
    }
    readIfFirst();
    return reconnectLater();
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    mode = 'connecting';
    setLive(false, `event stream: ${response.status}`);
    readIfFirst();
    return reconnectLater();
  }
  const resumed = lastEventId !== null;
  mode = 'stream';
  failures = 0;
  clearTimeout(fallbackTimer);
  if (!firstReadDone) setLive(true);
  // Events missed while away: a resumed stream replays them; a new one cannot, so read all.
  if (!resumed) refreshSoon();
  try {
    await readEvents(response.body, abort.signal);
  } catch {
    // The connection broke: reconnect below.
  }
  if (abort.signal.aborted || stopped) return;
  mode = 'connecting';
  setLive(false, 'reconnecting…');
  reconnectLater();
}

function pollFallback() {
  clearTimeout(fallbackTimer);
  if (stopped) return;
  fallbackTimer = setTimeout(() => {
    if (!document.hidden) refreshSoon();
    pollFallback();
  }, FALLBACK_POLL_MS);
}

/** Reads SSE blocks ("id:", "event:", "data:" lines; a blank line ends each; ":" a comment) until the stream ends. */
async function readEvents(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener('abort', () => reader.cancel().catch(() => undefined), { once: true });
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    // Blocks end with a blank line; CR LF and CR count as line ends too (a CR that ends a
    // chunk waits for the next one, which may start with its LF).
    buffer = buffer.replace(/\r\n|\r(?=[^\n])/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      takeBlock(block);
    }
    if (buffer.length > MAX_BLOCK_CHARS) throw new Error('an event longer than the page takes');
  }
}

/** One SSE block: an event to hand on, or a comment (the heartbeat). */
function takeBlock(block) {
  let id = null;
  let type = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === '') {
      // ": heartbeat <emulated ms>"
      const beat = /^heartbeat\s+(-?\d+)/.exec(value);
      if (beat) pending.push({ type: 'heartbeat', at: Number(beat[1]) });
      continue;
    }
    if (field === 'id') id = value;
    else if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (id !== null) lastEventId = id;
  if (data.length) {
    let parsed;
    try {
      parsed = JSON.parse(data.join('\n'));
    } catch {
      notifyOnce(`the event stream sent an event that is not JSON (${type})`);
      return;
    }
    pending.push({ ...parsed, type: parsed?.type ?? type });
  }
  if (pending.length) schedule();
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
