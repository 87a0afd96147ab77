import { isRetryableStatus } from "../http";

/** The platform protocol of docs/platform-protocol.md: paths below the platform's base address. */
export const PLATFORM_PATHS = {
  token: "/auth/v1/token",
  hello: "/connector/v1/hello",
  nextTask: "/connector/v1/tasks/next",
  heartbeat: (taskId: string) => `/connector/v1/tasks/${encodeURIComponent(taskId)}/heartbeat`,
  finish: (taskId: string) => `/connector/v1/tasks/${encodeURIComponent(taskId)}/finish`,
  snapshot: (syncId: string) => `/connector/v1/syncs/${encodeURIComponent(syncId)}/snapshot`,
  status: "/connector/v1/status",
} as const;

/** The labels users see on a connector: Syncing, Connected, Error. */
export const STATUS_LABELS = ["syncing", "connected", "error"] as const;
export type StatusLabel = (typeof STATUS_LABELS)[number];

/** The header that carries the hex SHA-256 of a snapshot upload's body, as sent. */
export const CONTENT_SHA256_HEADER = "x-content-sha256";

/** CONNECTOR_SYNC_INTERVAL when unset: one hour. */
export const DEFAULT_SYNC_INTERVAL_MS = 3_600_000;
/** Bounds of CONNECTOR_SYNC_INTERVAL: one second (tests, the demo) to seven days. */
export const MIN_SYNC_INTERVAL_MS = 1_000;
export const MAX_SYNC_INTERVAL_MS = 7 * 24 * 3_600_000;

/** Per-attempt timeout of a JSON call, and of a snapshot upload (the body can be large). */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_UPLOAD_TIMEOUT_MS = 15 * 60_000;

/** Retries of every platform call: attempts in all, backoff doubling from the base, capped. */
export const DEFAULT_PLATFORM_RETRY = {
  attempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 15_000,
  /** A `Retry-After` longer than this is not slept on: the call fails with the 429 or 503. */
  maxRetryAfterMs: 120_000,
} as const;

/**
 * Whether the platform may answer differently next time. Every call of the protocol is
 * idempotent, so a 500 is retried too, beside 429, 502, 503 and 504.
 */
export function isRetryablePlatformStatus(status: number): boolean {
  return status === 500 || isRetryableStatus(status, true);
}
