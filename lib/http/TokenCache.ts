import { forgetSecret, registerSecret } from "../redact";
import type { RequestContext } from "./context";

export interface AccessToken {
  value: string;
  /** Epoch milliseconds at which the upstream stops accepting the token. */
  expiresAt: number;
}

/** Refresh this long before expiry: a fifth of the token's lifetime, at most a minute. */
const MAX_REFRESH_MARGIN_MS = 60_000;

/**
 * Holds one bearer token: fetched on first use, refreshed early (before it expires) and again
 * when the upstream answers 401 to it. Concurrent callers share one fetch.
 */
export class TokenCache {
  readonly #fetchToken: (ctx: RequestContext) => Promise<AccessToken>;
  #current: { token: AccessToken; refreshAt: number } | undefined;
  #pending: Promise<AccessToken> | undefined;
  /** Replaced tokens stay redacted until they expire, then are forgotten. */
  #retired: AccessToken[] = [];

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

  /** The upstream rejected `token` (401): forget it unless a newer one has replaced it already. */
  invalidate(token: string): void {
    if (this.#current?.token.value !== token) return;
    this.#retired.push(this.#current.token);
    this.#current = undefined;
  }

  #forgetExpired(): void {
    const now = Date.now();
    for (const token of this.#retired.filter((t) => t.expiresAt <= now)) forgetSecret(token.value);
    this.#retired = this.#retired.filter((t) => t.expiresAt > now);
  }

  #refresh(ctx: RequestContext): Promise<AccessToken> {
    if (!this.#pending) {
      const fetched = Date.now();
      this.#pending = this.#fetchToken(ctx)
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
}
