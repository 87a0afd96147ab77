/** The HTTP client: its options, the retry loop (attempts, 401 refresh, 429 waits) and the limiter's part; one exchange is `exchange.ts`. */
import { messageOf } from "../errors";
import { redact } from "../redact";
import { sleepUnlessAborted } from "./abortListeners";
import {
  type AccessToken,
  newRequestContext,
  type RequestContext,
  type SharedPermit,
} from "./context";
import { countEnd } from "./counters";
import {
  AbortedError,
  HttpStatusError,
  NetworkError,
  noAnswerOf,
  noAnswerReason,
  RateLimitedError,
  type RequestSummary,
  ResponseTooLargeError,
} from "./errors";
import { exchange, readAnswer, requestHeadersAndBody } from "./exchange";
import type { Permit } from "./RateLimiter";
import {
  backoffDelayMs,
  DEFAULT_RATE_LIMIT_WAIT_SECONDS,
  DEFAULT_RETRY,
  isRetryableStatus,
  parseRetryAfter,
  type RateLimitWait,
  type RetrySettings,
} from "./retryPolicy";
import type { AnswerHeaders, HttpClientOptions, HttpRequest, HttpResponse } from "./types";
import { describeErrorBody } from "./upstreamText";

/** An answer as the retry loop sees it: a 429 carries when this request may try again. */
interface Answer extends HttpResponse {
  retryAfterMs: number | undefined;
  retryAt?: number;
  /** A 429 that holds no one else: the refused request's start (`RateLimiter.untilRetry`). */
  refusedStart?: number;
}

/** How an attempt waits for its start: after a 429, not before `notBefore`, within the budget. */
interface AttemptWait {
  notBefore?: number;
  /** Sooner, once a request started after this time is accepted (`RateLimiter.untilRetry`). */
  admittedAfter?: number;
  rateLimitedSince?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 2 ** 20;

/**
 * The one HTTP layer for every upstream and the platform: timeouts (headers and body), the retry
 * rules of `retryPolicy`, `Retry-After`, the token cache (with one refresh on 401), the adaptive
 * rate limiter (a 429 is waited out within `rateLimitWait`, not counted against the attempts) and
 * counters.
 */
export class HttpClient {
  readonly #options: HttpClientOptions;
  readonly #retry: RetrySettings;
  readonly #rateLimitWait: RateLimitWait;
  readonly #defaultContext: RequestContext;

  constructor(options: HttpClientOptions) {
    this.#options = options;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#rateLimitWait = options.rateLimitWait ?? {
      budgetMs: DEFAULT_RATE_LIMIT_WAIT_SECONDS * 1000,
    };
    this.#defaultContext = options.context ?? newRequestContext();
  }

  async request(
    request: HttpRequest,
    ctx: RequestContext = this.#defaultContext,
  ): Promise<HttpResponse> {
    const { counters, logger } = ctx;
    const idempotent = request.idempotent ?? request.method === "GET";
    const authenticate = request.authenticate ?? this.#options.tokens !== undefined;
    const url = this.#url(request);
    const summary: RequestSummary = {
      method: request.method,
      path: redact(url.pathname + url.search),
    };
    let refreshedAfter401 = false;
    let expiredOnTheWay = 0;
    const wait: AttemptWait = {};

    for (let attempt = 1; ; ) {
      throwIfAborted(ctx, summary);
      // The wait a 429 asked for comes first, holding nothing, so the token is taken fresh after it.
      if (wait.notBefore !== undefined) {
        await this.#waitUntil(wait.notBefore, wait.admittedAfter, ctx, summary);
      }
      const access = authenticate ? await this.#token(ctx) : undefined;
      const token = access?.value;
      let response: Answer | "token_expired";
      try {
        response = await this.#send(request, url, access, summary, ctx, wait);
      } catch (error) {
        if (!(error instanceof NetworkError) || !idempotent || attempt >= this.#retry.maxAttempts) {
          throw error;
        }
        await this.#backoff(ctx, attempt++, summary, error.message);
        continue;
      }

      // The token died while the request waited for its turn: take a fresh one, and the turn again.
      if (response === "token_expired") continue;
      const { status, retryAfterMs } = response;
      if (status < 400) return response;

      if (
        status === 401 &&
        access !== undefined &&
        Date.now() >= access.expiresAt &&
        expiredOnTheWay < this.#retry.maxAttempts
      ) {
        // The token was good when sent and had expired by the answer (a short-lived token on a
        // slow road): not a rejection; a fresh one, without spending the refresh below.
        expiredOnTheWay++;
        this.#options.tokens?.invalidate(access.value);
        counters.retries++;
        logger.debug("token expired on the way, refreshing", { ...summary });
        continue;
      }
      if (status === 401 && token !== undefined && !refreshedAfter401) {
        // The token may have expired early or been revoked: fetch a new one, once.
        refreshedAfter401 = true;
        this.#options.tokens?.invalidate(token);
        counters.retries++;
        logger.debug("token rejected, refreshing once", { ...summary });
        continue;
      }

      if (status === 429 && response.retryAt !== undefined) {
        // Waiting, not failing: within the request's own time budget, whatever the attempts.
        const now = Date.now();
        const waitMs = Math.max(0, response.retryAt - now);
        if (ctx.onRateLimit === "throw") {
          const budget = ctx.waitInPlace;
          if (!budget || wait.rateLimitedSince !== undefined || waitMs > budget.leftMs) {
            throw new RateLimitedError(summary, retryAfterMs ?? waitMs);
          }
          budget.leftMs -= waitMs;
        }
        wait.rateLimitedSince ??= now;
        wait.notBefore = response.retryAt;
        wait.admittedAfter = response.refusedStart;
        if (response.retryAt > wait.rateLimitedSince + this.#rateLimitWait.budgetMs) {
          throw this.#budgetSpent(summary, wait.rateLimitedSince, waitMs);
        }
        counters.rateLimitWaits++;
        counters.retries++;
        logger.debug("rate limited, waiting", { ...summary, waitMs, attempt });
        continue;
      }

      const error = new HttpStatusError({
        status,
        request: summary,
        body: response.body,
        detail: describeErrorBody(response.body),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
      const retryable = this.#options.retryableStatus ?? isRetryableStatus;
      const canRetry =
        retryable(status, idempotent) &&
        attempt < this.#retry.maxAttempts &&
        (retryAfterMs === undefined || retryAfterMs <= this.#retry.maxRetryAfterMs);
      if (!canRetry) throw error;
      await this.#backoff(ctx, attempt++, summary, `status ${status}`, retryAfterMs);
    }
  }

  /** The request waited for the upstream's limit as long as it may: say so, and which setting. */
  #budgetSpent(summary: RequestSummary, since: number, nextWaitMs?: number): RateLimitedError {
    const { budgetMs, variable } = this.#rateLimitWait;
    const waited = Math.round((Date.now() - since) / 1000);
    const next =
      nextWaitMs === undefined
        ? ""
        : ` (the upstream asked for ${Math.ceil(nextWaitMs / 1000)} s more)`;
    const setting = variable ?? "the rate-limit wait budget";
    return new RateLimitedError(
      summary,
      nextWaitMs ?? 0,
      `${summary.method} ${summary.path} was still refused with 429 after ${waited} s of waiting${next}, and a request waits at most ${budgetMs / 1000} s for the upstream's rate limit or quota; raise ${setting} to wait longer, or sync when the upstream's quota allows`,
    );
  }

  async #backoff(
    ctx: RequestContext,
    attempt: number,
    summary: RequestSummary,
    reason: string,
    waitMs?: number,
  ) {
    const delay = waitMs ?? backoffDelayMs(attempt, this.#retry);
    ctx.counters.retries++;
    ctx.logger.debug("retrying", { ...summary, reason, attempt, delayMs: delay });
    try {
      await sleepUnlessAborted(delay, ctx.signal);
    } catch {
      throwIfAborted(ctx, summary);
    }
  }

  /**
   * Sleeps until `at` (a 429's wait), or, for a 429 that held no one else (`admittedAfter`, the
   * refused request's start), until the limiter sees the upstream admit again; counted as
   * rate-limit waiting.
   */
  async #waitUntil(
    at: number,
    admittedAfter: number | undefined,
    ctx: RequestContext,
    summary: RequestSummary,
  ): Promise<void> {
    const from = Date.now();
    if (at > from) {
      const limiter = this.#options.limiter;
      try {
        if (limiter && admittedAfter !== undefined) {
          await limiter.untilRetry(at, admittedAfter, ctx.signal);
        } else {
          await sleepUnlessAborted(at - from, ctx.signal);
        }
      } catch {
        throwIfAborted(ctx, summary);
      }
    }
    ctx.counters.rateLimitWaitMs += Date.now() - from;
  }

  async #token(ctx: RequestContext): Promise<AccessToken> {
    const tokens = this.#options.tokens;
    if (!tokens) throw new Error("this client has no token source");
    return tokens.token(ctx);
  }

  #url(request: HttpRequest): URL {
    const url = new URL(this.#options.baseUrl.replace(/\/+$/, "") + request.path);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  async #send(
    request: HttpRequest,
    url: URL,
    access: AccessToken | undefined,
    summary: RequestSummary,
    ctx: RequestContext,
    wait: AttemptWait,
  ): Promise<Answer | "token_expired"> {
    const { headers, body } = requestHeadersAndBody(request, access);

    const timeoutMs = request.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const permit = await this.#permit(ctx, summary, wait);
    if (access && Date.now() >= access.expiresAt) {
      permit?.unanswered();
      return "token_expired";
    }
    let shared: SharedPermit | undefined;
    try {
      shared = await ctx.sharedRate?.permit(ctx.signal);
    } catch (error) {
      permit?.unanswered();
      throwIfAborted(ctx, summary);
      throw error;
    }
    ctx.counters.requests++;
    return this.#fetch(request, url, headers, body, timeoutMs, summary, ctx, permit, shared);
  }

  /** The limiter's start for this attempt (none without a limiter). */
  async #permit(
    ctx: RequestContext,
    summary: RequestSummary,
    wait: AttemptWait,
  ): Promise<Permit | undefined> {
    const { limiter } = this.#options;
    if (!limiter) return undefined;
    const permit = await limiter
      .acquire({
        signal: ctx.signal,
        budget: { since: wait.rateLimitedSince, ms: this.#rateLimitWait.budgetMs },
        priority: ctx.priority,
      })
      .catch((error: unknown) => {
        throwIfAborted(ctx, summary);
        throw error;
      });
    if (!permit) throw this.#budgetSpent(summary, wait.rateLimitedSince ?? Date.now());
    return permit;
  }

  async #fetch(
    request: HttpRequest,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    summary: RequestSummary,
    ctx: RequestContext,
    permit: Permit | undefined,
    shared: SharedPermit | undefined,
  ): Promise<Answer> {
    const maxBytes = this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const variables = this.#options.boundVariables;
    const tooLarge = () => new ResponseTooLargeError(summary, maxBytes, variables);
    let response: { status: number; headers: AnswerHeaders };
    let bytes: Buffer;
    try {
      [response, bytes] = await exchange(request, url, { headers, body }, timeoutMs, ctx.signal, {
        maxBytes,
        tooLarge,
      });
    } catch (error) {
      permit?.unanswered();
      shared?.unanswered();
      countEnd(ctx.counters, noAnswerOf(error, ctx.signal));
      throwIfAborted(ctx, summary);
      if (ResponseTooLargeError.is(error)) throw error;
      const reason = noAnswerReason(error, timeoutMs, variables?.requestTimeout);
      throw new NetworkError(summary, reason, error);
    }
    countEnd(ctx.counters, response.status);
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
    const answer: Answer = {
      status: response.status,
      headers: response.headers,
      body: readAnswer(request, response, bytes),
      retryAfterMs,
    };
    const refused = response.status === 429;
    if (!refused) shared?.accepted();
    if (!permit) {
      if (refused) await this.#sharedRefused(shared, retryAfterMs, ctx);
      return answer;
    }
    if (refused && shared) {
      // The shared rate learns it for every worker. This process's limiter sees its own share of
      // the requests only: it took that share for the limit (cloud workers paced at 1 a second).
      permit.unanswered();
      answer.retryAt = Date.now() + (retryAfterMs ?? 0);
      answer.refusedStart = permit.startedAt;
    } else if (refused) {
      // A caller told of 429s waits elsewhere (a queue's delay): its 429 holds no one here.
      const hold = ctx.onRateLimit !== "throw";
      const verdict = permit.refused(retryAfterMs, response.headers, hold);
      answer.retryAt = verdict.retryAt;
      if (!verdict.blocked) answer.refusedStart = verdict.startedAt;
    } else {
      permit.accepted(response.headers);
    }
    const limiter = this.#options.limiter;
    ctx.counters.learnedRate = limiter?.learnedRate ?? 0;
    // Taken at once, so the move is this answer's, at its time.
    const change = limiter?.takeChange();
    if (change) ctx.logger.debug("learned rate moved", { ...change });
    if (refused) await this.#sharedRefused(shared, retryAfterMs, ctx);
    return answer;
  }

  /** A 429 told to the shared rate before the answer is returned (its cut is written by then). */
  async #sharedRefused(
    shared: SharedPermit | undefined,
    retryAfterMs: number | undefined,
    ctx: RequestContext,
  ): Promise<void> {
    await shared?.refused(retryAfterMs).catch((error: unknown) => {
      ctx.logger.warn("the shared rate could not be lowered", { error: messageOf(error) });
    });
  }
}

function throwIfAborted(ctx: RequestContext, summary: RequestSummary): void {
  if (ctx.signal?.aborted) {
    throw new AbortedError(`${summary.method} ${summary.path} was abandoned: the call was aborted`);
  }
}
