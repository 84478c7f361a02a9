import { stopwatch, type ControllableClock } from '../core/clock.js';
import type { EventKind, EventType } from './event-types.js';

/**
 * The world's changes as events, for the event stream (GET /_emulator/events). Lifecycles stay
 * lazy: nothing here runs while nobody listens. While someone does, the transitions come from
 * the schedules themselves: every step that began between the last instant looked at and now,
 * of every resource, in time order (core/lifecycle.ts stepsBetween), whether time got there
 * by running, sped up, or by an advance. One timer waits for the next step (real time =
 * emulated distance / scale); an advance, a change of pace or a reset looks again at once.
 * Events are written out in slices, so an advance over thousands of steps never holds the
 * event loop for long.
 */

/** The lifecycle kinds (core/interface.ts Timed.kinds) by the names the stream gives them. */
const KIND_NAMES: Readonly<Record<string, EventKind>> = {
  grid: 'grid',
  cloudServer: 'server',
  rsdb: 'rsdb',
  environment: 'environment',
  compositionInstance: 'instance',
};

/**
 * Steps that are changes with a type of their own: an alert's threshold rule fires and clears
 * it as a call does, so the stream sends alert.fired and alert.cleared, with the alert (less its
 * history) as `view` and the fire or clear recorded as `entry` (the store's viewAt answers both).
 */
const STEP_EVENTS: Readonly<Record<string, Readonly<Record<string, EventType>>>> = {
  alert: { firing: 'alert.fired', cleared: 'alert.cleared' },
};

/** A world event as recorded, before its id. */
export interface EventInput {
  type: EventType;
  /** Emulated time; now when left out. */
  at?: number;
  kind?: EventKind;
  resourceId?: string | number;
  state?: string;
  view?: unknown;
  /** More fields of the event's data (clock.changed: rate and frozen). */
  extra?: Record<string, unknown>;
}

/** An event as the buffer keeps it and every stream sends it: its frame written out once, as bytes. */
export interface SentEvent {
  id: number;
  type: EventType;
  kind?: EventKind;
  resourceId?: string;
  /** The same bytes go to every stream: encoded once, not once per stream. */
  frame: Buffer;
}

/** One open stream, as the world sees it. */
export interface EventSink {
  accepts(event: SentEvent): boolean;
  /** Writes the frame; a sink that cannot keep up ends itself (and unsubscribes). */
  send(frame: string | Buffer): void;
  end(): void;
  /** Around one slice of events: what is sent between them goes out in one write. */
  hold?(): void;
  release?(): void;
}

/** How a resource's view at an instant is read, from the store the step was found in. */
export type ViewOf = (kind: string, id: string | number, at: number) => unknown;

/** What the world hands its events: its clock and its lifecycles. */
export interface EventSource {
  readonly clock: ControllableClock;
  /** Every step of every lifecycle that begins in [from, to]. */
  transitions(from: number, to: number, visit: (kind: string, id: string | number, state: string, at: number, viewOf: ViewOf) => void): void;
  /** The first step of any lifecycle after `after` (or other work the world has due then: see wake). */
  nextTransitionAt(after: number): number | undefined;
  /**
   * Carries out the work due by now that the stream's timer found and no lifecycle step
   * describes (a timeline's steps, which are requests): undefined when there is none, else
   * settled when it is done. The stream looks again then, and sets no timer meanwhile.
   */
  wake?(): Promise<unknown> | undefined;
}

export interface EventLimits {
  /** EVENTS_BUFFER_SIZE: events kept for a resume. */
  bufferSize: number;
  /** EVENTS_BUFFER_MAX_BYTES: bytes of those events at most. */
  bufferMaxBytes: number;
}

type Pending =
  | { step: true; kind: string; id: string | number; state: string; at: number; viewOf: ViewOf }
  | { step?: undefined; input: EventInput & { at: number } };

/**
 * The most bytes one event's frame takes with its view: a bigger one (a long annotation, a
 * fire's long message) is sent without `view` and `entry`, with `viewOmitted: true`, so that
 * no one change is more than a stream can hold, nor copied to every stream whole.
 */
export const EVENT_VIEW_MAX_BYTES = 64 * 1024;

/** How long one slice of writing may hold the event loop, in real ms. */
const SLICE_MS = 8;
/** The longest wait setTimeout takes. */
const LONGEST_TIMER = 2 ** 31 - 1;

/** The frame of an event: `id`, `event` and one `data` line of JSON. */
export function frameOf(id: number | undefined, type: string, data: object): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class WorldEvents {
  private readonly sinks = new Set<EventSink>();
  /** The last events, oldest first, from `head` on. */
  private buffer: SentEvent[] = [];
  private head = 0;
  private bufferBytes = 0;
  private nextId = 1;
  /** Events after this id were not recorded, because nobody listened. */
  private lastLostId = 0;
  /** Steps up to this instant have been looked at; undefined before anyone listened. */
  private watermark: number | undefined;
  /** The steps found at the watermark itself, so that a step added there later is still found once. */
  private boundary = new Set<string>();
  private readonly queue: Array<Pending | undefined> = [];
  private queueHead = 0;
  private draining: NodeJS.Immediate | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The source's work that the timer woke (wake) is under way. */
  private waking = false;
  private lookAgain = false;
  private unwatchClock: (() => void) | undefined;

  constructor(
    private readonly source: EventSource,
    private readonly limits: EventLimits,
  ) {}

  /** Whether any stream is open on this world (the only question a request asks, and only one that changed something). */
  get listening(): boolean {
    return this.sinks.size > 0;
  }

  get listeners(): number {
    return this.sinks.size;
  }

  /** Timers and slices scheduled now: none while nobody listens. */
  get scheduled(): number {
    return (this.timer ? 1 : 0) + (this.draining ? 1 : 0);
  }

  /** The id of the last event recorded (0 before any). */
  get lastId(): number {
    return this.nextId - 1;
  }

  /**
   * Opens a stream. With `resumeFrom` (a Last-Event-ID), the events after it that the buffer
   * still holds are handed back to be sent first; `missed` says that some are gone.
   */
  subscribe(sink: EventSink, resumeFrom?: number): { missed: boolean; replay: SentEvent[] } {
    if (this.sinks.size === 0) {
      this.unwatchClock = this.source.clock.watch?.(() => this.clockChanged());
      // A fresh stream starts from now; a resumed one also gets the steps taken since the last one closed.
      if (resumeFrom === undefined || this.watermark === undefined) this.rebase();
    }
    let missed = false;
    const replay: SentEvent[] = [];
    if (resumeFrom !== undefined) {
      const oldest = this.head < this.buffer.length ? this.buffer[this.head].id : this.nextId;
      missed = resumeFrom > this.lastId || resumeFrom < oldest - 1 || resumeFrom <= this.lastLostId;
      for (let i = this.head; i < this.buffer.length; i++) {
        const event = this.buffer[i];
        if (event.id > resumeFrom && sink.accepts(event)) replay.push(event);
      }
    }
    this.sinks.add(sink);
    this.poke();
    return { missed, replay };
  }

  unsubscribe(sink: EventSink): void {
    if (!this.sinks.delete(sink) || this.sinks.size > 0) return;
    // Nobody listens: no timer, no clock watch. What is queued is still written to the buffer.
    clearTimeout(this.timer);
    this.timer = undefined;
    this.unwatchClock?.();
    this.unwatchClock = undefined;
  }

  /** Something may have changed (a request that was not a read): look again once this turn is over. */
  poke(): void {
    if (this.sinks.size === 0) return;
    this.lookAgain = true;
    this.scheduleDrain();
  }

  /** A change that is not a step of a lifecycle. Unrecorded (and so missed by a later resume) while nobody listens. */
  record(input: EventInput): void {
    if (this.sinks.size === 0) {
      this.lastLostId = this.nextId - 1;
      return;
    }
    const at = input.at ?? this.source.clock.now();
    // What came due before it goes first, so that the events read in time order.
    this.collect(at);
    this.queue.push({ input: { ...input, at } });
    this.scheduleDrain();
  }

  /** Before the stores are replaced (reset, import): the old stores' steps up to now. */
  beforeReplace(): void {
    if (this.sinks.size > 0) this.collect(this.source.clock.now());
  }

  /** The stores were replaced: their history is not news; the event says what happened. */
  replaced(type: 'world.reset' | 'world.imported' | 'world.reloaded'): void {
    if (this.watermark !== undefined) this.rebase();
    this.record({ type });
  }

  /** Ends every stream (the app closes, the sandbox is deleted). */
  close(): void {
    for (const sink of [...this.sinks]) sink.end();
    this.sinks.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.unwatchClock?.();
    this.unwatchClock = undefined;
  }

  private clockChanged(): void {
    if (this.sinks.size === 0) return;
    const status = this.source.clock.status();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.collect(status.now);
    const last = this.queue[this.queue.length - 1];
    const input: EventInput & { at: number } = {
      type: 'clock.changed',
      at: status.now,
      view: status,
      extra: { rate: status.scale, frozen: status.frozen },
    };
    // Several changes in one go (a PUT of scale and frozen, a reset) make one event.
    if (this.queue.length > this.queueHead && last && !last.step && last.input.type === 'clock.changed') last.input = input;
    else this.queue.push({ input });
    this.scheduleDrain();
  }

  /** From now on, steps are looked at from now; those already begun at this very instant are not news. */
  private rebase(): void {
    const now = this.source.clock.now();
    this.watermark = now;
    this.boundary = new Set();
    this.source.transitions(now, now, (kind, id, state, at) => this.boundary.add(keyOf(kind, id, state, at)));
  }

  /** Queues every step that began since the watermark, up to `to`, in time order. */
  private collect(to: number): void {
    const from = this.watermark;
    if (from === undefined || to < from) return;
    const found: Pending[] = [];
    const boundary = new Set<string>();
    this.source.transitions(from, to, (kind, id, state, at, viewOf) => {
      if (at === from || at === to) {
        const key = keyOf(kind, id, state, at);
        if (at === to) boundary.add(key);
        if (at === from && this.boundary.has(key)) return;
      }
      found.push({ step: true, kind, id, state, at, viewOf });
    });
    this.watermark = to;
    this.boundary = boundary;
    // Stable: steps of the same instant keep the order of the interfaces and of their resources.
    found.sort((a, b) => (a as { at: number }).at - (b as { at: number }).at);
    for (const item of found) this.queue.push(item);
  }

  private scheduleDrain(): void {
    this.draining ??= setImmediate(this.drain);
  }

  /** Writes the queue out in slices of at most SLICE_MS, then waits for the next step. */
  private readonly drain = (): void => {
    this.draining = undefined;
    if (this.lookAgain) {
      this.lookAgain = false;
      this.collect(this.source.clock.now());
    }
    const started = stopwatch();
    for (const sink of this.sinks) sink.hold?.();
    while (this.queueHead < this.queue.length) {
      const item = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = undefined;
      this.emit(item);
      if (stopwatch() - started > SLICE_MS) break;
    }
    for (const sink of this.sinks) sink.release?.();
    if (this.queueHead < this.queue.length) {
      this.scheduleDrain();
      return;
    }
    this.queue.length = 0;
    this.queueHead = 0;
    this.scheduleTimer();
  };

  private emit(item: Pending): void {
    const id = this.nextId++;
    let data: Record<string, unknown>;
    let kind: EventKind | undefined;
    let resourceId: string | undefined;
    let type: EventType;
    if (item.step) {
      const typed = STEP_EVENTS[item.kind]?.[item.state];
      type = typed ?? 'transition';
      kind = KIND_NAMES[item.kind] ?? (item.kind as EventKind);
      resourceId = String(item.id);
      const view = item.viewOf(item.kind, item.id, item.at);
      const change = view as { alert: unknown; entry: unknown } | undefined;
      data = typed
        ? { id, type, at: item.at, kind, resourceId: item.id, ...(change !== undefined ? { view: change.alert, entry: change.entry } : {}) }
        : { id, type, at: item.at, kind, resourceId: item.id, state: item.state, ...(view !== undefined ? { view } : {}) };
    } else {
      const { input } = item;
      type = input.type;
      kind = input.kind;
      resourceId = input.resourceId === undefined ? undefined : String(input.resourceId);
      data = {
        id,
        type,
        at: input.at,
        ...(kind !== undefined ? { kind } : {}),
        ...(input.resourceId !== undefined ? { resourceId: input.resourceId } : {}),
        ...(input.state !== undefined ? { state: input.state } : {}),
        ...(input.view !== undefined ? { view: input.view } : {}),
        ...input.extra,
      };
    }
    let frame = Buffer.from(frameOf(id, type, data));
    if (frame.byteLength > EVENT_VIEW_MAX_BYTES && ('view' in data || 'entry' in data)) {
      // What the change left behind is read from the resource itself; the event says that it happened.
      const { view: _view, entry: _entry, ...rest } = data;
      frame = Buffer.from(frameOf(id, type, { ...rest, viewOmitted: true }));
    }
    const event: SentEvent = { id, type, frame, ...(kind ? { kind } : {}), ...(resourceId !== undefined ? { resourceId } : {}) };
    this.keep(event);
    for (const sink of this.sinks) if (sink.accepts(event)) sink.send(event.frame);
  }

  /** Into the buffer; the oldest make room (the last one always stays, unless EVENTS_BUFFER_SIZE=0 keeps none). */
  private keep(event: SentEvent): void {
    const { bufferSize, bufferMaxBytes } = this.limits;
    if (bufferSize === 0) return;
    this.buffer.push(event);
    this.bufferBytes += event.frame.byteLength;
    while (this.buffer.length - this.head > 1 && (this.buffer.length - this.head > bufferSize || this.bufferBytes > bufferMaxBytes)) {
      this.bufferBytes -= this.buffer[this.head].frame.byteLength;
      this.head++;
    }
    // Dropped entries are cut off the array now and then, not one by one.
    if (this.head > 1024 && this.head * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * One timer for the next step, while someone listens and time runs. The next step is the
   * first after the watermark, not after now: time runs on while the queue is written out, and
   * a step that began since the last look (between that look and this call) is already due.
   * Looking from now instead skipped it, and with it every later event until something else
   * poked the stream (a waitFor on a sped-up clock then waited forever on a busy machine).
   */
  private scheduleTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sinks.size === 0 || this.waking) return;
    const { now, scale, frozen } = this.source.clock.status();
    if (frozen || scale <= 0) return;
    const next = this.source.nextTransitionAt(Math.min(this.watermark ?? now, now));
    if (next === undefined) return;
    const wait = Math.min(LONGEST_TIMER, Math.max(0, Math.ceil((next - now) / scale)));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const waking = this.source.wake?.();
      if (!waking) return this.poke();
      this.waking = true;
      void waking
        .catch(() => undefined)
        .then(() => {
          this.waking = false;
          this.poke();
        });
    }, wait);
    this.timer.unref?.();
  }
}

function keyOf(kind: string, id: string | number, state: string, at: number): string {
  return `${kind}\u0000${id}\u0000${state}\u0000${at}`;
}
