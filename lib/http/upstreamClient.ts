import type { UpstreamBounds } from "../config";
import { HttpClient } from "./HttpClient";
import { RateLimiter } from "./RateLimiter";
import { DEFAULT_RATE_LIMIT_WAIT_SECONDS, type RetrySettings } from "./retryPolicy";
import type { TokenCache } from "./TokenCache";

/** The settings every connector's configuration has for its upstream. */
export interface UpstreamSettings {
  baseUrl: string;
  maxConcurrency: number;
  /** Unset: learned from the upstream; 0: no client-side ceiling; N: at most N per second. */
  requestsPerSecond: number | undefined;
  /** How long a request answered 429 keeps waiting; default 300. */
  rateLimitWaitSeconds?: number | undefined;
  bounds: UpstreamBounds;
}

/** How a connector's upstream client is built: shorter timeouts and backoff for tests and Lambdas. */
export interface UpstreamOptions {
  /** The runtime's per-request timeout, when the connector's REQUEST_TIMEOUT is not set. */
  timeoutMs?: number;
  retry?: Partial<RetrySettings>;
}

/**
 * One upstream's HTTP client: its own limiter and token cache; counters and logger come per call.
 * `waitVariable` is the setting a rate-limit error names (`CONNECTOR_<APP>_RATE_LIMIT_WAIT_SECONDS`).
 */
export function upstreamClient(
  settings: UpstreamSettings,
  tokens: TokenCache,
  waitVariable: string,
  options: UpstreamOptions = {},
): HttpClient {
  const { bounds } = settings;
  return new HttpClient({
    baseUrl: settings.baseUrl,
    limiter: new RateLimiter({
      maxConcurrency: settings.maxConcurrency,
      requestsPerSecond: settings.requestsPerSecond,
    }),
    tokens,
    rateLimitWait: {
      budgetMs: (settings.rateLimitWaitSeconds ?? DEFAULT_RATE_LIMIT_WAIT_SECONDS) * 1000,
      variable: waitVariable,
    },
    ...options,
    timeoutMs: bounds.requestTimeoutMs.value ?? options.timeoutMs,
    maxResponseBytes: bounds.maxResponseBytes.value,
    boundVariables: {
      maxResponse: bounds.maxResponseBytes.variable,
      requestTimeout: bounds.requestTimeoutMs.variable,
      pageSize: bounds.pageSizeVariable,
    },
  });
}
