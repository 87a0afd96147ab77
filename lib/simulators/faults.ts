/**
 * Fault knobs shared by the simulators. Faults are counted, not random: request number n (from 1)
 * gets a fault when n is a multiple of the fault's `every`, so a run is repeatable and a test can
 * say how many faults it injected.
 */
import type { BodyBehaviour } from "./bodyBehaviour";
import type { DataChange, FaultSchedule, PagingFault } from "./faultSchedule";
import type { LimiterSettings } from "./limiters/settings";
import type { QuotaSettings, RateLimitSettings } from "./throttle";

export interface FaultSettings {
  /** Added to every answer. */
  latencyMs?: number;
  /** The upstream's enforced rate limit (a sliding one-second window); see `Throttle`. */
  limit?: RateLimitSettings;
  /** The upstream's quota: a block of 429s without `Retry-After` after every N requests. */
  quota?: QuotaSettings;
  /**
   * The upstream's rate limiter from a library nobody here wrote: a token bucket, a fixed window,
   * a sliding log or a cap on requests in flight (see `limiters/` and README.md beside this file).
   * Checked after `limit` and `quota`, which a request must pass first.
   */
  limiter?: LimiterSettings;
  /** Every Nth request is answered 429; `retryAfter` picks the header form. */
  rateLimit?: { every: number; retryAfter?: "seconds" | "date" | "none"; seconds?: number };
  /** Every Nth request starts a burst of `burst` answers of 502, 503 and 504 in turn. */
  serverErrors?: { every: number; burst?: number };
  /** Every Nth request has its connection closed without an answer. */
  dropConnections?: { every: number };
  /** Every Nth request is answered only after `delayMs` (beyond a client's timeout). */
  slowResponses?: { every: number; delayMs: number };
  /** Every Nth request is carried out, then answered 502: the change happened, the client cannot know. */
  lostAnswers?: { every: number };
  /**
   * Count per request instead of across all: attempt k of a request (method and URL) is number
   * `hash(request) + k`, so which attempts of which requests fail does not depend on how
   * concurrent requests interleave, and a test with many clients at once is repeatable.
   */
  perRequest?: boolean;
  /** Faults decided per request from a seed (see `faultSchedule.ts`); applied after the above. */
  schedule?: FaultSchedule;
  /** Headers late, a body that trickles or one that stops partway (see `bodyBehaviour.ts`). */
  body?: BodyBehaviour;
  /** Lists whose pages repeat items or go round in a cycle. */
  pages?: PagingFault;
  /** A user added or removed while the users list is read. */
  change?: DataChange;
}

export type Fault =
  | { kind: "drop" }
  | { kind: "lost_answer" }
  | { kind: "slow"; delayMs: number }
  | { kind: "status"; status: number; headers: Record<string, string> };

/** The fault for request number `n`, if any. */
export function faultFor(n: number, settings: FaultSettings, now = Date.now()): Fault | undefined {
  const { dropConnections, slowResponses, rateLimit, serverErrors, lostAnswers } = settings;
  if (dropConnections && n % dropConnections.every === 0) return { kind: "drop" };
  if (lostAnswers && n % lostAnswers.every === 0) return { kind: "lost_answer" };
  if (slowResponses && n % slowResponses.every === 0) {
    return { kind: "slow", delayMs: slowResponses.delayMs };
  }
  if (rateLimit && n % rateLimit.every === 0) {
    const seconds = rateLimit.seconds ?? 1;
    const headers: Record<string, string> = {};
    if (rateLimit.retryAfter === "seconds") headers["retry-after"] = String(seconds);
    if (rateLimit.retryAfter === "date") {
      headers["retry-after"] = new Date(now + seconds * 1000).toUTCString();
    }
    return { kind: "status", status: 429, headers };
  }
  if (serverErrors) {
    const position = n % serverErrors.every;
    if (position < (serverErrors.burst ?? 1)) {
      return { kind: "status", status: [502, 503, 504][n % 3] as number, headers: {} };
    }
  }
  return undefined;
}
