/** A limit per window that `RateLimit-*` headers show (docs/rate-model.md, rule 3). */
import { HEADER_LIMIT_MIN, RATE_WINDOW_MAX_MS, WINDOW_MS } from "./rateConstants";
import type { RateLimitState } from "./retryPolicy";

/** What `RateLimit-*` headers showed: a limit per window, once it is shown to count requests. */
export interface HeaderLimit {
  limit: number;
  windowMs: number;
  /** `Remaining` fell to half the limit or below: the limit counts these requests. */
  counted: boolean;
}

/**
 * The limit `state` shows per window (the longest `Reset` seen, of `RATE_WINDOW_MAX_MS` at most),
 * if it is `HEADER_LIMIT_MIN` or more and not `disproved`, else `previous`; counted once
 * `Remaining` fell to half of it. A longer window (5,000 an hour) is an allowance, spent at the
 * learned rate: none.
 */
export function headerLimitFrom(
  state: RateLimitState,
  previous: HeaderLimit | undefined,
  disproved: number | undefined,
): HeaderLimit | undefined {
  const { limit, remaining, resetMs } = state;
  if (
    limit !== undefined &&
    limit >= HEADER_LIMIT_MIN &&
    limit !== disproved &&
    resetMs !== undefined &&
    resetMs >= WINDOW_MS
  ) {
    const windowMs = Math.max(previous?.windowMs ?? 0, resetMs);
    const counted =
      (previous?.limit === limit && previous.counted) ||
      (remaining !== undefined && remaining <= limit / 2);
    return windowMs <= RATE_WINDOW_MAX_MS ? { limit, windowMs, counted } : undefined;
  }
  return previous;
}
