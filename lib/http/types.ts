/** What `HttpClient` is built with, what a request says, and the answer it gives back. */
import type { Readable } from "node:stream";
import type { RequestContext } from "./context";
import type { HttpBoundVariables } from "./errors";
import type { RateLimiter } from "./RateLimiter";
import type { RateLimitWait, RetrySettings } from "./retryPolicy";
import type { TokenCache } from "./TokenCache";

export interface HttpClientOptions {
  /** Scheme, host and optional path prefix, e.g. `https://us.api.blackline.com`. */
  baseUrl: string;
  /**
   * Paces the requests and waits out 429s. Without one (the platform's client) requests start at
   * once and a 429 is retried as a 503 is: an attempt, after its `Retry-After` or the backoff.
   */
  limiter?: RateLimiter;
  /** Source of the bearer token; requests are anonymous without one. */
  tokens?: TokenCache;
  /** Per-attempt timeout, headers and body included. */
  timeoutMs?: number;
  /** The largest answer read, counted after decompression; default 64 MiB. */
  maxResponseBytes?: number;
  /** The variables that raise those bounds, named in the errors they cause. */
  boundVariables?: HttpBoundVariables;
  retry?: Partial<RetrySettings>;
  /** The statuses worth another attempt; default `isRetryableStatus` (the platform adds 500). */
  retryableStatus?: (status: number, idempotent: boolean) => boolean;
  /** How long a request answered 429 keeps waiting and trying; default 300 s. */
  rateLimitWait?: RateLimitWait;
  /** The context of calls that pass none (a long-lived client with counters of its own). */
  context?: RequestContext;
}

export interface HttpRequest {
  method: "GET" | "POST" | "PATCH" | "PUT";
  /** Path below the base address, starting with `/`; callers encode path segments. */
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  form?: Record<string, string>;
  /**
   * A body streamed from its source, opened afresh for each attempt (a file) and closed after it;
   * its `content-type` and `content-length` go in `headers`.
   */
  stream?: () => Readable;
  headers?: Record<string, string>;
  /** Media type of a `json` body (SCIM wants `application/scim+json`). */
  contentType?: string;
  /** Send the bearer token; default true when the client has a token cache. */
  authenticate?: boolean;
  /** Safe to repeat after an uncertain failure; default true for GET only. */
  idempotent?: boolean;
  /** This request's per-attempt timeout, when not the client's (a large upload). */
  timeoutMs?: number;
  /** Hand the body over as the text received, not parsed (a caller that reads it itself). */
  rawBody?: boolean;
  /**
   * Reads a successful JSON answer's bytes itself (decoded: gzip and the like undone), for a caller
   * that needs only part of a large body: what it returns is the body, and undefined leaves the
   * answer to be parsed as any other. An error answer is always read as any other.
   */
  readJson?: (bytes: Buffer) => unknown;
}

/**
 * An answer's headers as the client reads them: by name, case-insensitive, repeated values joined
 * by ", " (`Headers.get`). Answers over node:http carry a plain map, not undici's `Headers`, whose
 * first use loads undici (about 40 ms, before a command's first page); a `Headers` fits.
 */
export interface AnswerHeaders {
  get(name: string): string | null;
}

export interface HttpResponse {
  status: number;
  headers: AnswerHeaders;
  /** Parsed JSON when the server sent JSON, the text otherwise or if `rawBody`; undefined when empty. */
  body: unknown;
}
