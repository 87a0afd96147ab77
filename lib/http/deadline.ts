/**
 * One attempt's time bound, headers and body together, and the size-capped body reader it ends.
 *
 * Why not `AbortSignal.timeout` handed to `fetch`: Node's fetch (measured on Node 20.20 with
 * undici 6.24 and on 22.23 with undici 6.28) links the body to the caller's signal through the
 * `Request` object it builds, which the link holds only weakly (a `WeakRef` and a
 * `FinalizationRegistry`, undici issue 1926). Once the headers are in, nothing else holds that
 * object (measured with the `redirect: "error"` this client sends): a garbage collection during
 * the body drops the link and the timeout fires into nothing. A body trickling in a byte every
 * 2 s was read for ever (undici's own `bodyTimeout` starts again with every chunk). So the
 * deadline is a timer owned here, cleared when the attempt ends, aborting a controller whose
 * signal goes to the request (`nodeRequest`, which destroys its socket at any point; `fetch`, for
 * the headers of a streamed upload) and to `readCapped`, which cancels its own reader (body). A
 * caller's signal (a Lambda about to run out of time, a service stopping) aborts the same
 * controller, and is unlinked when the attempt ends.
 */
import { onAbort } from "./abortListeners";

/**
 * Runs `attempt` with a signal that aborts after `timeoutMs` or when `outer` does. A failure once
 * the signal has fired is reported as its reason: a `TimeoutError` when the time ran out.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
  }, timeoutMs);
  const unlink = outer ? onAbort(outer, () => controller.abort(outer.reason)) : undefined;
  try {
    return await attempt(controller.signal);
  } catch (error) {
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
    unlink?.();
  }
}

/**
 * Reads a body whole, decompressed, until `signal` aborts (then throws its reason) or the body
 * passes `maxBytes` (then throws `tooLarge()`); either way the reader is cancelled, which drops
 * the connection, so a huge body or a compression bomb costs at most `maxBytes` of memory.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  signal: AbortSignal,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  signal.throwIfAborted();
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  // Cancelling ends a pending read as if the body had ended: the check after each read tells.
  const cancel = () => reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) return Buffer.concat(chunks);
      total += value.byteLength;
      if (total > maxBytes) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}
