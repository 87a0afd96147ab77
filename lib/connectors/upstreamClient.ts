import { HttpClient, type HttpCounters, RateLimiter, type TokenCache } from "../http";
import type { ApiOptions } from "./types";

/** The settings every connector's configuration has for its upstream. */
export interface UpstreamSettings {
  baseUrl: string;
  maxConcurrency: number;
  requestsPerSecond: number;
}

/** One connector's HTTP client: its own limiter, its counters, its token cache. */
export function upstreamClient(
  settings: UpstreamSettings,
  counters: HttpCounters,
  tokens: TokenCache,
  options: ApiOptions,
): HttpClient {
  return new HttpClient({
    baseUrl: settings.baseUrl,
    limiter: new RateLimiter({
      maxConcurrency: settings.maxConcurrency,
      requestsPerSecond: settings.requestsPerSecond,
    }),
    counters,
    tokens,
    ...options,
  });
}
