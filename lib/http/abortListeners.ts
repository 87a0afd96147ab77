/**
 * One `abort` listener per signal, however many callers wait on it: a sync's requests share its
 * signal, and a listener each (16 in flight, more waiting for a turn) would pass Node's limit of 10
 * and print a MaxListenersExceededWarning, a leak warning on the user's terminal.
 */
const followers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `listener` once when `signal` aborts (at once if it has); returns the unlink. */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => {};
  }
  let set = followers.get(signal);
  if (!set) {
    const callers = new Set<() => void>();
    signal.addEventListener(
      "abort",
      () => {
        for (const call of [...callers]) call();
        callers.clear();
      },
      { once: true },
    );
    followers.set(signal, callers);
    set = callers;
  }
  const entry = () => listener();
  set.add(entry);
  return () => set.delete(entry);
}

/**
 * Sleeps `ms`, or until `signal` aborts (then rejects with its reason), through `onAbort`: a
 * sync's requests waiting out a 429 or a backoff together add one listener to its signal, not one
 * each (`timers/promises`' `setTimeout` with a signal adds one a call).
 */
export function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      unlink?.();
      resolve();
    }, ms);
    const unlink =
      signal &&
      onAbort(signal, () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
  });
}
