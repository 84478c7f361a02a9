import {
  MAX_TIMELINE_BYTES,
  MAX_TIMELINE_STEPS,
  formatOffset,
  offsetOf,
  timelineProblems,
  type StepRequest,
  type TimelineInput,
  type TimelineState,
  type TimelineStepInput,
  type TimelineView,
} from './timeline-schemas.js';
import { invalid } from '../core/errors.js';

/** A step with its offset worked out. */
interface Planned {
  input: TimelineStepInput;
  atMs: number;
  status?: number;
}

/**
 * A world's timeline (docs/timelines.md): its steps in the order they are played, when it
 * started, and how far it has been played. Knows nothing of HTTP: the player
 * (control/timeline-player.ts) makes each step's request and tells the timeline it is done.
 */
export class Timeline {
  private planned: Planned[] = [];
  /** The index of the next step not played yet. */
  private cursor = 0;
  /** Steps are added from the requests made (POST /_emulator/timeline/record). */
  recording = false;
  /** Bytes of JSON the steps take, for the bound while recording. */
  private bytes = 2;

  constructor(
    /** The timeline's start, emulated epoch ms. */
    private start: number,
    input?: TimelineInput,
    options: { lenient?: boolean } = {},
  ) {
    if (input) this.replace(input, start, options);
  }

  /**
   * Every problem of `input` as a timeline starting at `start`, in one error naming each step
   * and field (`steps[3].at: ...`); nothing when it can be set.
   */
  static check(input: TimelineInput, start: number): void {
    const problems = timelineProblems(input, start);
    if (problems.length === 0) return;
    const listed = problems.slice(0, 10).map((p) => `${pointerToPath(p.pointer)}: ${p.message}`);
    const more = problems.length > listed.length ? ` (and ${problems.length - listed.length} more)` : '';
    throw invalid(`body field ${listed.join('; ')}${more}`);
  }

  /**
   * Replaces the steps (checked first: a timeline refused changes nothing), starting at `start`;
   * none of them played. `lenient`: a timeline checked already by the state format (the seed's),
   * whose absolute instants before its start are played at its start instead of refused.
   * Without `input`, no steps.
   */
  replace(input: TimelineState | undefined, now: number, { lenient = false }: { lenient?: boolean } = {}): void {
    input ??= { steps: [] };
    // A state's timeline (an export's) goes on from where it was: started elapsedMs before now,
    // its first `played` steps not played again.
    const start = now - (input.elapsedMs ?? 0);
    if (!lenient) Timeline.check(input, start);
    const planned = input.steps.map((step) => ({ input: step, atMs: Math.max(0, offsetOf(step.at, start) ?? 0) }));
    // Stable: steps of one instant keep the order they were given in.
    planned.sort((a, b) => a.atMs - b.atMs);
    this.planned = planned;
    this.start = start;
    this.cursor = Math.min(input.played ?? 0, planned.length);
    this.recording = false;
    this.bytes = Buffer.byteLength(JSON.stringify(input.steps));
  }

  get startedAt(): number {
    return this.start;
  }

  get length(): number {
    return this.planned.length;
  }

  /** The offset of the last step, 0 without steps. */
  get lengthMs(): number {
    return this.planned.length === 0 ? 0 : this.planned[this.planned.length - 1].atMs;
  }

  /** The instant the next step is due at; undefined when every step is played. */
  nextAt(): number | undefined {
    const next = this.planned[this.cursor];
    return next === undefined ? undefined : this.start + next.atMs;
  }

  /** Whether a step is due by `now`. */
  due(now: number): boolean {
    const at = this.nextAt();
    return at !== undefined && at <= now;
  }

  /** The next step to play, with its instant; undefined when none is left. */
  peek(): { index: number; at: number; request: StepRequest; name?: string } | undefined {
    const next = this.planned[this.cursor];
    if (next === undefined) return undefined;
    return { index: this.cursor, at: this.start + next.atMs, request: next.input.request, ...(next.input.name !== undefined ? { name: next.input.name } : {}) };
  }

  /** The next step was played, answered with `status`. */
  played(status: number): void {
    const next = this.planned[this.cursor];
    if (next === undefined) return;
    next.status = status;
    this.cursor++;
  }

  /** Recording on (from `now`, the start of a timeline without steps) or off. */
  setRecording(on: boolean, now: number): void {
    if (on && !this.recording && this.planned.length === 0) {
      this.start = now;
      this.cursor = 0;
    }
    this.recording = on;
  }

  /** Back to its start, every step not played, starting at `start` (a seek replays from there). */
  rewind(start = this.start): void {
    this.start = start;
    this.cursor = 0;
    for (const p of this.planned) delete p.status;
  }

  /**
   * Adds a request made now (`at`, emulated epoch ms), answered with `status`, as a step at its
   * offset; false when it does not fit the bounds (recording stops then).
   */
  record(at: number, request: StepRequest, status: number): boolean {
    const step: TimelineStepInput = { at: formatOffset(at - this.start), request };
    const bytes = Buffer.byteLength(JSON.stringify(step)) + 1;
    if (this.planned.length >= MAX_TIMELINE_STEPS || this.bytes + bytes > MAX_TIMELINE_BYTES) {
      this.recording = false;
      return false;
    }
    this.bytes += bytes;
    // Made now, so already played: it is after every step played, and before the ones to come.
    const atMs = Math.max(0, at - this.start);
    const planned: Planned = { input: step, atMs };
    let i = this.cursor;
    while (i < this.planned.length && this.planned[i].atMs <= atMs) i++;
    // Steps due before it and not yet played stay ahead of it; it counts as played only when all before it are.
    this.planned.splice(i, 0, planned);
    if (i === this.cursor) {
      planned.status = status;
      this.cursor++;
    }
    return true;
  }

  /**
   * The timeline as an export holds it at emulated time `now`: each step at its offset, how
   * long it has run and how many steps were played; undefined without steps.
   */
  toState(now: number): TimelineState | undefined {
    if (this.planned.length === 0) return undefined;
    return {
      // Keys in the order the state's serializer writes them (required, then optional ones), so
      // that JSON.stringify of it is the serializer's text.
      steps: this.planned.map(({ input: { name, request }, atMs }) => ({
        at: formatOffset(atMs),
        request: {
          method: request.method,
          path: request.path,
          ...(request.body !== undefined ? { body: request.body } : {}),
          ...(request.headers !== undefined ? { headers: request.headers } : {}),
        },
        ...(name !== undefined ? { name } : {}),
      })),
      elapsedMs: Math.max(0, now - this.start),
      played: this.cursor,
    };
  }

  /** The steps in the fixture format (what a fixture file's `timeline` holds). */
  toInput(): TimelineInput {
    return { steps: this.planned.map((p) => p.input) };
  }

  /** What GET /_emulator/timeline answers, at emulated time `now`. */
  view(now: number): TimelineView {
    const steps = this.planned.map((p, i) => ({
      at: p.input.at,
      atMs: p.atMs,
      ...(p.input.name !== undefined ? { name: p.input.name } : {}),
      request: p.input.request,
      done: i < this.cursor,
      ...(i < this.cursor && p.status !== undefined && p.status > 0 ? { status: p.status } : {}),
    }));
    return {
      steps,
      startedAt: this.start,
      offsetMs: now - this.start,
      next: this.cursor < this.planned.length ? this.cursor : null,
      lengthMs: this.lengthMs,
      recording: this.recording,
    };
  }
}

/** `/steps/3/request/path` -> `steps[3].request.path`, as the other 400s name a field. */
function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}
