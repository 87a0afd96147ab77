/** What the HTTP layer did, for the sync summary and metrics. */
export interface HttpCounters {
  /** Requests sent, every attempt counted, token calls included. */
  requests: number;
  /**
   * How each request sent ended, by the status of its answer ("200", "429", ...) or `NoAnswer`:
   * one count per request, so the counts add up to `requests`.
   */
  statuses: Record<string, number>;
  /** Attempts that repeated an earlier one. */
  retries: number;
  /** Times a 429 made the client wait, and the milliseconds spent waiting. */
  rateLimitWaits: number;
  rateLimitWaitMs: number;
  /** Tokens fetched (the first one and every refresh). */
  tokenRequests: number;
  /**
   * The rate (requests per second) the client's limiter learned the upstream sustains, as of its
   * last answer; 0 when none was learned (no 429 nor `RateLimit-Limit` yet, or no limiter).
   */
  learnedRate: number;
}

/** A request sent that got no answer: the attempt's deadline passed, the caller aborted, the connection failed, or the answer was over the size bound. */
export type NoAnswer = "timeout" | "aborted" | "network_error" | "too_large";

export function newCounters(): HttpCounters {
  return {
    requests: 0,
    statuses: {},
    retries: 0,
    rateLimitWaits: 0,
    rateLimitWaitMs: 0,
    tokenRequests: 0,
    learnedRate: 0,
  };
}

/** Counts how one request sent ended: the status of its answer, or why there was none. */
export function countEnd(counters: HttpCounters, end: number | NoAnswer): void {
  counters.statuses[end] = (counters.statuses[end] ?? 0) + 1;
}
