/** What every limiter kind answers for one request, and the headers that carry it. */
import type { ParsedLimiterSettings } from "./settings";

export interface LimiterDecision {
  accepted: boolean;
  /** `RateLimit-Limit`: the most the limiter allows at once (requests in a window, a bucket's size). */
  limit: number;
  /** `RateLimit-Remaining`: what is left of it after this request. */
  remaining: number;
  /** `RateLimit-Reset`: milliseconds until the whole `limit` is available again. */
  resetMs: number;
  /** On a refusal: milliseconds until a request would be accepted (`Retry-After`). */
  retryAfterMs: number;
}

/** One kind of limiter, backed by its library. */
export interface LimiterKind {
  /** Decides in the order of calls: a call's counting happens before it returns its promise. */
  decide(): Promise<LimiterDecision>;
  /** For an accepted request, when its answer has been sent (only the in-flight cap counts it). */
  release(): void;
  /** Clears the library's timers. */
  close(): void;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** The decision's headers as `settings` asks: the state on every answer, `Retry-After` on a 429. */
export function decisionHeaders(
  settings: ParsedLimiterSettings,
  decision: LimiterDecision,
  now = Date.now(),
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (settings.headers) {
    const prefix = settings.headers;
    headers[`${prefix}-limit`] = String(decision.limit);
    headers[`${prefix}-remaining`] = String(decision.remaining);
    headers[`${prefix}-reset`] = String(seconds(decision.resetMs));
  }
  if (!decision.accepted && settings.retryAfter !== "none") {
    // Whole seconds, at least 1: the header cannot say less.
    const wait = Math.max(1, seconds(decision.retryAfterMs));
    headers["retry-after"] =
      settings.retryAfter === "seconds" ? String(wait) : new Date(now + wait * 1000).toUTCString();
  }
  return headers;
}
