/**
 * Valimail: what the connector relies on about Valimail's API, one named constant each:
 * "Confirmed" by its Configuration API description (OpenAPI 1.1.0; the part the connector uses
 * is in test/upstream/fixtures/valimail-openapi.yml), "Assumption" where the vendor confirms
 * nothing (correct it here).
 */

/** Confirmed: production API host (staging is https://api.valimail-staging.com). */
export const DEFAULT_BASE_URL = "https://api.valimail.com";

/** Confirmed: `POST /auth` with `{ "client-id", "app-id" }` returns `{ token, expires-at }`. */
export const AUTH_PATH = "/auth";

/** Confirmed: SCIM v2 under the account; paths are built from slug and id, never `meta.location`. */
export const scimBasePath = (slug: string) => `/accounts/${encodeURIComponent(slug)}/scim/v2`;
export const USERS = "Users";

/** Confirmed: the user extension schema and its member type attribute (dot form, as Valimail documents it). */
export const USER_EXTENSION =
  "urn:ietf:params:scim:schemas:extension:valimailuserextension:2.0:User";
export const MEMBER_TYPE_PATH = `${USER_EXTENSION}.memberType`;

/** Confirmed: member types; `marketer` exists only where the account has it. */
export const MEMBER_TYPES = ["owner", "member", "marketer"] as const;
export type MemberType = (typeof MEMBER_TYPES)[number];
/** Every account offers these two; they are in every snapshot. */
export const BASE_MEMBER_TYPES: readonly MemberType[] = ["owner", "member"];
/** What a new account gets when no type is asked for, and what a revoke falls back to. */
export const DEFAULT_MEMBER_TYPE: MemberType = "member";

/**
 * Assumption: the list may be unpaginated; `startIndex`/`count` (RFC 7644) are sent anyway and
 * the list ends only when proven complete (lib/sync/paging.ts): an unpaginated answer by
 * `totalResults`, or by the same request without one user answering the others. The largest page
 * by default: a server that caps `count` lower is followed by the items it sends (5,000 accounts
 * took 52 requests at 100 a page, 6 at 1000; BENCHMARKS.md).
 */
export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 1000;

/** Assumption: no published rate limit on the SCIM paths; the rate is learned from its answers (docs/rate-control.md). */
export const DEFAULT_MAX_CONCURRENCY = 4;

/** Assumption: a create whose outcome is unknown is looked up, then tried again, at most this often. */
export const MAX_CREATE_ATTEMPTS = 3;
