import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Headers on every answer: nothing from elsewhere, no framing, no referrer, no sniffing, no cache. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

/** 256 bits from the system's random source, URL-safe. */
export const newToken = () => randomBytes(32).toString("base64url");

const digest = (text: string) => createHash("sha256").update(text).digest();

/** `Authorization: Bearer <token>` (RFC 6750 2.1; the scheme's case does not matter). */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/**
 * Who may read identity data: a request whose `Host` is this listener's loopback address (a page
 * elsewhere that rebinds its own name to 127.0.0.1 sends its own name: refused), and that carries
 * the token as `Authorization: Bearer <token>`. The page's script takes the token from the
 * address's fragment (`#token=`, which the browser never sends) and keeps it in its own origin's
 * storage. No cookie: a browser sends a cookie of 127.0.0.1 to every port of 127.0.0.1, so
 * another local user's server would receive it; a cookie that arrives is ignored.
 */
export class AccessGuard {
  private readonly tokenDigest: Buffer;

  constructor(
    readonly token: string,
    readonly port: number,
  ) {
    this.tokenDigest = digest(token);
  }

  /** Compares in constant time (both sides hashed to one length first). */
  matches(candidate: string | undefined): boolean {
    return candidate !== undefined && timingSafeEqual(digest(candidate), this.tokenDigest);
  }

  hostAllowed(request: IncomingMessage): boolean {
    const host = request.headers.host?.toLowerCase();
    return host === `127.0.0.1:${this.port}` || host === `localhost:${this.port}`;
  }

  /** The request's bearer token, if it sends one. */
  bearerToken(request: IncomingMessage): string | undefined {
    return BEARER.exec(request.headers.authorization ?? "")?.[1];
  }

  authorized(request: IncomingMessage): boolean {
    return this.matches(this.bearerToken(request));
  }
}
