import { messageOf } from "../errors";
import { forgetSecret, registerSecret } from "../redact";
import type { AccessToken, RequestContext } from "./context";

/** Refresh this long before expiry: a fifth of the token's lifetime, at most a minute. */
const MAX_REFRESH_MARGIN_MS = 60_000;

/**
 * Holds one bearer token: fetched on first use, refreshed early (before it expires) and again
 * when the upstream answers 401 to it. Concurrent callers share one fetch. With the call's
 * `sharedTokens` (the cloud's workers), a token another process fetched is taken before asking
 * the upstream, and a token fetched here is kept there for the others; a token the upstream
 * rejected is not taken again.
 */
export class TokenCache {
  readonly #fetchToken: (ctx: RequestContext) => Promise<AccessToken>;
  #current: { token: AccessToken; refreshAt: number } | undefined;
  #pending: Promise<AccessToken> | undefined;
  /** Replaced tokens stay redacted until they expire, then are forgotten. */
  #retired: AccessToken[] = [];
  /** After a 401: the next token comes from the upstream, whatever the shared store holds. */
  #fetchNext = false;

  /** `fetchToken` runs in the context of the call that found the token missing or due. */
  constructor(fetchToken: (ctx: RequestContext) => Promise<AccessToken>) {
    this.#fetchToken = fetchToken;
  }

  async get(ctx: RequestContext): Promise<string> {
    return (await this.token(ctx)).value;
  }

  /** The current token with its expiry, fetched or refreshed when due. */
  async token(ctx: RequestContext): Promise<AccessToken> {
    const current = this.#current;
    if (current && Date.now() < current.refreshAt) return current.token;
    return this.#refresh(ctx);
  }

  /**
   * The upstream rejected `token` (401): forget it unless a newer one has replaced it already. The
   * next token is fetched, not taken from the shared store: a request has one refresh after a 401,
   * and the store's may be dead too (sessions revoked).
   */
  invalidate(token: string): void {
    if (this.#current?.token.value !== token) return;
    this.#retired.push(this.#current.token);
    this.#current = undefined;
    this.#fetchNext = true;
  }

  #forgetExpired(): void {
    const now = Date.now();
    for (const token of this.#retired.filter((t) => t.expiresAt <= now)) forgetSecret(token.value);
    this.#retired = this.#retired.filter((t) => t.expiresAt > now);
  }

  #refresh(ctx: RequestContext): Promise<AccessToken> {
    if (!this.#pending) {
      const fetched = Date.now();
      this.#pending = this.#sharedOrFetched(ctx)
        .then((token) => {
          registerSecret(token.value);
          if (this.#current) this.#retired.push(this.#current.token);
          this.#forgetExpired();
          const lifetime = Math.max(0, token.expiresAt - fetched);
          const margin = Math.min(MAX_REFRESH_MARGIN_MS, lifetime / 5);
          this.#current = { token, refreshAt: token.expiresAt - margin };
          return token;
        })
        .finally(() => {
          this.#pending = undefined;
        });
    }
    return this.#pending;
  }

  /** The shared token if one is kept, fresh and not retired here; else fetched, and kept. */
  async #sharedOrFetched(ctx: RequestContext): Promise<AccessToken> {
    const shared = ctx.sharedTokens;
    const fetchNext = this.#fetchNext;
    this.#fetchNext = false;
    if (!shared) return this.#fetchToken(ctx);
    const kept = fetchNext
      ? undefined
      : await shared.load().catch((error: unknown) => {
          ctx.logger.warn("the shared token could not be read", { error: messageOf(error) });
          return undefined;
        });
    const retired = kept && this.#retired.some((t) => t.value === kept.value);
    const lifetime = kept ? kept.expiresAt - Date.now() : 0;
    if (kept && !retired && lifetime > MAX_REFRESH_MARGIN_MS) return kept;
    const token = await this.#fetchToken(ctx);
    await shared.save(token).catch((error: unknown) => {
      ctx.logger.warn("the shared token could not be kept", { error: messageOf(error) });
    });
    return token;
  }
}
