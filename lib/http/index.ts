export { type HttpCounters, newCounters } from "./counters";
export { HttpStatusError, NetworkError, UnexpectedResponseError } from "./errors";
export {
  describeErrorBody,
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type HttpResponse,
} from "./HttpClient";
export { parseResponse } from "./parseResponse";
export { RateLimiter, type RateLimiterSettings } from "./RateLimiter";
export { redact, registerSecret } from "./redact";
export { DEFAULT_RETRY, type RetrySettings } from "./retryPolicy";
export { type AccessToken, TokenCache } from "./TokenCache";
