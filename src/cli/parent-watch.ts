/** How often the process checks that the process that started it is still there. */
export const PARENT_POLL_MS = 500;

export interface ParentWatchOptions {
  /** The parent's pid now; read again at every poll (process.ppid is read anew each time). */
  ppid?: () => number;
  intervalMs?: number;
}

/**
 * Calls `onGone` once when the process that started this one ends: the process is then
 * handed to init or to a subreaper, so its parent pid changes. Nothing is watched when the
 * parent is already init (pid 1) or there is none (pid 0, the first process of a container):
 * such a process was started to live on its own. The timer never keeps the process alive.
 * Returns a function that stops watching; undefined when nothing is watched.
 */
export function watchParent(onGone: (parent: number) => void, options: ParentWatchOptions = {}): (() => void) | undefined {
  const ppid = options.ppid ?? (() => process.ppid);
  const parent = ppid();
  if (parent <= 1) return undefined;
  const timer = setInterval(() => {
    if (ppid() === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, options.intervalMs ?? PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
