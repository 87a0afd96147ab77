import { createHash } from "node:crypto";

/**
 * A short digest of a page's ids, carried in the next cursor: a page with the same fingerprint
 * as the one before means the server ignored the paging parameter and served it again.
 */
export function pageFingerprint(ids: readonly string[]): string {
  return createHash("sha256").update(ids.join("\n")).digest("base64url");
}
