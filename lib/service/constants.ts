/** Defaults and bounds of self-hosted service mode (`access-connectors service`). */

/** The service's name in every log line, as the Lambdas' POWERTOOLS_SERVICE_NAME. */
export const SERVICE_NAME = "access-connectors";

/** What the service reads besides the connector's and the platform's variables. */
export const SERVICE_VARIABLES = {
  name: "CONNECTOR_NAME",
  stateDir: "CONNECTOR_STATE_DIR",
  healthFile: "CONNECTOR_HEALTH_FILE",
  logLevel: "CONNECTOR_LOG_LEVEL",
} as const;

/** Below the state directory: the remembered replies and labels, temporary sync files, health. */
export const STATE_FILE_NAME = "state.json";
export const TEMP_DIR_NAME = "tmp";
export const HEALTH_FILE_NAME = "health.json";
/** The mass-deletion guard: the last upload's digest, the held snapshot, a release's answer. */
export const PUBLISHED_DIGEST_NAME = "published.digest";
export const HELD_DIR_NAME = "held";
export const RELEASE_RESULT_NAME = "release.result.json";
/** How long `release --service` waits for the running service to upload the held snapshot. */
export const RELEASE_WAIT_MS = 120_000;

/** While the platform cannot be reached: waits double from the base up to the cap, with jitter. */
export const PLATFORM_BACKOFF = { baseMs: 1_000, maxMs: 120_000 } as const;

/**
 * Retries inside one platform call. The service loop backs off on its own between calls, so a
 * call gives up soon and lets the loop wait (an upload too: the loop tries it again with the same
 * file until the next sync is due).
 */
export const SERVICE_PLATFORM_RETRY = {
  attempts: 3,
  baseDelayMs: 250,
  maxDelayMs: 2_000,
  maxRetryAfterMs: 60_000,
} as const;
/** Heartbeats of a task follow the poll interval, within these bounds. */
export const HEARTBEAT_BOUNDS_MS = { min: 1_000, max: 30_000 } as const;

/** The health file is rewritten this often, and is stale when it has not been for this long. */
export const HEALTH_WRITE_INTERVAL_MS = 5_000;
export const HEALTH_STALE_AFTER_MS = 60_000;

/** Replies are remembered this long, and at most this many (the newest kept). */
export const REPLY_RETENTION_MS = 7 * 24 * 3_600_000;
export const MAX_REMEMBERED_REPLIES = 10_000;

/**
 * Shutdown: an action in progress may finish within the grace; then each report (a label, a
 * task's finish) gets its own short timeout; the whole stop ends within the deadline, whatever
 * is still pending (a container orchestrator waits 10 s before SIGKILL by default).
 */
export const ACTION_GRACE_MS = 4_000;
export const SHUTDOWN_CALL_TIMEOUT_MS = 2_000;
export const SHUTDOWN_DEADLINE_MS = 9_000;
