export { newRequestContext, type RequestContext } from "./context";
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
export { RateLimiter, type RateLimiterSettings } from "./RateLimiter";
export {
  backoffDelayMs,
  DEFAULT_RETRY,
  isRetryableError,
  isRetryableStatus,
  parseRetryAfter,
  type RetrySettings,
} from "./retryPolicy";
export { type AccessToken, TokenCache } from "./TokenCache";
export { type UpstreamOptions, type UpstreamSettings, upstreamClient } from "./upstreamClient";
