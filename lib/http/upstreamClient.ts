import { HttpClient } from "./HttpClient";
import { RateLimiter } from "./RateLimiter";
import type { RetrySettings } from "./retryPolicy";
import type { TokenCache } from "./TokenCache";

/** The settings every connector's configuration has for its upstream. */
export interface UpstreamSettings {
  baseUrl: string;
  maxConcurrency: number;
  requestsPerSecond: number;
}

/** How a connector's upstream client is built: shorter timeouts and backoff for tests and Lambdas. */
export interface UpstreamOptions {
  timeoutMs?: number;
  /** The largest answer read, after decompression; default 64 MiB. */
  maxResponseBytes?: number;
  retry?: Partial<RetrySettings>;
}

/** One upstream's HTTP client: its own limiter and token cache; counters and logger come per call. */
export function upstreamClient(
  settings: UpstreamSettings,
  tokens: TokenCache,
  options: UpstreamOptions = {},
): HttpClient {
  return new HttpClient({
    baseUrl: settings.baseUrl,
    limiter: new RateLimiter({
      maxConcurrency: settings.maxConcurrency,
      requestsPerSecond: settings.requestsPerSecond,
    }),
    tokens,
    ...options,
  });
}
