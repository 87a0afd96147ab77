/**
 * A token bucket (API gateways; nginx `limit_req` with `burst`), from the `limiter` package's
 * TokenBucket: `burst` tokens at most, refilled continuously at `ratePerSecond`; a request takes
 * one token or is refused. The library's bucket starts empty; this one is filled at the start, as
 * a gateway's is. A refused request takes no token (`tryRemoveTokens` removes nothing when it
 * fails). The library's clock is `performance.now()`.
 */
import { TokenBucket } from "limiter";
import type { LimiterDecision, LimiterKind } from "./decision";

export function tokenBucket(settings: { ratePerSecond: number; burst: number }): LimiterKind {
  const bucket = new TokenBucket({
    bucketSize: settings.burst,
    tokensPerInterval: settings.ratePerSecond,
    interval: 1000,
  });
  bucket.content = settings.burst;
  return {
    async decide(): Promise<LimiterDecision> {
      const accepted = bucket.tryRemoveTokens(1);
      // getWaitTime drips first, so `content` is current after it.
      const retryAfterMs = bucket.getWaitTime(1);
      return {
        accepted,
        limit: settings.burst,
        remaining: Math.floor(bucket.content),
        resetMs: ((settings.burst - bucket.content) / settings.ratePerSecond) * 1000,
        retryAfterMs,
      };
    },
    release() {},
    close() {},
  };
}
