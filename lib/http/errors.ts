import { ConnectorError, messageOf } from "../errors";
import { redact } from "../redact";
import type { NoAnswer } from "./counters";

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
}

/**
 * The upstream asked us to slow down (429) and the caller chose to be told rather than to wait
 * (`RequestContext.onRateLimit: "throw"`): a queue worker puts its job back with this delay
 * instead of sleeping in a paid function. Also a request that waited out its whole rate-limit
 * budget (the message names the setting).
 */
export class RateLimitedError extends ConnectorError {
  override name = "RateLimitedError";
  override readonly code = "rate_limited";
  readonly request: RequestSummary;
  /** How long to wait before trying again: `Retry-After`, or the backoff. */
  readonly waitMs: number;

  constructor(request: RequestSummary, waitMs: number, message?: string) {
    super(
      redact(
        message ?? `${request.method} ${request.path} was rate limited; try again in ${waitMs} ms`,
      ),
    );
    this.request = request;
    this.waitMs = waitMs;
  }
}

/** Why a request timed out: the bound, its value, and the variable that raises it. */
function timeoutReason(timeoutMs: number, variable?: string): string {
  const raise = variable ? `; raise ${variable} for a slow upstream (e.g. 60s)` : "";
  return `no complete answer within ${timeoutMs} ms, the per-request timeout${raise}`;
}

/** How a request sent ended without an answer, for the counters (`countEnd`). */
export function noAnswerOf(error: unknown, signal: AbortSignal | undefined): NoAnswer {
  if (signal?.aborted) return "aborted";
  if (ResponseTooLargeError.is(error)) return "too_large";
  return isTimeout(error) ? "timeout" : "network_error";
}

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}

/** Why a request got no answer: the timeout, or the network error's code and message. */
export function noAnswerReason(
  error: unknown,
  timeoutMs: number,
  timeoutVariable?: string,
): string {
  if (isTimeout(error)) {
    return timeoutReason(timeoutMs, timeoutVariable);
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string }) : undefined;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ""}`;
  if (cause?.message) return cause.message;
  return messageOf(error);
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
}

/** The caller's abort signal fired (a Lambda running out of time, a service shutting down). */
export class AbortedError extends ConnectorError {
  override name = "AbortedError";
  override readonly code = "aborted";
}

/** An upstream answered with a body this project cannot read: a precise zod path is in the message. */
export class UnexpectedResponseError extends ConnectorError {
  override name = "UnexpectedResponseError";
  override readonly code: string = "unexpected_response";
}

/**
 * The variables that set the HTTP layer's bounds, named by the failures they cause so a person
 * knows what to change (an HTTP client without them, such as a test's, says only the bound).
 */
export interface HttpBoundVariables {
  /** Raises the response size cap, e.g. `CONNECTOR_ACCOUNTING_MAX_RESPONSE_MIB`. */
  maxResponse?: string;
  /** Raises the per-request timeout, e.g. `CONNECTOR_ACCOUNTING_REQUEST_TIMEOUT`. */
  requestTimeout?: string;
  /** Makes list pages smaller, e.g. `CONNECTOR_ACCOUNTING_PAGE_SIZE`. */
  pageSize?: string;
}

const MIB = 2 ** 20;

/** An answer larger than the response size cap: read no further, and do not try again. */
export class ResponseTooLargeError extends UnexpectedResponseError {
  override name = "ResponseTooLargeError";
  override readonly code: string = "response_too_large";
  /** The cap that was passed, in bytes. */
  readonly maxBytes: number;

  constructor(request: RequestSummary, maxBytes: number, variables: HttpBoundVariables = {}) {
    const cap = maxBytes % MIB === 0 ? `${maxBytes / MIB} MiB` : `${maxBytes} bytes`;
    const { maxResponse, pageSize } = variables;
    const bound = maxResponse
      ? `the response size cap (${maxResponse}, now ${cap})`
      : "the response size cap";
    const fix =
      maxResponse && pageSize
        ? `a list page this large wants smaller pages: lower ${pageSize}, or raise ${maxResponse} (at most 1024 MiB)`
        : "a list page this large means a page size too big for this upstream: lower the connector's PAGE_SIZE";
    super(
      redact(
        `${request.method} ${request.path}: the answer is larger than ${cap}, ${bound}, so it was not read; ${fix}`,
      ),
    );
    this.maxBytes = maxBytes;
  }
}
