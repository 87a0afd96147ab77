import { createReadStream } from "node:fs";
import type * as z from "zod";
import {
  type AccessToken,
  HttpClient,
  type HttpCounters,
  type HttpRequest,
  type HttpResponse,
  newRequestContext,
  type RequestContext,
  type RequestSummary,
  TokenCache,
} from "../http";
import { redact, registerSecret } from "../redact";
import {
  CONTENT_SHA256_HEADER,
  DEFAULT_PLATFORM_RETRY,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_UPLOAD_TIMEOUT_MS,
  isRetryablePlatformStatus,
  PLATFORM_PATHS,
  type StatusLabel,
} from "./constants";
import { digestFile } from "./digestFile";
import {
  acknowledgement,
  type HelloAnswer,
  helloAnswer,
  nextTaskAnswer,
  type PlatformTask,
  tokenAnswer,
} from "./models";
import { parseAnswer, platformError } from "./parseAnswer";
import type {
  CallOptions,
  HelloRequest,
  PlatformClientOptions,
  TaskOutcome,
  UploadResult,
} from "./types";

/** Token lifetime assumed when the platform's token answer has no `expires_in`. */
const DEFAULT_TOKEN_LIFETIME_S = 3600;

/**
 * The platform protocol of docs/platform-protocol.md on the HTTP layer's `HttpClient` (timeouts of
 * headers and body, retries, `Retry-After`, the token cache). Every call is retried on no answer,
 * 429 and 5xx (the protocol's calls are idempotent), each 429 as one of the attempts (no rate
 * limiter: the service's own loop waits between calls); a 401 refreshes the token once; every
 * answer is parsed. Snapshot uploads stream the file from disk, re-opened for each attempt.
 */
export class PlatformClient {
  readonly #options: PlatformClientOptions;
  readonly #context: RequestContext;
  readonly #http: HttpClient;

  constructor(options: PlatformClientOptions) {
    registerSecret(options.clientSecret);
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
    this.#context = newRequestContext(options.logger ? { logger: options.logger } : {});
    const { attempts, ...delays } = { ...DEFAULT_PLATFORM_RETRY, ...options.retry };
    this.#http = new HttpClient({
      baseUrl: this.#options.baseUrl,
      tokens: new TokenCache((ctx) => this.#fetchToken(ctx)),
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retry: { ...delays, maxAttempts: attempts },
      retryableStatus: isRetryablePlatformStatus,
      context: this.#context,
    });
  }

  /** Requests sent (every attempt, token calls included), retries and tokens fetched. */
  get counters(): Readonly<HttpCounters> {
    return this.#context.counters;
  }

  /** Announces this host; the answer says how often to poll for tasks. */
  async hello(request: HelloRequest, options: CallOptions = {}): Promise<HelloAnswer> {
    const body = { hostId: this.#options.hostId, ...request };
    return this.#postJson(PLATFORM_PATHS.hello, body, helloAnswer, options);
  }

  /** The next task for this host, or null when there is none. */
  async nextTask(options: CallOptions = {}): Promise<PlatformTask | null> {
    const body = { hostId: this.#options.hostId };
    const answer = await this.#postJson(PLATFORM_PATHS.nextTask, body, nextTaskAnswer, options);
    return answer.task;
  }

  /** Keeps a long task alive. */
  async heartbeat(taskId: string, options: CallOptions = {}): Promise<void> {
    await this.#postJson(
      PLATFORM_PATHS.heartbeat(nonEmpty(taskId, "taskId")),
      {},
      acknowledgement,
      options,
    );
  }

  async finishTask(taskId: string, outcome: TaskOutcome, options: CallOptions = {}): Promise<void> {
    const path = PLATFORM_PATHS.finish(nonEmpty(taskId, "taskId"));
    await this.#postJson(path, outcome, acknowledgement, options);
  }

  /** Sets the label users see on the connector: Syncing, Connected or Error (with the reason). */
  async setStatus(label: StatusLabel, detail?: string, options: CallOptions = {}): Promise<void> {
    const body = detail === undefined ? { label } : { label, detail };
    await this.#postJson(PLATFORM_PATHS.status, body, acknowledgement, options);
  }

  /**
   * Uploads a gzip snapshot file for `syncId`. The file is hashed, then sent, as streams: it is
   * never read whole into memory. Each attempt re-opens the file.
   */
  async uploadSnapshot(
    syncId: string,
    source: string,
    options: CallOptions = {},
  ): Promise<UploadResult> {
    const { sha256, bytes } = await digestFile(source);
    const path = PLATFORM_PATHS.snapshot(nonEmpty(syncId, "syncId"));
    let attempts = 0;
    const answer = await this.#call(
      {
        method: "PUT",
        path,
        headers: {
          "content-type": "application/gzip",
          "content-length": String(bytes),
          [CONTENT_SHA256_HEADER]: sha256,
        },
        stream: () => {
          attempts++;
          return createReadStream(source);
        },
        timeoutMs: this.#options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS,
      },
      this.#ctx(options),
    );
    parseAnswer(acknowledgement, answer, this.#summary("PUT", path));
    return { sha256, bytes, attempts };
  }

  async #postJson<Schema extends z.ZodType>(
    path: string,
    json: unknown,
    schema: Schema,
    options: CallOptions,
  ): Promise<z.output<Schema>> {
    const answer = await this.#call({ method: "POST", path, json }, this.#ctx(options));
    return parseAnswer(schema, answer, this.#summary("POST", path));
  }

  /** One call of the protocol: idempotent, its body read as text; errors as the platform's. */
  async #call(request: HttpRequest, ctx: RequestContext): Promise<HttpResponse> {
    try {
      return await this.#http.request({ ...request, idempotent: true, rawBody: true }, ctx);
    } catch (error) {
      throw platformError(error, request.path === PLATFORM_PATHS.token);
    }
  }

  async #fetchToken(ctx: RequestContext): Promise<AccessToken> {
    ctx.counters.tokenRequests++;
    const form = {
      grant_type: "client_credentials",
      client_id: this.#options.clientId,
      client_secret: this.#options.clientSecret,
    };
    const path = PLATFORM_PATHS.token;
    const answer = await this.#call({ method: "POST", path, form, authenticate: false }, ctx);
    const token = parseAnswer(tokenAnswer, answer, this.#summary("POST", path));
    const lifetimeS = token.expires_in ?? DEFAULT_TOKEN_LIFETIME_S;
    return { value: token.access_token, expiresAt: Date.now() + lifetimeS * 1000 };
  }

  #ctx(options: CallOptions): RequestContext {
    return options.signal ? { ...this.#context, signal: options.signal } : this.#context;
  }

  /** The call as errors name it, as the HTTP layer names it: method and path, redacted. */
  #summary(method: string, path: string): RequestSummary {
    return { method, path: redact(new URL(this.#options.baseUrl + path).pathname) };
  }
}

function nonEmpty(value: string, what: string): string {
  if (value === "") throw new TypeError(`${what} must not be empty`);
  return value;
}
