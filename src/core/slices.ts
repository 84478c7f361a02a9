import { stopwatch } from './clock.js';

/**
 * Work on a large state (an import of hundreds of thousands of entries) done in slices, so
 * that no slice holds the event loop for long: the work is written once, as a generator that
 * yields now and then (every few thousand entries), and run either at once (`runAtOnce`, for
 * a seed at start-up or a small state) or with a turn of the event loop whenever a slice has
 * taken SLICE_MS (`runInSlices`, for an import while requests go on).
 */

/** How long a slice of work may hold the event loop before it lets other work run. */
export const SLICE_MS = 5;

/** Entries handled between two looks at the time: a check costs little, but not nothing. */
export const ENTRIES_PER_YIELD = 2048;

/** Work that yields between pieces and returns its result at the end. */
export type SlicedWork<T> = Generator<void, T, void>;

/** Runs the work to its end in one go. */
export function runAtOnce<T>(work: SlicedWork<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/** A turn of the event loop: timers, I/O and the requests waiting run before the next slice. */
export const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs the work, letting the event loop turn once a slice has taken SLICE_MS. */
export async function runInSlices<T>(work: SlicedWork<T>): Promise<T> {
  let started = stopwatch();
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (stopwatch() - started >= SLICE_MS) {
      await turn();
      started = stopwatch();
    }
  }
}

/** Runs of this many entries are sorted by the native sort before they are merged. */
const SORT_RUN = 4096;

/**
 * Sorts `list` (which the caller owns) by `compare` and returns it sorted, yielding as it goes:
 * one pass when it is sorted already (an export is), else runs sorted natively, merged pairwise.
 * Stable, like the native sort.
 */
export function* sortSliced<T>(list: T[], compare: (a: T, b: T) => number): SlicedWork<T[]> {
  let sorted = true;
  for (let i = 1; i < list.length; i++) {
    if (compare(list[i - 1], list[i]) > 0) {
      sorted = false;
      break;
    }
    if (i % ENTRIES_PER_YIELD === 0) yield;
  }
  if (sorted) return list;
  for (let from = 0; from < list.length; from += SORT_RUN) {
    const run = list.slice(from, from + SORT_RUN).sort(compare);
    for (let k = 0; k < run.length; k++) list[from + k] = run[k];
    yield;
  }
  let source = list;
  let target: T[] = new Array<T>(list.length);
  for (let width = SORT_RUN; width < list.length; width *= 2) {
    let k = 0;
    for (let lo = 0; lo < list.length; lo += 2 * width) {
      const mid = Math.min(lo + width, list.length);
      const hi = Math.min(lo + 2 * width, list.length);
      let i = lo;
      let j = mid;
      while (i < mid || j < hi) {
        // Equal entries keep their order: the left run's first.
        target[k++] = j >= hi || (i < mid && compare(source[i], source[j]) <= 0) ? source[i++] : source[j++];
        if (k % ENTRIES_PER_YIELD === 0) yield;
      }
    }
    [source, target] = [target, source];
  }
  return source;
}
