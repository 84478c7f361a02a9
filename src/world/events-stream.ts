import type { EventKind, EventSink, EventType, SentEvent } from './events.js';

/** What a stream writes to: an HTTP response, or any Node writable. */
export interface EventOutput {
  write(chunk: string | Buffer): unknown;
  /** Bytes written but not yet taken by the client (the socket's included, for a response). */
  readonly writableLength: number;
  end(): unknown;
  destroy(): unknown;
}

/** Which events one stream wants: each list absent means all. */
export interface EventFilter {
  kinds?: ReadonlySet<EventKind>;
  ids?: ReadonlySet<string>;
  types?: ReadonlySet<EventType>;
}

/**
 * One open event stream. The kind and id filters apply to events about a resource; an event
 * about the whole world (a reset, the clock) passes them, and only `types` picks among those.
 * A client that reads too slowly is dropped once more than `maxBytes` wait for it: its events
 * are never held without bound. `onEnd` runs once, however the stream ends.
 */
export class EventStream implements EventSink {
  private open = true;
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
    if (this.out.writableLength > this.maxBytes) this.finish(true);
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
