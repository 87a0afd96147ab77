import { ConfigError, CredentialsRejectedError } from "../errors";
import { HttpStatusError, NetworkError, RateLimitedError } from "../http";
import { PlatformCredentialsError } from "../platform";
import { WriteFailedError } from "../sync/errors";
import { isPlatformError } from "./platformErrors";
import type { FailureKind, ReadinessProblem } from "./statusReport";

export type { FailureKind };

/**
 * The kind of `error`, from a call to `side` (a sync's requests are the upstream's, its upload and
 * the loop's calls the platform's): that tells whose a network error is.
 */
export function failureKindOf(error: unknown, side: "upstream" | "platform"): FailureKind {
  if (PlatformCredentialsError.is(error)) return "platform_credentials_rejected";
  if (ConfigError.is(error)) return "config_invalid";
  if (CredentialsRejectedError.is(error)) return "credentials_rejected";
  if (WriteFailedError.is(error)) return "write_failed";
  if (side === "platform" || (isPlatformError(error) && !NetworkError.is(error))) {
    return "platform_unavailable";
  }
  if (NetworkError.is(error)) return "upstream_unreachable";
  if (RateLimitedError.is(error) || (HttpStatusError.is(error) && error.status === 429)) {
    return "upstream_rate_limited";
  }
  if (HttpStatusError.is(error)) return "upstream_failed";
  return "other";
}

/** Failures that last until a person acts: readiness turns 503 on them. */
const NEEDS_A_PERSON: ReadonlySet<FailureKind> = new Set([
  "config_invalid",
  "credentials_rejected",
  "platform_credentials_rejected",
]);

interface Side {
  reached: boolean;
  problem?: { reason: FailureKind; detail: string };
}

/**
 * `/readyz`: ready once the platform answered `hello` and a sync got through the upstream, for as
 * long as neither refuses this host's credentials or configuration (those wait for a person; an
 * outage of either side is waited out and shows in /metrics and /status instead).
 */
export class Readiness {
  readonly #platform: Side = { reached: false };
  readonly #upstream: Side = { reached: false };
  #stopping = false;

  platformReached(): void {
    this.#platform.reached = true;
    this.#platform.problem = undefined;
  }

  upstreamReached(): void {
    this.#upstream.reached = true;
    this.#upstream.problem = undefined;
  }

  /** A failure of the platform's (`hello`, a poll, an upload) or of a sync's upstream part. */
  failed(side: "platform" | "upstream", reason: FailureKind, detail: string): void {
    if (NEEDS_A_PERSON.has(reason)) {
      (side === "platform" ? this.#platform : this.#upstream).problem = { reason, detail };
    }
  }

  stopping(): void {
    this.#stopping = true;
  }

  /** Empty when ready. */
  problems(): ReadinessProblem[] {
    const found: ReadinessProblem[] = [];
    if (this.#stopping) {
      found.push({ check: "service", reason: "stopping", detail: "the service is stopping" });
    }
    const sides = [
      ["platform", this.#platform, "the platform has not answered hello yet"],
      ["upstream", this.#upstream, "no sync has reached the upstream yet"],
    ] as const;
    for (const [check, side, waiting] of sides) {
      if (side.problem) found.push({ check, ...side.problem });
      else if (!side.reached) found.push({ check, reason: "not_reached_yet", detail: waiting });
    }
    return found;
  }
}
