import { Type, type Static } from '@sinclair/typebox';

/**
 * The emulator's sense of time. Everything that needs "now" asks a Clock; this is the only
 * module allowed to read the wall clock, so a test or the control API can move time for
 * every lifecycle at once.
 */
export interface Clock {
  /**
   * Emulated time, epoch milliseconds. Never decreases while a world runs; only a world being
   * rebuilt (a reset to real time, a state loaded with its own clock) sets it back.
   */
  now(): number;
}

/** What a clock says of itself; the control API answers it, with the next transition added. */
export const ClockStatusSchema = Type.Object({
  now: Type.Integer({ description: 'emulated time, epoch ms' }),
  iso: Type.String({ description: 'the same instant in ISO 8601' }),
  scale: Type.Number({ description: 'emulated ms per real ms' }),
  frozen: Type.Boolean(),
});
export type ClockStatus = Static<typeof ClockStatusSchema>;


/** A clock whose time can be advanced, sped up, slowed down or frozen. */
export interface ControllableClock extends Clock {
  advance(ms: number): void;
  setScale(scale: number): void;
  setFrozen(frozen: boolean): void;
  status(): ClockStatus;
  /**
   * Moves the clock to `now` (earlier or later) with these settings: for a world that is
   * rebuilt at that instant (a state loaded with its clock, a reset to real time), never for
   * one that goes on running.
   */
  set(anchor: { now: number; scale?: number; frozen?: boolean }): void;
  /** The real time this clock follows (the wall clock unless a test gave another source), epoch ms. */
  real(): number;
  /** Calls `fn` after every advance, scale or frozen change (the event stream reschedules on it); returns the unwatch. */
  watch?(fn: () => void): () => void;
}

export const wallClock = (): number => Date.now();

/**
 * The latest instant emulated time reaches: the end of year 9999. Far enough below the last
 * instant a JavaScript Date can hold that every schedule computed from it stays showable, and
 * still a four-digit year, as ISO 8601 wants. A sped-up clock that gets there stops there.
 */
export const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The clock an export carries: the emulated instant it was taken at, and how the clock ran.
 * Loaded with its clock, a state sets the world's clock to it; loaded on real time, its
 * emulated times are moved by the difference instead (see core/time-shift.ts).
 */
export const ClockAnchorSchema = Type.Object(
  {
    now: Type.Integer({ minimum: 0, maximum: LATEST_INSTANT, description: 'the emulated time the export was taken at, epoch ms: the times of the export are relative to it' }),
    scale: Type.Number({ minimum: 0, maximum: 1_000_000, default: 1, description: 'emulated ms per real ms' }),
    frozen: Type.Boolean({ default: false }),
    loadedAt: Type.Optional(
      Type.Integer({ minimum: 0, maximum: LATEST_INSTANT, description: 'when its state was loaded, epoch ms: what a time the state leaves out reads (the since of a resource never started)' }),
    ),
    realAt: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: LATEST_INSTANT,
        description: 'the real time (wall clock) at which now was read, epoch ms: written in the state file, where a restart lets the clock run on by the real time it was down (an import or a seed loads the clock as its mode says, which this does not enter)',
      }),
    ),
  },
  { additionalProperties: false, description: "the exporting world's clock" },
);
export type ClockAnchor = Static<typeof ClockAnchorSchema>;

/** How a state that carries a clock is loaded: on its own clock, or on the world's (real) time. */
export const CLOCK_MODES = ['keep', 'real'] as const;
export type ClockMode = (typeof CLOCK_MODES)[number];

/** Real time in milliseconds from an arbitrary origin, for measuring how long something took. */
export const stopwatch = (): number => performance.now();

/**
 * Emulated time = anchor + (source() - sourceAnchor) * scale, plus whatever advance() added.
 * Re-anchoring on every change keeps the time continuous, so it never jumps backwards when
 * the scale changes or the clock is frozen and thawed.
 */
export class EmulatorClock implements ControllableClock {
  private anchor: number;
  private sourceAnchor: number;
  private scale: number;
  private frozen: boolean;
  private last: number;
  /** Called after every change of time, scale or frozen setting; empty unless someone watches. */
  private readonly watchers = new Set<() => void>();

  constructor(
    options: { start?: number; scale?: number; frozen?: boolean; source?: () => number } = {},
  ) {
    this.source = options.source ?? wallClock;
    this.sourceAnchor = this.source();
    this.anchor = options.start ?? this.sourceAnchor;
    this.scale = options.scale ?? 1;
    this.frozen = options.frozen ?? false;
    this.last = this.anchor;
  }

  private readonly source: () => number;

  now(): number {
    const running = this.frozen ? 0 : (this.source() - this.sourceAnchor) * this.scale;
    // The source may step backwards (NTP); emulated time must not. Past LATEST_INSTANT time
    // could not go on being shown, and it never goes back, so it stops there instead: a clock
    // run at a million times real speed for days must not break every later answer.
    this.last = Math.min(LATEST_INSTANT, Math.max(this.last, Math.floor(this.anchor + running)));
    return this.last;
  }

  /** Moves time forward by `ms`, stopping at LATEST_INSTANT. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('time can only move forward');
    this.reanchor();
    this.anchor = Math.min(LATEST_INSTANT, this.anchor + ms);
    this.last = Math.max(this.last, this.anchor);
    this.changed();
  }

  setScale(scale: number): void {
    if (!Number.isFinite(scale) || scale < 0) throw new RangeError('scale must be a number >= 0');
    this.reanchor();
    this.scale = scale;
    this.changed();
  }

  setFrozen(frozen: boolean): void {
    this.reanchor();
    this.frozen = frozen;
    this.changed();
  }

  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private changed(): void {
    if (this.watchers.size > 0) for (const fn of this.watchers) fn();
  }

  /** Moves the clock to `at` if that is later than now; earlier values are ignored. */
  advanceTo(at: number): void {
    const now = this.now();
    if (at > now) this.advance(at - now);
  }

  status(): ClockStatus {
    const now = this.now();
    return { now, iso: new Date(now).toISOString(), scale: this.scale, frozen: this.frozen };
  }

  set(anchor: { now: number; scale?: number; frozen?: boolean }): void {
    if (!Number.isFinite(anchor.now) || anchor.now < 0) throw new RangeError('a clock is set to epoch ms >= 0');
    this.anchor = Math.min(LATEST_INSTANT, Math.floor(anchor.now));
    this.sourceAnchor = this.source();
    this.last = this.anchor;
    if (anchor.scale !== undefined) this.setScale(anchor.scale);
    if (anchor.frozen !== undefined) this.frozen = anchor.frozen;
  }

  real(): number {
    return this.source();
  }

  private reanchor(): void {
    this.anchor = this.now();
    this.sourceAnchor = this.source();
  }
}

/** A frozen clock for tests: time moves only when the test advances it. */
export class ManualClock extends EmulatorClock {
  /** `source`: the real time it stands for (default the wall clock), read by a reset to real time. */
  constructor(start = Date.UTC(2026, 10, 22, 9, 0, 0), source?: () => number) {
    super({ start, frozen: true, ...(source ? { source } : {}) });
  }
}

/** Java's Date.toString() in UTC, e.g. "Sun Nov 22 09:15:02 UTC 2026". */
export function javaDateString(ms: number): string {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${time} UTC ${d.getUTCFullYear()}`;
}
