export { AdaptiveRate, type AdaptiveRateSettings, BETA, START_RATE } from "./AdaptiveRate";
export { newRequestContext, type RequestContext, type SharedRate } from "./context";
export { type HttpCounters, newCounters } from "./counters";
export {
  AbortedError,
  type HttpBoundVariables,
  HttpStatusError,
  NetworkError,
  RateLimitedError,
  type RequestSummary,
  ResponseTooLargeError,
  timeoutReason,
  UnexpectedResponseError,
} from "./errors";
export {
  describeErrorBody,
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type HttpResponse,
  printable,
} from "./HttpClient";
export { parseResponse } from "./parseResponse";
export {
  type AcquireOptions,
  type Permit,
  RateLimiter,
  type RateLimiterSettings,
} from "./RateLimiter";
export {
  backoffDelayMs,
  DEFAULT_RATE_LIMIT_WAIT_SECONDS,
  DEFAULT_RETRY,
  isRetryableError,
  isRetryableStatus,
  parseRateLimitState,
  parseRetryAfter,
  type RateLimitState,
  type RateLimitWait,
  type RetrySettings,
} from "./retryPolicy";
export { type AccessToken, TokenCache } from "./TokenCache";
export { type UpstreamOptions, type UpstreamSettings, upstreamClient } from "./upstreamClient";
