import { describe, expect, it } from 'vitest';
import { EmulatorClock } from '../../src/core/clock.js';
import { WorldEvents, type EventSink, type EventSource, type SentEvent } from '../../src/world/events.js';

/**
 * The race behind a waitFor that missed a grid's last step on a busy machine: time runs on
 * while the stream writes out what it found, and the timer for the next step was aimed at the
 * first step after *now*. A step that began in between was neither written nor waited for; when
 * it was the last one (CHECKED), nothing ever sent it. Here "real time" is a variable the test
 * moves, so the race happens every time, not one run in three.
 */
describe('WorldEvents: the timer for the next step', () => {
  it('sends a step that began while the previous one was being written out, even when it is the last', async () => {
    let real = 0;
    const clock = new EmulatorClock({ start: 0, scale: 1, source: () => real });
    const steps = [
      { state: 'CHECKING', at: 1000 },
      { state: 'CHECKED', at: 2000 },
    ];
    const source: EventSource = {
      clock,
      transitions(from, to, visit) {
        for (const s of steps) if (s.at >= from && s.at <= to) visit('grid', 101, s.state, s.at, () => undefined);
      },
      // As the world's: from now unless told where to look from.
      nextTransitionAt(after = clock.now()) {
        return steps.find((s) => s.at > after)?.at;
      },
    };
    const events = new WorldEvents(source, { bufferSize: 100, bufferMaxBytes: 1 << 20 });
    const states: string[] = [];
    const sink: EventSink = {
      accepts: () => true,
      send(frame) {
        const data = JSON.parse(/^data: (.*)$/m.exec(String(frame))![1]) as { state: string };
        states.push(data.state);
        // Writing the first step out takes long enough (a busy machine) for the next one to begin.
        if (data.state === 'CHECKING') real = 2500;
      },
      end: () => undefined,
    };
    events.subscribe(sink);
    real = 1000;
    events.poke();
    try {
      for (let i = 0; i < 200 && states.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(states).toEqual(['CHECKING', 'CHECKED']);
    } finally {
      events.close();
    }
  });

  it('waits for the next step when none is due, and sends nothing twice', async () => {
    let real = 0;
    const clock = new EmulatorClock({ start: 0, scale: 1, source: () => real });
    const steps = [{ state: 'CHECKED', at: 5000 }];
    const source: EventSource = {
      clock,
      transitions(from, to, visit) {
        for (const s of steps) if (s.at >= from && s.at <= to) visit('grid', 101, s.state, s.at, () => undefined);
      },
      nextTransitionAt: (after = clock.now()) => steps.find((s) => s.at > after)?.at,
    };
    const events = new WorldEvents(source, { bufferSize: 100, bufferMaxBytes: 1 << 20 });
    const sent: SentEvent[] = [];
    const sink: EventSink = { accepts: () => true, send: (frame) => void sent.push({ frame } as SentEvent), end: () => undefined };
    events.subscribe(sink);
    try {
      await new Promise((r) => setTimeout(r, 20));
      expect(sent).toHaveLength(0);
      // A timer is set for the step ahead (5 s of real time at scale 1): it is waited for, not polled.
      expect(events.scheduled).toBe(1);
      real = 5000;
      events.poke();
      for (let i = 0; i < 200 && sent.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 30));
      expect(sent).toHaveLength(1);
    } finally {
      events.close();
    }
  });
});
