/**
 * A sliding log, from `rolling-rate-limiter`'s InMemoryRateLimiter: at most `limit` requests in
 * any `windowSeconds`, with no point at which the window resets. As in the library, a refused
 * request is logged and counts: a client that keeps asking faster than the limit is refused until
 * it pauses (the library's README: "if an action is blocked, it is still counted"). So the whole
 * limit is available again only a full window after the last request (`RateLimit-Reset` is always
 * `windowSeconds`). The library's clock is `microtime` (the system clock in microseconds).
 */
import { InMemoryRateLimiter } from "rolling-rate-limiter";
import type { LimiterDecision, LimiterKind } from "./decision";

const KEY = "upstream";

export function slidingLog(settings: { limit: number; windowSeconds: number }): LimiterKind {
  const limiter = new InMemoryRateLimiter({
    interval: settings.windowSeconds * 1000,
    maxInInterval: settings.limit,
  });
  return {
    async decide(): Promise<LimiterDecision> {
      const info = await limiter.limitWithInfo(KEY);
      return {
        accepted: !info.blocked,
        limit: settings.limit,
        remaining: info.actionsRemaining,
        resetMs: settings.windowSeconds * 1000,
        retryAfterMs: info.millisecondsUntilAllowed,
      };
    },
    release() {},
    close() {
      void limiter.clear(KEY);
    },
  };
}
