import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

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

/**
 * Who may read the page: a request whose `Host` is this listener's loopback address (a page
 * elsewhere that rebinds its own name to 127.0.0.1 sends its own name: refused), and that carries
 * the token, in the URL the command printed (once: it is then set as an HttpOnly, SameSite=Strict
 * cookie and the URL loses it) or in that cookie. The cookie's name carries the port: cookies are
 * shared between the ports of one host, so two pages do not overwrite each other's.
 */
export class AccessGuard {
  readonly cookieName: string;
  private readonly tokenDigest: Buffer;

  constructor(
    readonly token: string,
    readonly port: number,
  ) {
    this.cookieName = `explore_${port}`;
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

  cookieToken(request: IncomingMessage): string | undefined {
    for (const part of (request.headers.cookie ?? "").split(";")) {
      const at = part.indexOf("=");
      if (at > 0 && part.slice(0, at).trim() === this.cookieName) return part.slice(at + 1).trim();
    }
    return undefined;
  }

  setCookie(response: ServerResponse): void {
    response.setHeader(
      "set-cookie",
      `${this.cookieName}=${this.token}; HttpOnly; SameSite=Strict; Path=/`,
    );
  }
}
