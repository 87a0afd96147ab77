import { ConnectorError } from "../errors";
import { redact } from "./redact";

/** What an HTTP error remembers of its request: method and address, never headers or body. */
export interface RequestSummary {
  method: string;
  /** Path and query, without the host, redacted. */
  path: string;
}

/** The upstream answered with a status the caller did not expect (after any retries). */
export class HttpStatusError extends ConnectorError {
  override name = "HttpStatusError";
  override readonly retryable: boolean;
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
    this.retryable = options.status === 429 || options.status >= 500;
  }

  static override is(error: unknown): error is HttpStatusError {
    return error instanceof HttpStatusError;
  }
}

/** No answer: connection refused or dropped, DNS failure, or the per-request timeout. */
export class NetworkError extends ConnectorError {
  override name = "NetworkError";
  override readonly retryable = true;
  readonly request: RequestSummary;

  constructor(request: RequestSummary, reason: string, cause?: unknown) {
    super(redact(`${request.method} ${request.path} got no answer: ${reason}`), { cause });
    this.request = request;
  }

  static override is(error: unknown): error is NetworkError {
    return error instanceof NetworkError;
  }
}

/** An upstream answered with a body this project cannot read: a precise zod path is in the message. */
export class UnexpectedResponseError extends ConnectorError {
  override name = "UnexpectedResponseError";
}
