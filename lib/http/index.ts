export { START_RATE } from "../rate";
export { onAbort, sleepUnlessAborted } from "./abortListeners";
export {
  type AccessToken,
  askingAhead,
  newRequestContext,
  type RequestContext,
  type SharedPermit,
  type SharedRate,
  type SharedTokens,
} from "./context";
export { type HttpCounters, type NoAnswer, newCounters } from "./counters";
export {
  AbortedError,
  HttpStatusError,
  NetworkError,
  RateLimitedError,
  type RequestSummary,
  ResponseTooLargeError,
  UnexpectedResponseError,
} from "./errors";
export { HttpClient } from "./HttpClient";
export { Prefetched } from "./Prefetched";
export { parseEach, parseResponse } from "./parseResponse";
export {
  RateLimiter,
  type RateLimiterSettings,
  rateChange,
  rateView,
} from "./RateLimiter";
export {
  backoffDelayMs,
  DEFAULT_RATE_LIMIT_WAIT_SECONDS,
  DEFAULT_RETRY,
  isRetryableError,
  isRetryableStatus,
  parseRetryAfter,
  type RetrySettings,
} from "./retryPolicy";
export { TokenCache } from "./TokenCache";
export type { HttpClientOptions, HttpRequest, HttpResponse } from "./types";
export { type UpstreamOptions, type UpstreamSettings, upstreamClient } from "./upstreamClient";
export { describeErrorBody, printable, readJsonAnswer } from "./upstreamText";
