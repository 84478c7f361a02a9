import { wallClock } from './clock.js';

/** How many keys a counter set remembers before it forgets the least recently used one. */
export const RATE_LIMIT_KEYS = 10_000;

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

/**
 * Fixed-window request counters per key (a token, an alert uid), shared by the annotation
 * and alert interfaces.
 *
 * Windows run on real time, not on the emulator's clock: a rate limit protects against how
 * fast a client really calls, and `Retry-After` tells it how many real seconds to wait.
 * Freezing or fast-forwarding emulated time must not lock a client out or let it through.
 *
 * Memory is bounded: past `capacity` keys the least recently used key is forgotten (a Map
 * iterates in insertion order, and every hit re-inserts its key at the end).
 */
export class RateCounters {
  private readonly windows = new Map<string, { count: number; startedAt: number }>();
  /**
   * The key hit last, which is the last in the map's order: hitting it again needs no move to
   * the end (a delete and a set, which cost a write more than the rest of the count).
   */
  private newest: string | undefined;

  constructor(
    private readonly capacity = RATE_LIMIT_KEYS,
    private readonly now: () => number = wallClock,
  ) {}

  /** Counts one request for `key` and reports its window. */
  hit(key: string, windowMs: number): WindowCount {
    const now = this.now();
    let window = this.windows.get(key);
    if (window === undefined) {
      window = { count: 0, startedAt: now };
      this.windows.set(key, window);
      if (this.windows.size > this.capacity) this.windows.delete(this.windows.keys().next().value as string);
    } else if (key !== this.newest) {
      this.windows.delete(key);
      this.windows.set(key, window);
    }
    this.newest = key;
    if (now - window.startedAt >= windowMs) {
      window.count = 0;
      window.startedAt = now;
    }
    window.count++;
    return { current: window.count, ttl: window.startedAt + windowMs - now };
  }

  /** The window of `key` without counting a request. */
  peek(key: string, windowMs: number): WindowCount {
    const now = this.now();
    const window = this.windows.get(key);
    if (!window || now - window.startedAt >= windowMs) return { current: 0, ttl: 0 };
    return { current: window.count, ttl: window.startedAt + windowMs - now };
  }

  clear(): void {
    this.windows.clear();
    this.newest = undefined;
  }

  get size(): number {
    return this.windows.size;
  }
}

/** "60000" -> "1 minute", "1500" -> "1500 ms" */
export function durationText(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (ms % 3_600_000 === 0) return unit(ms / 3_600_000, 'hour');
  if (ms % 60_000 === 0) return unit(ms / 60_000, 'minute');
  if (ms % 1000 === 0) return unit(ms / 1000, 'second');
  return `${ms} ms`;
}

