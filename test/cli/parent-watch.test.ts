import { afterEach, describe, expect, it, vi } from 'vitest';
import { PARENT_POLL_MS, watchParent } from '../../src/cli/parent-watch.js';

/** The parent watch on its own: the parent pid is given, the poll timer is a fake one. */

afterEach(() => {
  vi.useRealTimers();
});

describe('watchParent', () => {
  it('calls back once, with the old parent, at the first poll after the parent pid changed', () => {
    vi.useFakeTimers();
    let ppid = 4242;
    const gone = vi.fn();
    const stop = watchParent(gone, { ppid: () => ppid });
    expect(stop).toBeTypeOf('function');
    vi.advanceTimersByTime(PARENT_POLL_MS * 10);
    expect(gone).not.toHaveBeenCalled();
    ppid = 1; // handed to init
    vi.advanceTimersByTime(PARENT_POLL_MS);
    expect(gone).toHaveBeenCalledExactlyOnceWith(4242);
    ppid = 77; // a subreaper would do as well; no second call either way
    vi.advanceTimersByTime(PARENT_POLL_MS * 10);
    expect(gone).toHaveBeenCalledTimes(1);
  });

  it('watches nothing when the parent is init or there is none (a container’s first process)', () => {
    vi.useFakeTimers();
    for (const start of [0, 1]) {
      let ppid = start;
      const gone = vi.fn();
      expect(watchParent(gone, { ppid: () => ppid })).toBeUndefined();
      ppid = 9999;
      vi.advanceTimersByTime(PARENT_POLL_MS * 10);
      expect(gone).not.toHaveBeenCalled();
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops watching when told', () => {
    vi.useFakeTimers();
    let ppid = 4242;
    const gone = vi.fn();
    watchParent(gone, { ppid: () => ppid })!();
    ppid = 1;
    vi.advanceTimersByTime(PARENT_POLL_MS * 10);
    expect(gone).not.toHaveBeenCalled();
  });
});
