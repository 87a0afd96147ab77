/**
 * The controllers a user would pick instead of ours, driven over the same fake-clock model
 * (`test/http/upstreamModel.ts`): each answers the model's calls the way it would in a client.
 * - AWS adaptive: the AWS SDK's own `AdaptiveRetryStrategy` (`@smithy/core/retry`, the
 *   `DefaultRateLimiter` behind `retryMode: "adaptive"`), called as the SDK's retry middleware
 *   calls it: a token before each first attempt, the throttling error's info (429 is a throttling
 *   error; `Retry-After` as `retryAfterHint`) before each retry, which also waits the SDK's backoff,
 *   and `recordSuccess` on each 2xx. After its 3 attempts (or its retry quota) the call fails, and
 *   the client, having endless work, makes the next call.
 * - AIMD: starts spaced evenly at a rate that grows by 2 a second each second and is multiplied by
 *   0.9 at each 429; the refused request waits its `Retry-After`, if any.
 * - Told: a client configured with the upstream's exact limiter, keeping a copy of it on its own
 *   clock (a bucket of the same rate and burst, full at its first start; windows opening at its
 *   first start after the last one closed, each `ARRIVAL_MARGIN_MS` late, as its requests arrive up to that late; the same
 *   log; the same cap in flight) and starting a request only when the copy would let it through.
 *   What it cannot know: a window's phase, the upstream's stalls, when exactly a request arrives.
 *   A window's 429 means the window is spent: every start waits for its `Retry-After` (else a
 *   second), and the copy's next window opens then. Any other 429 is a request that arrived a
 *   little early: it goes again when the copy allows.
 */
import { AdaptiveRetryStrategy } from "@smithy/core/retry";
import { START_RATE } from "../../lib/rate";
import type { ParsedLimiterSettings } from "../../lib/simulators/limiters/settings";
import type { GatedClient, PacedController } from "../../test/http/upstreamModel";

/** The SDK's tokens are its standard strategy's (what `recordSuccess` takes). */
type RetryToken = Parameters<AdaptiveRetryStrategy["recordSuccess"]>[0];

/** The AWS SDK's adaptive retry mode, with its own token bucket and backoff. */
export function awsAdaptive(): GatedClient<RetryToken> {
  const strategy = new AdaptiveRetryStrategy(async () => 3);
  return {
    async acquire(retryOf) {
      if (retryOf) {
        const retryAfterHint =
          retryOf.retryAfterMs === undefined
            ? undefined
            : new Date(Date.now() + retryOf.retryAfterMs);
        try {
          const token = await strategy.refreshRetryTokenForRetry(retryOf.token, {
            errorType: "THROTTLING",
            retryAfterHint,
          });
          return token as RetryToken;
        } catch {
          // Attempts or quota spent: the call fails; the next one starts afresh.
        }
      }
      return (await strategy.acquireInitialRetryToken("upstream")) as RetryToken;
    },
    succeeded: (token) => strategy.recordSuccess(token),
  };
}

/** Additive increase (2 a second, each second), multiplicative decrease (x0.9 a 429). */
export function aimd(): PacedController<undefined> {
  const GAIN_PER_SECOND = 2;
  const CUT = 0.9;
  const MIN_RATE = 0.5;
  let rate = START_RATE;
  let since: number | undefined;
  let lastStart = Number.NEGATIVE_INFINITY;
  const grow = (now: number) => {
    if (since !== undefined) rate += (GAIN_PER_SECOND * (now - since)) / 1000;
    since = now;
  };
  return {
    nextStartAt(now) {
      grow(now);
      return Math.max(now, lastStart + 1000 / rate);
    },
    start(now) {
      lastStart = now;
    },
    accepted() {},
    refused(_ticket, now, retryAfterMs) {
      grow(now);
      rate = Math.max(MIN_RATE, rate * CUT);
      return { retryAt: now + (retryAfterMs ?? 0) };
    },
  };
}

/** A client that keeps a copy of the upstream's limiter and starts only what it lets through. */
export function told(limiter: ParsedLimiterSettings): PacedController<undefined> {
  let heldUntil = Number.NEGATIVE_INFINITY;
  let inFlight = 0;
  const copy = limiterCopy(limiter);
  return {
    nextStartAt(now) {
      if (limiter.kind === "in_flight" && inFlight >= limiter.maxInFlight) return undefined;
      return Math.max(now, heldUntil, copy.nextAt(now));
    },
    start(now) {
      inFlight++;
      copy.take(now);
    },
    accepted() {
      inFlight--;
    },
    refused(_ticket, now, retryAfterMs) {
      inFlight--;
      if (limiter.kind !== "fixed_window") return { retryAt: now };
      heldUntil = now + (retryAfterMs ?? 1000);
      copy.restartAt(heldUntil);
      return { retryAt: heldUntil };
    },
  };
}

/** How late after its start a request may reach the upstream in the model (arrival and jitter). */
const ARRIVAL_MARGIN_MS = 2;

interface LimiterCopy {
  /** The earliest time (ms) at or after `now` the copy lets one more through. */
  nextAt(now: number): number;
  take(now: number): void;
  /** A window's copy opens its next window at `at` (the upstream said so). */
  restartAt(at: number): void;
}

function limiterCopy(limiter: ParsedLimiterSettings): LimiterCopy {
  switch (limiter.kind) {
    case "token_bucket": {
      let tokens = limiter.burst;
      let at: number | undefined;
      const refill = (now: number) => {
        if (at !== undefined) {
          tokens = Math.min(limiter.burst, tokens + ((now - at) * limiter.ratePerSecond) / 1000);
        }
        at = now;
      };
      return {
        nextAt(now) {
          refill(now);
          return tokens >= 1 ? now : now + ((1 - tokens) * 1000) / limiter.ratePerSecond;
        },
        take(now) {
          refill(now);
          tokens -= 1;
        },
        restartAt() {},
      };
    }
    case "fixed_window": {
      const length = limiter.windowSeconds * 1000;
      let opened: number | undefined;
      let count = 0;
      const roll = (now: number) => {
        if (opened === undefined || now >= opened + length + ARRIVAL_MARGIN_MS) {
          // A window opens at the first request after the last one closed, or on a fixed
          // cadence for a window opened at the limiter's start (whose phase it cannot know).
          opened =
            limiter.opensAt === "start" && opened !== undefined
              ? opened + Math.floor((now - opened) / length) * length
              : now;
          count = 0;
        }
      };
      return {
        nextAt(now) {
          roll(now);
          return count < limiter.limit ? now : (opened as number) + length + ARRIVAL_MARGIN_MS;
        },
        take(now) {
          roll(now);
          count++;
        },
        restartAt(at) {
          opened = at;
          count = 0;
        },
      };
    }
    case "sliding_log": {
      const length = limiter.windowSeconds * 1000;
      let log: number[] = [];
      return {
        nextAt(now) {
          log = log.filter((t) => t > now - length);
          return log.length < limiter.limit
            ? now
            : (log[log.length - limiter.limit] as number) + length;
        },
        take(now) {
          log.push(now);
        },
        restartAt() {},
      };
    }
    case "in_flight":
      return { nextAt: (now) => now, take() {}, restartAt() {} };
  }
}
