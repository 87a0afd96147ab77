/**
 * An upstream's own limits, enforced the way servers do: a rate limit over a sliding one-second
 * window of accepted requests, and a quota that blocks all requests for a while after every so
 * many. A refused request is answered 429 and does not count against either.
 */
export interface RateLimitSettings {
  /** At most this many requests accepted in any one-second window. */
  requestsPerSecond: number;
  /** Send `Retry-After` (whole seconds until a slot frees, at least 1) on a 429; default true. */
  retryAfter?: boolean;
  /**
   * Send the limit's state on every answer: `RateLimit-Limit`, `-Remaining`, `-Reset` (IETF
   * draft), or the same with the `X-RateLimit-` prefix; `Reset` is seconds until a slot frees.
   */
  headers?: "ratelimit" | "x-ratelimit";
}

export interface QuotaSettings {
  /** After every this many accepted requests, the block starts. */
  requests: number;
  /** For this long every request is answered 429 without `Retry-After`. */
  blockSeconds: number;
}

export interface ThrottleDecision {
  accepted: boolean;
  /** The limit's state (when asked for), and `Retry-After` on a refusal. */
  headers: Record<string, string>;
}

const WINDOW_MS = 1000;

export class Throttle {
  /** Arrival times of the requests accepted in the current window, oldest first. */
  readonly #window: number[] = [];
  #accepted = 0;
  #blockedUntil = 0;
  /** Requests answered 429 by the limit or the quota. */
  refused = 0;

  check(
    limit: RateLimitSettings | undefined,
    quota: QuotaSettings | undefined,
    now: number,
  ): ThrottleDecision {
    if (quota && now < this.#blockedUntil) return this.#refuse({});
    if (!limit) return this.#accept(quota, now, {});
    while (this.#window.length > 0 && (this.#window[0] as number) <= now - WINDOW_MS) {
      this.#window.shift();
    }
    const full = this.#window.length >= limit.requestsPerSecond;
    const resetSeconds =
      this.#window.length === 0
        ? 0
        : Math.max(1, Math.ceil(((this.#window[0] as number) + WINDOW_MS - now) / 1000));
    if (full) {
      const headers = stateHeaders(limit, 0, resetSeconds);
      if (limit.retryAfter !== false) headers["retry-after"] = String(resetSeconds);
      return this.#refuse(headers);
    }
    this.#window.push(now);
    const remaining = limit.requestsPerSecond - this.#window.length;
    return this.#accept(quota, now, stateHeaders(limit, remaining, Math.max(1, resetSeconds)));
  }

  #accept(
    quota: QuotaSettings | undefined,
    now: number,
    headers: Record<string, string>,
  ): ThrottleDecision {
    this.#accepted++;
    if (quota && this.#accepted % quota.requests === 0) {
      this.#blockedUntil = now + quota.blockSeconds * 1000;
    }
    return { accepted: true, headers };
  }

  #refuse(headers: Record<string, string>): ThrottleDecision {
    this.refused++;
    return { accepted: false, headers };
  }
}

function stateHeaders(
  limit: RateLimitSettings,
  remaining: number,
  resetSeconds: number,
): Record<string, string> {
  if (!limit.headers) return {};
  const prefix = limit.headers === "ratelimit" ? "ratelimit" : "x-ratelimit";
  return {
    [`${prefix}-limit`]: String(limit.requestsPerSecond),
    [`${prefix}-remaining`]: String(remaining),
    [`${prefix}-reset`]: String(resetSeconds),
  };
}
