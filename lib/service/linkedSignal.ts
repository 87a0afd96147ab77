/**
 * A signal for one piece of work that aborts when `parent` does; `release` unlinks it when the
 * work is over.
 *
 * Why not pass `parent` itself: the HTTP layer combines the caller's signal with a per-request
 * timeout through `AbortSignal.any`, and Node.js (20 and 22, measured) keeps a reference from a
 * source signal to every signal combined from it for as long as the source lives. The service's
 * stop signal lives for months, so every request would leave one behind (about 60 to 170 bytes
 * each). A child that lives for one call, one sync or one action takes them with it.
 */
export function linkedSignal(parent: AbortSignal): { signal: AbortSignal; release(): void } {
  const child = new AbortController();
  const abort = () => child.abort(parent.reason);
  if (parent.aborted) abort();
  else parent.addEventListener("abort", abort, { once: true });
  return {
    signal: child.signal,
    release: () => parent.removeEventListener("abort", abort),
  };
}

/** Runs `work` with a signal that aborts with `parent` and is unlinked when the work is over. */
export async function withLinkedSignal<T>(
  parent: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { signal, release } = linkedSignal(parent);
  try {
    return await work(signal);
  } finally {
    release();
  }
}
