import type { ClockAnchor } from '../core/clock.js';
import type { SectionSnapshot } from '../core/snapshot.js';
import type { SectionName } from './state.js';
import type { TimelineState } from './timeline-schemas.js';

/**
 * Writing out a whole state without holding the event loop: a snapshot of the stores (taken
 * at once, cheaply: see core/snapshot.ts) is turned into text in slices of a few
 * milliseconds, each followed by a turn of the event loop, so that requests are answered
 * while a state of hundreds of thousands of entries is exported or written to the state
 * file. The text is byte for byte what serialising the whole state in one call gives.
 */

/**
 * A whole state as World.snapshot() takes it: the sections in the order of
 * World.exportState(), and what to call once they have been written out (or given up), so
 * that the stores stop keeping them as they were.
 */
export interface StateSnapshot {
  /** The world's clock at the moment it was taken: an export's relative times are relative to it. */
  clock?: ClockAnchor;
  /** The world's timeline as the state holds it (how far it went), when it has steps. */
  timeline?: TimelineState;
  sections: Record<SectionName, SectionSnapshot>;
  release(): void;
}

/**
 * What a sandbox's state is written as: a reference to a state the next start has anyway
 * (`fixtures`: the seed; `default`: the default world's state in the same file), for a
 * sandbox nobody changed since it was made from it; else its whole state.
 */
export type SeedReference = 'fixtures' | 'default';

/** A sandbox as the state file keeps it, in a snapshot. */
export interface SandboxSnapshot {
  name: string;
  createdAt: number;
  lastUsedAt: number;
  /** Its whole state (with its clock), or a reference to a state with the sandbox's clock beside it. */
  state: StateSnapshot | { seed: SeedReference; clock?: ClockAnchor };
}

/** A world's text passed STATE_FILE_WORLD_MAX_BYTES while it was being written. */
export class WorldTooLargeError extends Error {
  constructor(
    readonly world: string,
    readonly maxBytes: number,
  ) {
    super(`the state of ${world} passes STATE_FILE_WORLD_MAX_BYTES (${maxBytes} bytes)`);
    this.name = 'WorldTooLargeError';
  }
}

/** Turns the entries of one section (a slice of them, in order) into their JSON, `[...]`. */
export type ListSerializer = (items: unknown[]) => string;

/** How long a slice of work may hold the event loop before it lets other work run. */
const SLICE_MS = 5;
/** Pieces are handed on in chunks of about this many characters (or at the end). */
const CHUNK_CHARS = 64 * 1024;
/** Bounds of the entries serialised in one call; the count between them follows the time taken. */
const MIN_BATCH = 1;
const MAX_BATCH = 16_384;
/** Runs sorted by the native sort before the merges of sortedById. */
const SORT_RUN = 1024;

/** Measures a slice of work and lets the event loop run once it has taken its time. */
class Slicer {
  private started = performance.now();

  /** Whether this slice has taken its time. */
  get due(): boolean {
    return performance.now() - this.started >= SLICE_MS;
  }

  /** A turn of the event loop (timers, I/O, the requests waiting): the next slice starts afterwards. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}

/** Entries per call that should take about SLICE_MS, from what the last call took. */
function nextBatch(done: number, ms: number): number {
  const each = ms / done;
  const fit = each > 0 ? Math.floor(SLICE_MS / 2 / each) : MAX_BATCH;
  return Math.max(MIN_BATCH, Math.min(MAX_BATCH, fit, done * 4));
}

const idOf = (item: unknown) => (item as { id: number }).id;

/**
 * The entries in ascending id order. They usually are already (ids only grow), which a pass
 * finds out; else a merge sort that lets the event loop run between slices of its work.
 */
async function sortedById(items: readonly unknown[], slicer: Slicer): Promise<readonly unknown[]> {
  const n = items.length;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) {
    if (idOf(items[i - 1]) > idOf(items[i])) sorted = false;
    else if ((i & 0xffff) === 0 && slicer.due) await slicer.pause();
  }
  if (sorted) return items;
  const byId = (a: unknown, b: unknown) => idOf(a) - idOf(b);
  let from = items.slice();
  for (let lo = 0; lo < n; lo += SORT_RUN) {
    const run = from.slice(lo, lo + SORT_RUN).sort(byId);
    for (let k = 0; k < run.length; k++) from[lo + k] = run[k];
    if (slicer.due) await slicer.pause();
  }
  let to: unknown[] = new Array(n);
  for (let width = SORT_RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let a = lo;
      let b = mid;
      for (let k = lo; k < hi; k++) {
        to[k] = a < mid && (b >= hi || idOf(from[a]) <= idOf(from[b])) ? from[a++] : from[b++];
        if ((k & 0xfff) === 0 && slicer.due) await slicer.pause();
      }
    }
    [from, to] = [to, from];
  }
  return from;
}

/**
 * The entries of a section in export order, in batches: each batch is `serialize`d in one
 * call (decoded first when the snapshot holds JSON text), sized so that a call takes a few
 * milliseconds, and the event loop runs whenever the slice has taken its time.
 */
async function* batches(list: SectionSnapshot, slicer: Slicer, serialize: (values: unknown[]) => string): AsyncGenerator<string> {
  const items = list.sortById ? await sortedById(list.items, slicer) : list.items;
  // One entry first: the first call of a serializer can be slow (compiled on first use).
  let size = 1;
  for (let i = 0; i < items.length; ) {
    const t0 = performance.now();
    const slice = items.slice(i, i + size);
    const decoded = list.encoded ? slice.map((s) => JSON.parse(s as string)) : slice;
    yield serialize(list.exported ? decoded.map(list.exported) : decoded);
    i += slice.length;
    size = nextBatch(slice.length, performance.now() - t0);
    if (slicer.due) await slicer.pause();
  }
}

/** Gathers small pieces into chunks of about CHUNK_CHARS. */
async function* chunked(pieces: AsyncIterable<string>): AsyncGenerator<string> {
  let parts: string[] = [];
  let length = 0;
  for await (const piece of pieces) {
    parts.push(piece);
    length += piece.length;
    if (length >= CHUNK_CHARS) {
      yield parts.join('');
      parts = [];
      length = 0;
    }
  }
  if (length) yield parts.join('');
}

// --- The state file: JSON.stringify(file, null, 2) + '\n' -------------------------------

/** What the pretty printer walks: an object, a section of a snapshot, or a plain value. */
type Node = { object: Array<[string, Node]> } | { list: SectionSnapshot } | { value: unknown } | { bounded: Node; budget: Budget };

/** The bytes one world's text may still take in the state file (STATE_FILE_WORLD_MAX_BYTES). */
interface Budget {
  world: string;
  maxBytes: number;
  bytes: number;
}

const pad = (depth: number) => '  '.repeat(depth);

/**
 * A section at `depth`, as JSON.stringify(..., null, 2) writes it there. Each batch is
 * written by JSON.stringify itself, nested in as many arrays as the section is deep, so
 * that it comes out indented for its place; the nesting's own lines are cut off.
 */
async function* prettyList(list: SectionSnapshot, depth: number, slicer: Slicer): AsyncGenerator<string> {
  if (list.items.length === 0) {
    yield '[]';
    return;
  }
  let head = '';
  let tail = '';
  for (let d = 0; d <= depth; d++) {
    head += `${pad(d)}[\n`;
    tail = `\n${pad(d)}]${tail}`;
  }
  const nest = (values: unknown[]) => {
    let nested: unknown = values;
    for (let d = 0; d < depth; d++) nested = [nested];
    return nested;
  };
  yield '[\n';
  let first = true;
  for await (const text of batches(list, slicer, (values) => JSON.stringify(nest(values), null, 2))) {
    yield `${first ? '' : ',\n'}${text.slice(head.length, text.length - tail.length)}`;
    first = false;
  }
  yield `\n${pad(depth)}]`;
}

async function* pretty(node: Node, depth: number, slicer: Slicer): AsyncGenerator<string> {
  if ('bounded' in node) {
    const { budget } = node;
    for await (const piece of pretty(node.bounded, depth, slicer)) {
      budget.bytes += Buffer.byteLength(piece);
      if (budget.bytes > budget.maxBytes) throw new WorldTooLargeError(budget.world, budget.maxBytes);
      yield piece;
    }
  } else if ('list' in node) {
    yield* prettyList(node.list, depth, slicer);
  } else if ('object' in node) {
    if (node.object.length === 0) {
      yield '{}';
      return;
    }
    yield '{\n';
    for (let i = 0; i < node.object.length; i++) {
      const [key, child] = node.object[i];
      yield `${i ? ',\n' : ''}${pad(depth + 1)}${JSON.stringify(key)}: `;
      yield* pretty(child, depth + 1, slicer);
    }
    yield `\n${pad(depth)}}`;
  } else {
    yield (JSON.stringify(node.value, null, 2) ?? 'null').replace(/\n/g, `\n${pad(depth)}`);
  }
}

/** The clock of a world, where its state has one: after the sections, as an export writes it. */
const clockEntry = (clock: ClockAnchor | undefined): Array<[string, Node]> => (clock ? [['clock', { value: clock }]] : []);
/** The timeline of a world, where it has one: after the sections, before the clock, as the file's object has them. */
const timelineEntry = (timeline: TimelineState | undefined): Array<[string, Node]> => (timeline ? [['timeline', { value: timeline }]] : []);

const stateNode = (state: StateSnapshot): Node => ({
  object: [
    ...Object.entries(state.sections).map(([name, list]): [string, Node] => [name, { list }]),
    ...timelineEntry(state.timeline),
    ...clockEntry(state.clock),
  ],
});

const isReference = (state: SandboxSnapshot['state']): state is { seed: SeedReference; clock?: ClockAnchor } => 'seed' in state;

/**
 * The state file's text, in chunks: the default world's state in the export format, its
 * clock included, plus, only when there are sandboxes, a `sandboxes` object of name ->
 * {createdAt, lastUsedAt, state} (or, for a sandbox nobody changed, {createdAt, lastUsedAt,
 * seed, clock}); each sandbox's state holds its own clock. A file without sandboxes is an
 * export (its clock also says the real time of the write, `realAt`), so it stays a valid
 * fixture set. The same text as
 * `JSON.stringify(file, null, 2) + '\n'` of that object, keys in the order the object would
 * have (a name of digits, like any array index, comes first). A world whose text passes
 * `worldMaxBytes` stops it with a WorldTooLargeError.
 */
export async function* stateFileText(
  state: StateSnapshot,
  sandboxes: readonly SandboxSnapshot[],
  worldMaxBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<string> {
  const slicer = new Slicer();
  const bounded = (node: Node, world: string): Node => ({ bounded: node, budget: { world, maxBytes: worldMaxBytes, bytes: 0 } });
  // The default world's sections are the file's top level, counted together.
  const main: Budget = { world: 'the default world', maxBytes: worldMaxBytes, bytes: 0 };
  const root = {
    object: [
      ...Object.entries(state.sections).map(([name, list]): [string, Node] => [name, { bounded: { list }, budget: main }]),
      ...timelineEntry(state.timeline),
      ...clockEntry(state.clock),
    ],
  };
  if (sandboxes.length) {
    const byName = new Map(sandboxes.map((s) => [s.name, s]));
    // The order of the keys of an object built from the names, as JSON.stringify walks it.
    const names = Object.keys(Object.fromEntries(sandboxes.map((s) => [s.name, 0])));
    const entries = names.map((name): [string, Node] => {
      const { createdAt, lastUsedAt, state: sandboxState } = byName.get(name)!;
      const body: Array<[string, Node]> = isReference(sandboxState)
        ? [['seed', { value: sandboxState.seed }], ...clockEntry(sandboxState.clock)]
        : [['state', bounded(stateNode(sandboxState), `sandbox '${name}'`)]];
      return [name, { object: [['createdAt', { value: createdAt }], ['lastUsedAt', { value: lastUsedAt }], ...body] }];
    });
    root.object.push(['sandboxes', { object: entries }]);
  }
  async function* whole() {
    // The snapshot was taken in this turn of the event loop; the writing starts in the next.
    await slicer.pause();
    yield* pretty(root, 0, slicer);
    yield '\n';
  }
  try {
    yield* chunked(whole());
  } finally {
    state.release();
    for (const sandbox of sandboxes) if (!isReference(sandbox.state)) sandbox.state.release();
  }
}

// --- The export: the response schema's serializer, compact ------------------------------

/**
 * The body of GET /_emulator/state, in chunks: `{"users":[...],"tokens":[...],...,"clock":{...}}`
 * with the sections in `order`, then the snapshot's clock (when it has one) (the response schema's), each section's entries written by its
 * schema's serializer, a batch at a time: the bytes the serializer of the whole state writes.
 * A section's serializer is asked for when the section is reached (compiling one takes
 * milliseconds, all of them together more than a slice).
 */
export async function* exportText(
  state: StateSnapshot,
  order: readonly SectionName[],
  serializerOf: (name: SectionName) => ListSerializer,
): AsyncGenerator<string> {
  const slicer = new Slicer();
  async function* whole() {
    // The snapshot was taken in this turn of the event loop; the writing starts in the next.
    await slicer.pause();
    yield '{';
    for (let i = 0; i < order.length; i++) {
      const name = order[i];
      yield `${i ? ',' : ''}${JSON.stringify(name)}:[`;
      const serialize = serializerOf(name);
      if (slicer.due) await slicer.pause();
      let first = true;
      for await (const text of batches(state.sections[name], slicer, serialize)) {
        yield `${first ? '' : ','}${text.slice(1, -1)}`;
        first = false;
      }
      yield ']';
    }
    // The clock last, where the response schema's serializer writes an optional field.
    const { clock } = state;
    if (clock) {
      const loaded = clock.loadedAt === undefined ? '' : `,"loadedAt":${clock.loadedAt}`;
      yield `${order.length ? ',' : ''}"clock":{"now":${clock.now},"scale":${JSON.stringify(clock.scale)},"frozen":${clock.frozen}${loaded}}`;
    }
    // The timeline after it, as the serializer writes optional fields: in the schema's order.
    if (state.timeline) yield `${order.length || clock ? ',' : ''}"timeline":${JSON.stringify(state.timeline)}`;
    yield '}';
  }
  try {
    yield* chunked(whole());
  } finally {
    state.release();
  }
}
