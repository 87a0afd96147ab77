import { ConnectorError } from "../errors";
import { redact } from "../redact";

/** What an HTTP error remembers of its request: method and address, never headers or body. */
export interface RequestSummary {
  method: string;
  /** Path and query, without the host, redacted. */
  path: string;
}

/** The upstream answered with a status the caller did not expect (after any retries). */
export class HttpStatusError extends ConnectorError {
  override name = "HttpStatusError";
  override readonly code: string = "http_status";
  readonly status: number;
  readonly request: RequestSummary;
  /** The parsed response body (JSON when the server sent JSON, otherwise text), for mapping. */
  readonly body: unknown;
  readonly retryAfterMs: number | undefined;

  constructor(options: {
    status: number;
    request: RequestSummary;
    body: unknown;
    detail?: string;
    retryAfterMs?: number;
  }) {
    const detail = options.detail ? `: ${options.detail}` : "";
    super(
      redact(
        `${options.request.method} ${options.request.path} answered ${options.status}${detail}`,
      ),
    );
    this.status = options.status;
    this.request = options.request;
    this.body = options.body;
    this.retryAfterMs = options.retryAfterMs;
  }

  static override is(error: unknown): error is HttpStatusError {
    return error instanceof HttpStatusError;
  }
}

/**
 * The upstream asked us to slow down (429) and the caller chose to be told rather than to wait
 * (`RequestContext.onRateLimit: "throw"`): a queue worker puts its job back with this delay
 * instead of sleeping in a paid function.
 */
export class RateLimitedError extends ConnectorError {
  override name = "RateLimitedError";
  override readonly code = "rate_limited";
  readonly request: RequestSummary;
  /** How long to wait before trying again: `Retry-After`, or the backoff. */
  readonly waitMs: number;

  constructor(request: RequestSummary, waitMs: number) {
    super(redact(`${request.method} ${request.path} was rate limited; try again in ${waitMs} ms`));
    this.request = request;
    this.waitMs = waitMs;
  }

  static override is(error: unknown): error is RateLimitedError {
    return error instanceof RateLimitedError;
  }
}

/** No answer: connection refused or dropped, DNS failure, or the per-request timeout. */
export class NetworkError extends ConnectorError {
  override name = "NetworkError";
  override readonly code = "network";
  readonly request: RequestSummary;

  constructor(request: RequestSummary, reason: string, cause?: unknown) {
    super(redact(`${request.method} ${request.path} got no answer: ${reason}`), { cause });
    this.request = request;
  }

  static override is(error: unknown): error is NetworkError {
    return error instanceof NetworkError;
  }
}

/** The caller's abort signal fired (a Lambda running out of time, a service shutting down). */
export class AbortedError extends ConnectorError {
  override name = "AbortedError";
  override readonly code = "aborted";

  static override is(error: unknown): error is AbortedError {
    return error instanceof AbortedError;
  }
}

/** An upstream answered with a body this project cannot read: a precise zod path is in the message. */
export class UnexpectedResponseError extends ConnectorError {
  override name = "UnexpectedResponseError";
  override readonly code: string = "unexpected_response";
}

/** An answer larger than the response size cap: read no further, and do not try again. */
export class ResponseTooLargeError extends UnexpectedResponseError {
  override name = "ResponseTooLargeError";
  override readonly code: string = "response_too_large";

  static override is(error: unknown): error is ResponseTooLargeError {
    return error instanceof ResponseTooLargeError;
  }
}
