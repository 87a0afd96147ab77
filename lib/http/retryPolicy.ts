/**
 * What is retried, and how long to wait: the one place for these rules (docs/architecture.md).
 * 429 always (the request was not processed), within its own time budget
 * (`RateLimitWait`), not the attempts; 502, 503, 504 and network errors only when the request
 * is idempotent (GET, or a write the caller marks idempotent such as a PATCH replace), at most
 * `maxAttempts` times.
 */
import { HttpStatusError, NetworkError, RateLimitedError } from "./errors";
import type { AnswerHeaders } from "./types";

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

const DELAY_SECONDS = /^\d+$/;

/**
 * Whether `Retry-After` is a delay in whole seconds, rounded up from the time left (an HTTP date's
 * second may be cut off instead, so the time left may be up to a second past it).
 */
export function retryAfterInSeconds(headers: AnswerHeaders | undefined): boolean {
  return DELAY_SECONDS.test(headers?.get("retry-after")?.trim() ?? "");
}

/**
 * `Retry-After` per RFC 9110 section 10.2.3: delay-seconds or an HTTP date. Returns
 * milliseconds to wait, or undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (DELAY_SECONDS.test(trimmed)) return Number(trimmed) * 1000;
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

/** An upstream's own account of its limit (`RateLimit-*`, IETF draft, or `X-RateLimit-*`). */
export interface RateLimitState {
  /** Requests allowed per window. */
  limit?: number;
  /** Requests left in the current window. */
  remaining?: number;
  /** Milliseconds until the window resets (or, for a sliding window, until a slot frees). */
  resetMs?: number;
}

/**
 * Reads `RateLimit-Limit`, `-Remaining` and `-Reset`, or the same with `X-`. `Reset` is seconds
 * to wait (the draft, and most servers), or an epoch time in seconds when it is that large (as
 * GitHub sends). A policy list such as `100, 100;w=60` counts by its first number. Undefined
 * when none is sent or none reads as a number.
 */
export function parseRateLimitState(
  headers: AnswerHeaders,
  now = Date.now(),
): RateLimitState | undefined {
  const read = (name: string): number | undefined => {
    const value = headers.get(`ratelimit-${name}`) ?? headers.get(`x-ratelimit-${name}`);
    const match = value === null ? null : /^\s*(\d+(?:\.\d+)?)/.exec(value);
    return match ? Number(match[1]) : undefined;
  };
  const limit = read("limit");
  const remaining = read("remaining");
  const reset = read("reset");
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  const state: RateLimitState = {};
  if (limit !== undefined) state.limit = limit;
  if (remaining !== undefined) state.remaining = remaining;
  if (reset !== undefined) {
    state.resetMs = reset > EPOCH_SECONDS_FROM ? Math.max(0, reset * 1000 - now) : reset * 1000;
  }
  return state;
}

/** A `Reset` above this is an epoch time in seconds (2001), not a number of seconds to wait. */
const EPOCH_SECONDS_FROM = 1_000_000_000;
