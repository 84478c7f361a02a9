import type { EventKind, EventType } from './event-types.js';
import type { EventSink, SentEvent } from './events.js';

/** What a stream writes to: an HTTP response, or any Node writable. */
export interface EventOutput {
  write(chunk: string | Buffer): unknown;
  /** Bytes written but not yet taken by the client (the socket's included, for a response). */
  readonly writableLength: number;
  end(): unknown;
  destroy(): unknown;
  /** Node's writable cork and uncork: writes in between go out together. */
  cork?(): void;
  uncork?(): void;
}

/** Which events one stream wants: each list absent means all. */
export interface EventFilter {
  kinds?: ReadonlySet<EventKind>;
  ids?: ReadonlySet<string>;
  types?: ReadonlySet<EventType>;
}

/**
 * What a resume sends of the events after the client's id: the newest that fit in `budget`
 * bytes. `cut` says that older ones were left out (the client is then told it missed events,
 * as when the buffer no longer holds them). The frames are summed, never written, to decide:
 * a replay written out past the client's bound would end the stream before its first byte.
 */
export function replayWithin(replay: readonly SentEvent[], budget: number): { cut: boolean; events: readonly SentEvent[] } {
  let bytes = 0;
  let first = replay.length;
  while (first > 0 && bytes + replay[first - 1].frame.byteLength <= budget) bytes += replay[--first].frame.byteLength;
  return first === 0 ? { cut: false, events: replay } : { cut: true, events: replay.slice(first) };
}

/**
 * One open event stream. The kind and id filters apply to events about a resource; an event
 * about the whole world (a reset, the clock) passes them, and only `types` picks among those.
 * A client that reads too slowly is dropped once more than `maxBytes` wait for it: its events
 * are never held without bound. `onEnd` runs once, however the stream ends.
 */
/** Bytes held back in one slice before they are let go: a slice's writes are batched, never hoarded. */
const HOLD_BYTES = 64 * 1024;

export class EventStream implements EventSink {
  private open = true;
  /** Bytes written since hold(), when holding; -1 when not. */
  private held = -1;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: EventOutput,
    private readonly filter: EventFilter,
    private readonly maxBytes: number,
    private readonly onEnd: (dropped: boolean) => void,
  ) {}

  get isOpen(): boolean {
    return this.open;
  }

  accepts(event: SentEvent): boolean {
    const { kinds, ids, types } = this.filter;
    if (types && !types.has(event.type)) return false;
    if (event.kind === undefined) return true;
    if (kinds && !kinds.has(event.kind)) return false;
    return !ids || (event.resourceId !== undefined && ids.has(event.resourceId));
  }

  send(frame: string | Buffer): void {
    if (!this.open) return;
    this.out.write(frame);
    if (this.held >= 0 && (this.held += frame.length) > HOLD_BYTES) {
      this.out.uncork?.();
      this.out.cork?.();
      this.held = 0;
    }
    // What this stream holds back itself in a slice is not the client's delay.
    if (this.out.writableLength - Math.max(0, this.held) > this.maxBytes) this.finish(true);
  }

  hold(): void {
    if (!this.open || this.held >= 0) return;
    this.out.cork?.();
    this.held = 0;
  }

  release(): void {
    if (this.held < 0) return;
    this.held = -1;
    if (this.open) this.out.uncork?.();
  }

  /** An SSE comment every `ms` (real time), so that proxies keep an idle stream open; 0 sends none. */
  beat(ms: number, text: () => string): void {
    if (ms <= 0 || !this.open) return;
    this.heartbeat = setInterval(() => this.send(`: heartbeat ${text()}\n\n`), ms);
    this.heartbeat.unref?.();
  }

  end(): void {
    this.finish(false);
  }

  /** The client went away. */
  closed(): void {
    if (!this.open) return;
    this.open = false;
    clearInterval(this.heartbeat);
    this.onEnd(false);
  }

  private finish(dropped: boolean): void {
    if (!this.open) return;
    this.open = false;
    clearInterval(this.heartbeat);
    if (dropped) this.out.destroy();
    else this.out.end();
    this.onEnd(dropped);
  }
}
