import { type Logger, silentLogger } from "../logging";
import { type HttpCounters, newCounters } from "./counters";
import type { Prefetched } from "./Prefetched";

/**
 * Per-call state of the HTTP layer: what one run (a CLI sync, one Lambda invocation, one service
 * task) counts, logs and may abort. It is passed with each call, never kept by a client or a
 * connector, so a connector that a warm Lambda reuses carries nothing from one run to the next.
 */
export interface RequestContext {
  counters: HttpCounters;
  logger: Logger;
  /** Aborts waits and requests in flight, e.g. when a Lambda is about to run out of time. */
  signal?: AbortSignal;
  /**
   * On a 429: `wait` (the default) pauses every request of the client and tries again; `throw`
   * fails with `RateLimitedError` carrying the wait, for a caller that can wait for free.
   */
  onRateLimit?: "wait" | "throw";
  /**
   * With `throw`: a request's first 429 whose wait fits in `leftMs` (shared by every request of
   * the call, and spent by each wait) is waited here and the request tried again; a longer wait,
   * a second 429, and any once it is spent throw. A window's own wait is shorter than a queue's
   * round trip, and a job sent back takes its demand off the rate being learned.
   */
  waitInPlace?: { leftMs: number };
  /**
   * The request rate the workers of one cloud instance share, on top of the client's own limiter
   * (`lib/cloud/aws/sharedRate.ts`).
   */
  sharedRate?: SharedRate;
  /** The bearer token the workers of one cloud instance share (`lib/cloud/aws/sharedTokens.ts`). */
  sharedTokens?: SharedTokens;
  /** Of this call's requests in the client's limiter: higher starts first (`AcquireOptions`). */
  priority?: number;
  /**
   * Answers asked for ahead of the jobs that read them (a list's next pages) in this process: a
   * local run's, or a cloud delivery's pages within its bound (`runJobPages`); absent, nothing is
   * asked ahead.
   */
  prefetched?: Prefetched;
}

/** A request rate shared beyond this process. */
export interface SharedRate {
  /** Waits for a permit before each request; the request's answer is told to the permit, once. */
  permit(signal?: AbortSignal): Promise<SharedPermit>;
}

export interface AccessToken {
  value: string;
  /** Epoch milliseconds at which the upstream stops accepting the token. */
  expiresAt: number;
}

/** A bearer token kept beyond this process: one login for many processes. */
export interface SharedTokens {
  /** The token kept, if any is and has not expired. */
  load(): Promise<AccessToken | undefined>;
  save(token: AccessToken): Promise<void>;
}

/** One request's start of a `SharedRate`: how the upstream answered it. */
export interface SharedPermit {
  /** Any answer but 429. */
  accepted(): void;
  /** A 429, with its `Retry-After`: resolves once the shared rate has taken it in. */
  refused(retryAfterMs: number | undefined): Promise<void>;
  /** No answer at all. */
  unanswered(): void;
}

/**
 * The context of requests asked for ahead of the jobs that read them: half a step behind the one
 * they are asked from, so a list's pages ahead go after every list's current page, and before the
 * requests of the step below (memberships).
 */
export function askingAhead(ctx: RequestContext): RequestContext {
  return { ...ctx, priority: (ctx.priority ?? 0) - 0.5 };
}

export function newRequestContext(options: Partial<RequestContext> = {}): RequestContext {
  return { counters: newCounters(), logger: silentLogger, ...options };
}
