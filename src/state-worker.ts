import { parentPort } from 'node:worker_threads';
import { FixtureError } from './core/fixtures.js';
import { STATE } from './state.js';
import { readBody, slicesOf, type FolderAnswer, type FolderMessage, type WorkerAnswer, type WorkerSlice } from './world/state-parser.js';

/**
 * The worker thread of world/state-parser.ts, in the emulator's state format (state.ts):
 * reads each body it is sent, one import after another, answers the outcome,
 * and for a valid state then hands the sections over a slice at a time, each when asked
 * ('next'), so that the receiving event loop never takes in more than a slice at once.
 */
const port = parentPort;
if (!port) throw new Error('state-worker.js runs as a worker thread only');

/** The slices of the state read last, until they are all sent. */
let slices: Generator<{ name: string; items: unknown[] }> | undefined;

const send = (message: WorkerAnswer | FolderAnswer | WorkerSlice) => port.postMessage(message);

/** A fixtures folder read here (a reload of WATCH): the report, then the state's slices as for a body. */
async function inspectFolder(message: FolderMessage): Promise<void> {
  let report;
  try {
    report = await STATE.inspect(message.folder, { now: message.now, maxListed: message.maxListed });
  } catch (err) {
    const fixture = err instanceof FixtureError;
    send({ kind: 'error', fixture, message: (err as Error).message, ...(fixture ? { problems: err.problems, unlisted: err.unlisted } : {}) });
    return;
  }
  const { state, problems, warnings, files, ignored, clockFile } = report;
  const about = { problems: { listed: problems.listed, count: problems.count, uncounted: problems.uncounted }, warnings, files, ignored, clockFile };
  if (!state || problems.count) {
    send({ kind: 'folder', ...about });
    return;
  }
  const sections = new Set<string>(STATE.sectionNames);
  const scalars = Object.fromEntries(Object.entries(state).filter(([key]) => !sections.has(key)));
  send({ kind: 'folder', ...about, state: { keys: Object.keys(state), scalars } });
  slices = slicesOf(state, STATE.sectionNames);
}

port.on('message', (message: 'next' | FolderMessage | { body: Uint8Array; where: string; now?: number }) => {
  // Each 'next' is answered by a slice, or null once they are all sent.
  if (message === 'next') {
    const slice = slices?.next().value ?? null;
    if (slice === null) slices = undefined;
    send(slice);
    return;
  }
  slices = undefined;
  if ('folder' in message) {
    void inspectFolder(message);
    return;
  }
  // A body: the worker is kept for the next import once this one is done.
  const { body, where, now } = message;
  let read;
  try {
    read = readBody(Buffer.from(body.buffer, body.byteOffset, body.byteLength), where, STATE.parse, now);
  } catch (err) {
    const fixture = err instanceof FixtureError;
    send({ kind: 'error', fixture, message: (err as Error).message, ...(fixture ? { problems: err.problems, unlisted: err.unlisted } : {}) });
    return;
  }
  if (read.kind !== 'state') {
    send(read);
    return;
  }
  const { state } = read;
  const sections = new Set<string>(STATE.sectionNames);
  const scalars = Object.fromEntries(Object.entries(state).filter(([key]) => !sections.has(key)));
  send({ kind: 'state', keys: Object.keys(state), scalars });
  slices = slicesOf(state, STATE.sectionNames);
});
