/**
 * BlackLine: what the connector relies on about BlackLine's API, one named constant each:
 * "Confirmed" by BlackLine's public material, "Assumption" where it confirms nothing (correct
 * it here).
 */

/** Confirmed: the API host of an environment (region) subdomain. */
export const baseUrlFor = (environment: string) => `https://${environment}.api.blackline.com`;

/** Confirmed: the IdentityServer token endpoint, password grant, form-encoded. */
export const TOKEN_PATH = "/authorize/connect/token";

/**
 * Confirmed: BlackLine answers `expires_in: 3600`. RFC 6749 section 5.1 makes `expires_in` only
 * RECOMMENDED, so an answer without it is taken to live this long (a token that dies earlier is
 * replaced on its first 401).
 */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 3600;

/** Confirmed: `token_type: "Bearer"`; compared case-insensitively (RFC 6749 section 5.1). */
export const TOKEN_TYPE = "bearer";

/**
 * How the client pair reaches the token endpoint (RFC 6749 section 2.3.1). Confirmed: BlackLine's
 * guides send `client_id` and `client_secret` in the form body; some clients use HTTP Basic.
 */
export const CLIENT_AUTH_METHODS = ["body", "basic"] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];
export const DEFAULT_CLIENT_AUTH: ClientAuthMethod = "body";

/** Confirmed: list endpoints answer `{ items, totalItems }` and take `pageSize`. */
export const USERS_PATH = "/v1/users";
export const TEAMS_PATH = "/v1/teams";
/** Assumption: roles are listed at `/v1/roles` like users and teams. */
export const ROLES_PATH = "/v1/roles";
/** Assumption: both membership directions exist and return user or team objects in `items`. */
export const teamUsersPath = (teamId: string) => `/v1/teams/${encodeURIComponent(teamId)}/users`;
export const userTeamsPath = (userId: string) => `/v1/users/${encodeURIComponent(userId)}/teams`;

/** Assumption: the page index parameter is `page`, 1-based, alongside the confirmed `pageSize`. */
export const PAGE_PARAM = "page";
export const PAGE_SIZE_PARAM = "pageSize";
export const FIRST_PAGE = 1;

/**
 * Assumption: the largest page the server honours is unknown (integrations ask for up to
 * 10000); the client copes with shorter pages. 1000 keeps a page's body around 1 MB.
 */
export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

/**
 * Assumption: no published rate limit; the request rate is learned from its answers
 * (docs/rate-model.md). Measured (BENCHMARKS.md): 16 in flight took 100,000 users with no limit
 * at 40 ms in 13 s, against 24 s at 8, and kept a 50 requests/s limit as closely as 8 did, since
 * a list's next page starts before the membership requests waiting beside it.
 */
export const DEFAULT_MAX_CONCURRENCY = 16;

/** Confirmed: the token endpoint's answer when the scope lacks the instance token. */
export const INVALID_INSTANCE_GUID = "Invalid instance GUID";
