import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AlertStore } from '../../src/alerts/store.js';
import { ALERT_HISTORY_LIMIT, type Alert } from '../../src/alerts/schemas.js';
import { stateFileText } from '../../src/world/export-stream.js';
import { T0 } from '../helpers/app.js';

/**
 * The alerts of a snapshot (a state file write, a streamed export) are what the store held at
 * that moment, without their text: every world of a state file is taken at once, and a full
 * history per alert, held as JSON text for each world, made a write of 20 sandboxes peak at
 * tens of MiB above what the file needed (bench/state-file-memory.mjs).
 */

const history = Array.from({ length: ALERT_HISTORY_LIMIT }, (_, i) => ({ action: 'fire' as const, at: T0 - 1_000_000 + i, message: `fire ${i} ${'x'.repeat(200)}`, subject: 's' }));
const full = (): Alert => ({ uid: 'a1', name: 'Full', enabled: true, channels: [{ type: 'email', target: 'ops@example.com' }], state: 'firing', history });

async function drain(pieces: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
}

describe('a snapshot of the alerts', () => {
  it('holds no text of them: each alert as it was, its events shared with the store, not copied', () => {
    const store = new AlertStore({ alerts: [full()] }, new ManualClock(T0));
    const { alerts } = store.snapshot();
    expect(alerts.encoded).toBeFalsy();
    const [taken] = alerts.items as Alert[];
    expect(typeof taken).toBe('object');
    const held = store.get('a1');
    expect(taken).toEqual(held);
    // The events themselves are the store's (never changed once recorded): only the list is copied.
    const inStore = (store as unknown as { alerts: Map<string, Alert> }).alerts.get('a1')!;
    expect(taken.history[0]).toBe(inStore.history[0]);
    expect(taken.history).not.toBe(inStore.history);
  });

  it('is written as the alert stood when it was taken, whatever changes it afterwards', async () => {
    const clock = new ManualClock(T0);
    const store = new AlertStore({ alerts: [full()] }, clock);
    const before = store.get('a1');
    const snapshot = { sections: store.snapshot(), release: () => undefined };
    // A fire on a full history drops its oldest event; a clear and a disable change its fields.
    clock.advance(1000);
    store.fire('a1', { message: 'later' });
    store.clear('a1');
    store.setEnabled('a1', false);
    const text = await drain(stateFileText(snapshot, []));
    expect(JSON.parse(text)).toEqual({ alerts: [before], deliveries: [] });
    expect(text).toBe(`${JSON.stringify({ alerts: [before], deliveries: [] }, null, 2)}\n`);
  });
});
