/**
 * What is retried, and how long to wait: the one place for these rules (docs/architecture.md).
 * 429 always (the request was not processed), within its own time budget
 * (`RateLimitWait`), not the attempts; 502, 503, 504 and network errors only when the request
 * is idempotent (GET, or a write the caller marks idempotent such as a PATCH replace), at most
 * `maxAttempts` times.
 */
import { HttpStatusError, NetworkError, RateLimitedError } from "./errors";

export { parseRetryAfter } from "../rate/signal";

export interface RetrySettings {
  /** Attempts in all, the first included, for 5xx and network errors (429 has its own budget). */
  maxAttempts: number;
  /** First backoff step; doubles each attempt, up to `maxDelayMs`, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 502/503/504 `Retry-After` longer than this is not slept on: the request fails. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 120_000,
};

/** How long a rate-limited request may wait in all, and the setting that says so. */
export interface RateLimitWait {
  budgetMs: number;
  /** Named in the error when the budget runs out, e.g. CONNECTOR_ACCOUNTING_RATE_LIMIT_WAIT_SECONDS. */
  variable?: string;
}

/** Several minutes: a per-minute quota, or a longer block, is waited out rather than failed. */
export const DEFAULT_RATE_LIMIT_WAIT_SECONDS = 300;

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
 * Whether an error that reached a caller is worth trying again later (a queue worker returns its
 * job to the queue; otherwise the run fails at once): no answer, a rate limit, or a gateway status
 * that the HTTP layer itself retries for a safe request. Everything else (rejected credentials, a
 * body that does not parse, a bad job) will fail the same way again.
 */
export function isRetryableError(error: unknown): boolean {
  if (NetworkError.is(error) || RateLimitedError.is(error)) return true;
  return HttpStatusError.is(error) && isRetryableStatus(error.status, true);
}
