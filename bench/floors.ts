/**
 * The limiter matrix's floors: the earliest a client that knows the upstream's limiter exactly
 * could have every answer, given the latency, its concurrency and the lists' chains of pages. A
 * lower bound: what the limiter lets through, at best, and what the chains and the concurrency
 * allow, whichever comes last.
 *
 * The client sends `requests` = the minimum plus the token request, which goes first (the lists
 * wait for its answer) and passes the limiter like any other. With N requests, latency L,
 * concurrency C and the longest chain of T round trips (a list's pages as the connector reads
 * them: its first, then `PAGES_AHEAD` + 1 a round trip; the token request before it):
 * - any kind: at least (1 + T) x L (the chain) and ceil(N / C) x L (C at a time);
 * - token bucket of rate r and burst b, full at the start: by time t at most b + r x t requests
 *   are let through, so the last goes at (N - b) / r at the earliest, and is answered L later;
 * - fixed window of W per s seconds (a window opens at the first request after the last one
 *   closed): ceil(N / W) windows, the last opening (ceil(N / W) - 1) x s after the first; its
 *   remainder R = N - (ceil(N / W) - 1) x W goes out C at a time: + ceil(R / C) x L. A window of
 *   3,000 a minute never binds 579 requests; one of 500 per 10 s makes the client wait for the
 *   second window for its last 79;
 * - sliding log of W per s seconds: no more than W in any s, so the same bound as the fixed window
 *   (W at once, the next W once the first have left the window);
 * - cap of k in flight: k at a time, each L: ceil(N / k) x L.
 */
import type { LimiterSettings } from "../lib/simulators/limiters";

export interface FloorInput {
  limiter: LimiterSettings;
  /** Requests through the limiter: the minimum plus the token request. */
  requests: number;
  latencyMs: number;
  concurrency: number;
  /** The longest chain of round trips (the token request not counted). */
  chainRoundTrips: number;
}

/** Seconds: the floor of `input`'s run. */
export function limiterFloorSeconds(input: FloorInput): number {
  const { limiter, requests: n, concurrency: c } = input;
  const latency = input.latencyMs / 1000;
  const rounds = (count: number, width: number) => Math.ceil(count / width) * latency;
  const byChain = (1 + input.chainRoundTrips) * latency;
  const byConcurrency = rounds(n, c);
  return Math.max(byChain, byConcurrency, byLimiter());

  function byLimiter(): number {
    switch (limiter.kind) {
      case "token_bucket":
        return Math.max(0, (n - limiter.burst) / limiter.ratePerSecond) + latency;
      case "fixed_window":
      case "sliding_log": {
        const windows = Math.ceil(n / limiter.limit);
        const remainder = n - (windows - 1) * limiter.limit;
        return (windows - 1) * limiter.windowSeconds + rounds(remainder, c);
      }
      case "in_flight":
        return rounds(n, Math.min(c, limiter.maxInFlight));
    }
  }
}
