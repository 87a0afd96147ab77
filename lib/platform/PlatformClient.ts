import { createReadStream } from "node:fs";
import type { z } from "zod";
import { newRequestContext, type RequestContext } from "../http/context";
import type { HttpCounters } from "../http/counters";
import type { RequestSummary } from "../http/errors";
import { type AccessToken, TokenCache } from "../http/TokenCache";
import { registerSecret } from "../redact";
import {
  CONTENT_SHA256_HEADER,
  DEFAULT_PLATFORM_RETRY,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_UPLOAD_TIMEOUT_MS,
  PLATFORM_PATHS,
  type StatusLabel,
} from "./constants";
import { digestFile } from "./digestFile";
import { PlatformCredentialsError } from "./errors";
import {
  acknowledgement,
  type HelloAnswer,
  helloAnswer,
  nextTaskAnswer,
  type PlatformTask,
  tokenAnswer,
} from "./models";
import { describeAnswer, isCredentialsRejection, parseAnswer, statusError } from "./parseAnswer";
import {
  type PlatformAnswer,
  type PlatformRetry,
  readAnswer,
  sendWithRetry,
} from "./sendWithRetry";
import type {
  CallOptions,
  HelloRequest,
  PlatformClientOptions,
  TaskOutcome,
  UploadResult,
} from "./types";

/** Token lifetime assumed when the platform's token answer has no `expires_in`. */
const DEFAULT_TOKEN_LIFETIME_S = 3600;

type Send = (signal: AbortSignal, token: string) => Promise<PlatformAnswer>;

/**
 * The platform protocol of CONTRACTS.md section 5. Every call is retried on no answer, 429 and
 * 5xx (the protocol's calls are idempotent); a 401 refreshes the token once; every answer is
 * parsed. Snapshot uploads stream the file from disk, re-opened for each attempt.
 */
export class PlatformClient {
  readonly #options: PlatformClientOptions;
  readonly #retry: PlatformRetry;
  readonly #tokens: TokenCache;
  readonly #context: RequestContext;

  constructor(options: PlatformClientOptions) {
    registerSecret(options.clientSecret);
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
    this.#retry = { ...DEFAULT_PLATFORM_RETRY, ...options.retry };
    this.#context = newRequestContext(options.logger ? { logger: options.logger } : {});
    this.#tokens = new TokenCache((ctx) => this.#fetchToken(ctx));
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
    const ctx = this.#ctx(options);
    const { sha256, bytes } = await digestFile(source);
    const url = this.#url(PLATFORM_PATHS.snapshot(nonEmpty(syncId, "syncId")));
    const summary: RequestSummary = { method: "PUT", path: url.pathname };
    let attempts = 0;
    const send: Send = async (signal, token) => {
      attempts++;
      const body = createReadStream(source);
      try {
        const response = await fetch(url, {
          method: "PUT",
          headers: {
            accept: "application/json",
            authorization: `Bearer ${token}`,
            "content-type": "application/gzip",
            "content-length": String(bytes),
            [CONTENT_SHA256_HEADER]: sha256,
          },
          body,
          duplex: "half",
          signal,
          redirect: "error",
        });
        return await readAnswer(response, signal);
      } finally {
        body.destroy();
      }
    };
    const timeoutMs = this.#options.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
    const answer = await this.#authorized(summary, ctx, timeoutMs, send);
    parseAnswer(acknowledgement, answer, summary);
    return { sha256, bytes, attempts };
  }

  async #postJson<Schema extends z.ZodType>(
    path: string,
    json: unknown,
    schema: Schema,
    options: CallOptions,
  ): Promise<z.output<Schema>> {
    const url = this.#url(path);
    const summary: RequestSummary = { method: "POST", path: url.pathname };
    const body = JSON.stringify(json);
    const send: Send = async (signal, token) =>
      readAnswer(
        await fetch(url, {
          method: "POST",
          headers: {
            accept: "application/json",
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
          },
          body,
          signal,
          redirect: "error",
        }),
        signal,
      );
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const answer = await this.#authorized(summary, this.#ctx(options), timeoutMs, send);
    return parseAnswer(schema, answer, summary);
  }

  /** Sends with the bearer token; a 401 refreshes it once; 401 again or 403 is a credentials error. */
  async #authorized(
    summary: RequestSummary,
    ctx: RequestContext,
    timeoutMs: number,
    send: Send,
  ): Promise<PlatformAnswer> {
    for (let refreshed = false; ; refreshed = true) {
      const token = await this.#tokens.get(ctx);
      const answer = await sendWithRetry({
        summary,
        retry: this.#retry,
        ctx,
        timeoutMs,
        send: (signal) => send(signal, token),
      });
      if (answer.status === 401 && !refreshed) {
        this.#tokens.invalidate(token);
        ctx.counters.retries++;
        ctx.logger.debug("platform token rejected, refreshing once", { ...summary });
        continue;
      }
      if (answer.status === 401 || answer.status === 403) {
        throw new PlatformCredentialsError(summary, answer.status, describeAnswer(answer));
      }
      if (answer.status >= 400) throw statusError(summary, answer);
      return answer;
    }
  }

  async #fetchToken(ctx: RequestContext): Promise<AccessToken> {
    const url = this.#url(PLATFORM_PATHS.token);
    const summary: RequestSummary = { method: "POST", path: url.pathname };
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.#options.clientId,
      client_secret: this.#options.clientSecret,
    }).toString();
    ctx.counters.tokenRequests++;
    const answer = await sendWithRetry({
      summary,
      retry: this.#retry,
      ctx,
      timeoutMs: this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      send: async (signal) =>
        readAnswer(
          await fetch(url, {
            method: "POST",
            headers: {
              accept: "application/json",
              "content-type": "application/x-www-form-urlencoded",
            },
            body,
            signal,
            redirect: "error",
          }),
          signal,
        ),
    });
    if (isCredentialsRejection(answer)) {
      throw new PlatformCredentialsError(summary, answer.status, describeAnswer(answer));
    }
    if (answer.status >= 400) throw statusError(summary, answer);
    const token = parseAnswer(tokenAnswer, answer, summary);
    const lifetimeS = token.expires_in ?? DEFAULT_TOKEN_LIFETIME_S;
    return { value: token.access_token, expiresAt: Date.now() + lifetimeS * 1000 };
  }

  #ctx(options: CallOptions): RequestContext {
    return options.signal ? { ...this.#context, signal: options.signal } : this.#context;
  }

  #url(path: string): URL {
    return new URL(this.#options.baseUrl + path);
  }
}

function nonEmpty(value: string, what: string): string {
  if (value === "") throw new TypeError(`${what} must not be empty`);
  return value;
}
