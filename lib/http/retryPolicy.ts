/**
 * What is retried, and how long to wait: the one place for these rules (ARCHITECTURE.md).
 * 429 always (the request was not processed); 502, 503, 504 and network errors only when the
 * request is idempotent (GET, or a write the caller marks idempotent such as a PATCH replace).
 */
import { HttpStatusError, NetworkError, RateLimitedError } from "./errors";

export interface RetrySettings {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff step; doubles each attempt, up to `maxDelayMs`, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not slept on: the request fails as rate limited. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 120_000,
};

const RETRYABLE_GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

export function isRetryableStatus(status: number, idempotent: boolean): boolean {
  if (status === 429) return true;
  return idempotent && RETRYABLE_GATEWAY_STATUSES.has(status);
}

/** Capped exponential backoff with full jitter; `attempt` is 1 for the first retry. */
export function backoffDelayMs(
  attempt: number,
  settings: RetrySettings,
  random = Math.random,
): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(random() * ceiling);
}

/**
 * `Retry-After` per RFC 9110 section 10.2.3: delay-seconds or an HTTP date. Returns
 * milliseconds to wait, or undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Whether an error that reached a caller is worth trying again later (a queue worker returns its
 * job to the queue; otherwise the run fails at once): no answer, a rate limit, or a gateway status
 * that the HTTP layer itself retries for a safe request. Everything else (rejected credentials, a
 * body that does not parse, a bad job) will fail the same way again.
 */
export function isRetryableError(error: unknown): boolean {
  if (NetworkError.is(error) || RateLimitedError.is(error)) return true;
  return HttpStatusError.is(error) && isRetryableStatus(error.status, true);
}
