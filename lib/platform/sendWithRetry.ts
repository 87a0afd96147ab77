import { setTimeout as sleep } from "node:timers/promises";
import type { RequestContext } from "../http/context";
import { readCapped, withDeadline } from "../http/deadline";
import { AbortedError, NetworkError, type RequestSummary } from "../http/errors";
import { backoffDelayMs, isRetryableStatus, parseRetryAfter } from "../http/retryPolicy";

/** Retries of platform calls. */
export interface PlatformRetry {
  /** Attempts in all, the first included. */
  attempts: number;
  /** First backoff step; doubles each retry up to `maxDelayMs`, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not slept on: the answer is returned as it is. */
  maxRetryAfterMs: number;
}

/** One answer, read whole (the platform's answers are small JSON documents). */
export interface PlatformAnswer {
  status: number;
  headers: Headers;
  text: string;
}

export interface SendOptions {
  summary: RequestSummary;
  retry: PlatformRetry;
  ctx: RequestContext;
  /** Per attempt, the answer's body included. */
  timeoutMs: number;
  /** Sends one attempt; builds its body afresh each time (a file stream is re-opened). */
  send: (signal: AbortSignal) => Promise<PlatformAnswer>;
}

/**
 * Whether the platform may answer differently next time. Every call of the protocol is
 * idempotent, so a 500 is retried too, beside 429, 502, 503 and 504.
 */
export function isRetryablePlatformStatus(status: number): boolean {
  return status === 500 || isRetryableStatus(status, true);
}

/**
 * Sends until an answer that is not worth repeating, or attempts run out: network errors and
 * timeouts, 429 and 5xx are retried with capped backoff (`Retry-After` honoured). The last
 * answer is returned whatever its status; no answer at all throws `NetworkError`.
 */
export async function sendWithRetry(options: SendOptions): Promise<PlatformAnswer> {
  const { summary, retry, ctx, timeoutMs } = options;
  for (let attempt = 1; ; attempt++) {
    throwIfAborted(ctx, summary);
    ctx.counters.requests++;
    let answer: PlatformAnswer;
    try {
      answer = await withDeadline(timeoutMs, ctx.signal, options.send);
    } catch (error) {
      throwIfAborted(ctx, summary);
      const failure = new NetworkError(summary, networkReason(error, timeoutMs), error);
      if (attempt >= retry.attempts) throw failure;
      await pause(
        ctx,
        summary,
        backoffDelayMs(attempt, settingsOf(retry)),
        attempt,
        failure.message,
      );
      continue;
    }
    if (!isRetryablePlatformStatus(answer.status) || attempt >= retry.attempts) return answer;
    const retryAfterMs = parseRetryAfter(answer.headers.get("retry-after"));
    if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) return answer;
    const delay = retryAfterMs ?? backoffDelayMs(attempt, settingsOf(retry));
    await pause(ctx, summary, delay, attempt, `status ${answer.status}`);
  }
}

/** Reads a fetch answer whole, until the attempt's signal fires. */
export async function readAnswer(response: Response, signal: AbortSignal): Promise<PlatformAnswer> {
  const bytes = await readCapped(
    response.body,
    signal,
    Number.POSITIVE_INFINITY,
    () => new Error(),
  );
  return { status: response.status, headers: response.headers, text: bytes.toString("utf8") };
}

function settingsOf(retry: PlatformRetry) {
  return { ...retry, maxAttempts: retry.attempts };
}

async function pause(
  ctx: RequestContext,
  summary: RequestSummary,
  delayMs: number,
  attempt: number,
  reason: string,
): Promise<void> {
  ctx.counters.retries++;
  ctx.logger.debug("retrying platform call", { ...summary, reason, attempt, delayMs });
  try {
    await sleep(delayMs, undefined, ctx.signal ? { signal: ctx.signal } : {});
  } catch {
    throwIfAborted(ctx, summary);
  }
}

export function throwIfAborted(ctx: RequestContext, summary: RequestSummary): void {
  if (ctx.signal?.aborted) {
    throw new AbortedError(`${summary.method} ${summary.path} was abandoned: the call was aborted`);
  }
}

function networkReason(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return `no complete answer within ${timeoutMs} ms`;
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string }) : undefined;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ""}`;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
