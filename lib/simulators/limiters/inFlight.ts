/**
 * A cap on requests being served at once (nginx `limit_conn`, a server's worker pool): more than
 * `maxInFlight` accepted requests whose answers have not been sent, and the next is refused. No
 * library: it is a counter, released when the answer has been sent (or its connection closed). A
 * refused request is not counted. Nothing tells when a slot frees, so `Retry-After` is 1 s (the
 * least the header can say) and `RateLimit-Reset` 0.
 */
import type { LimiterDecision, LimiterKind } from "./decision";

export function inFlight(settings: { maxInFlight: number }): LimiterKind {
  let serving = 0;
  return {
    async decide(): Promise<LimiterDecision> {
      const accepted = serving < settings.maxInFlight;
      if (accepted) serving++;
      return {
        accepted,
        limit: settings.maxInFlight,
        remaining: settings.maxInFlight - serving,
        resetMs: 0,
        retryAfterMs: 1000,
      };
    },
    release() {
      serving = Math.max(0, serving - 1);
    },
    close() {},
  };
}
