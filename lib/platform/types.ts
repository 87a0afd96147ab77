import type { RetrySettings } from "../http";
import type { Logger } from "../logging";

/**
 * Retries of platform calls, the HTTP layer's `RetrySettings` with `attempts` (attempts in all,
 * the first included) for `maxAttempts`. A 429 counts as an attempt, as a 5xx does.
 */
export interface PlatformRetry extends Omit<RetrySettings, "maxAttempts"> {
  attempts: number;
}

export interface PlatformClientOptions {
  /** The platform's API base address (CONNECTOR_PLATFORM_URL). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** This connector host (CONNECTOR_HOST_ID), sent with `hello` and `tasks/next`. */
  hostId: string;
  /** Per-attempt timeout of a JSON call, the answer included; default 30 s. */
  timeoutMs?: number;
  /** Per-attempt timeout of a snapshot upload; default 15 minutes. */
  uploadTimeoutMs?: number;
  retry?: Partial<PlatformRetry>;
  /** Retries are logged at debug level; default silent. */
  logger?: Logger;
}

/** Per call: a caller may abandon a call (and its waits) with a signal. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** What `hello` announces besides the host id. */
export interface HelloRequest {
  connector: string;
  version: string;
  /** What this host can do, e.g. `["sync", "enable_user", "disable_user"]`. */
  capabilities: readonly string[];
}

/** How a task ended; an action's `result` or `error` as in its reply (docs/actions.md). */
export interface TaskOutcome {
  status: "succeeded" | "failed";
  result?: unknown;
  error?: unknown;
}

export interface UploadResult {
  /** Hex SHA-256 of the file as sent. */
  sha256: string;
  bytes: number;
  /** PUTs sent, the accepted one included. */
  attempts: number;
}
