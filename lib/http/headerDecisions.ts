/**
 * What the controller learns from `RateLimit-*` headers (docs/rate-model.md, rules 3 and 4): a
 * function of its state (`rateState.ts`); `headerLimit.ts` reads the limit they show.
 */
import { beginBlock, dropTrial } from "./blockDecisions";
import { headerLimitFrom } from "./headerLimit";
import { BLOCKING_RETRY_AFTER_MS, EDGE_SHARE } from "./rateConstants";
import { cut, type RateState } from "./rateState";
import type { RateLimitState } from "./retryPolicy";

/**
 * A `RateLimit-Limit` (`headerLimitFrom`) is a rate only once it counts these requests and no
 * more than it were accepted within its window (a bucket's `Limit` is its burst, a cap's its
 * requests in flight: more than that pass in a second): then starts never exceed it in its
 * window, and the edge is no higher. `Remaining: 0` with a far `Reset` holds every start until
 * then (a probe goes first).
 */
export function learnFromHeaders(
  s: RateState,
  state: RateLimitState | undefined,
  now: number,
): void {
  if (!state) return;
  const { remaining, resetMs } = state;
  s.headerLimit = headerLimitFrom(state, s.headerLimit, s.headerDisproved);
  const header = s.headerLimit;
  if (header?.counted) {
    if (s.log.acceptedWithin(now, header.windowMs) > header.limit + 1) {
      s.headerDisproved = header.limit;
      s.headerLimit = undefined;
    } else {
      const rate = (header.limit * 1000) / header.windowMs;
      if (rate < s.maxRate) {
        dropTrial(s, now);
        s.maxRate = rate;
        s.slowStart = false;
        cut(s, now, Math.min(s.rate, EDGE_SHARE * rate));
      }
    }
  }
  if (remaining === 0 && resetMs !== undefined && resetMs >= BLOCKING_RETRY_AFTER_MS) {
    if (!s.block.active) beginBlock(s, now);
    s.block.hold(now, resetMs);
  }
}
