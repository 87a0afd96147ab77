/**
 * A fixed window (most API frameworks' default), from `rate-limiter-flexible`'s RateLimiterMemory:
 * `limit` requests per window of `windowSeconds`. A window starts at the first request after the
 * previous one ended (not on the clock's second or minute) and ends `windowSeconds` later; with
 * `opensAt: "start"` the first one opens when the limiter is made, so the client's first request
 * meets it at whatever phase the time since gives. As in the library, a refused request is counted
 * too (its counter goes past `limit`), which changes nothing: the window is refused to its end
 * either way and the next one starts from 0. The library's clock is `Date.now()`.
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { LimiterDecision, LimiterKind } from "./decision";

/** The simulator has one client: one key for every request. */
const KEY = "upstream";

export function fixedWindow(settings: {
  limit: number;
  windowSeconds: number;
  opensAt: "first_request" | "start";
}): LimiterKind {
  const limiter = new RateLimiterMemory({
    points: settings.limit,
    duration: settings.windowSeconds,
  });
  // Opened now: consuming no point starts the key's window (the library's memory storage keeps
  // the record from its first `incrby`, 0 included).
  if (settings.opensAt === "start") void limiter.consume(KEY, 0);
  const decision = (accepted: boolean, res: RateLimiterRes): LimiterDecision => ({
    accepted,
    limit: settings.limit,
    remaining: res.remainingPoints,
    resetMs: res.msBeforeNext,
    retryAfterMs: res.msBeforeNext,
  });
  return {
    async decide() {
      try {
        return decision(true, await limiter.consume(KEY));
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return decision(false, refusal);
        throw refusal;
      }
    },
    release() {},
    close() {
      void limiter.delete(KEY);
    },
  };
}
