/** What an answer's headers tell the rate model (docs/rate-model.md), read into plain data. */

/** The headers of an answer: `Headers`, or anything with its `get`. */
export interface HeaderSource {
  get(name: string): string | null;
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

/** What one answer says of the limit, besides accepted or refused. */
export interface Signal {
  /** `Retry-After`, in ms from the answer. */
  retryAfterMs?: number | undefined;
  /** `Retry-After` was whole seconds, rounded up (an HTTP date's second may be cut off instead). */
  retryAfterWholeSeconds?: boolean | undefined;
  /** `RateLimit-*` headers. */
  limit?: RateLimitState | undefined;
}

const DELAY_SECONDS = /^\d+$/;

/** The signal of an answer's headers at `now`. */
export function signalOf(headers: HeaderSource | undefined, now: number): Signal {
  if (!headers) return {};
  const retryAfter = headers.get("retry-after");
  return {
    retryAfterMs: parseRetryAfter(retryAfter, now),
    retryAfterWholeSeconds: DELAY_SECONDS.test(retryAfter?.trim() ?? ""),
    limit: parseRateLimitState(headers, now),
  };
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

/** A `Reset` above this is an epoch time in seconds (2001), not a number of seconds to wait. */
const EPOCH_SECONDS_FROM = 1_000_000_000;

/**
 * Reads `RateLimit-Limit`, `-Remaining` and `-Reset`, or the same with `X-`. `Reset` is seconds
 * to wait (the draft, and most servers), or an epoch time in seconds when it is that large (as
 * GitHub sends). A policy list such as `100, 100;w=60` counts by its first number. Undefined
 * when none is sent or none reads as a number.
 */
export function parseRateLimitState(
  headers: HeaderSource,
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
