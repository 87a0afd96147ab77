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
 * A wait of `ms` (for ever when not finite) that `wake` ends early, and `signal` ends with its
 * reason (`aborted`), through `onAbort`: a sync's requests waiting together (a 429, a backoff, their
 * turn) add one listener to its signal, not one each, as `timers/promises`' `setTimeout` with a
 * signal would. Its timer and its place among the signal's followers go when it ends, either way.
 */
export function abortableWait(
  ms: number,
  signal: AbortSignal | undefined,
): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(aborted(signal));
      return;
    }
    const settle = (error?: unknown) => {
      clearTimeout(timer);
      unlink?.();
      if (error === undefined) resolve();
      else reject(error);
    };
    wake = () => settle();
    const timer = Number.isFinite(ms) ? setTimeout(wake, Math.max(0, ms)) : undefined;
    const unlink = signal && onAbort(signal, () => settle(aborted(signal)));
  });
  return { done, wake };
}

/** Sleeps `ms`, or until `signal` aborts (then rejects with its reason): `abortableWait`. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return abortableWait(ms, signal).done;
}

/** Callers waiting on `signal` through `onAbort` (0 once they have all ended). */
export function followersOf(signal: AbortSignal): number {
  return followers.get(signal)?.size ?? 0;
}

function aborted(signal: AbortSignal): unknown {
  return signal.reason ?? new Error("aborted");
}
