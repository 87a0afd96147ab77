import * as z from "zod";

const failureKinds = [
  "config_invalid",
  "credentials_rejected",
  "upstream_unreachable",
  "upstream_rate_limited",
  "upstream_failed",
  "platform_credentials_rejected",
  "platform_unavailable",
  "write_failed",
  "other",
] as const;

/** Why a sync or a platform call failed, in one word a program can branch on (docs/service.md). */
export const failureKind = z.enum(failureKinds);
export type FailureKind = z.infer<typeof failureKind>;

/** How one sync of the service ended, as `/status` shows it (no id of a user or an account). */
export const syncEntry = z.object({
  syncId: z.string(),
  trigger: z.enum(["schedule", "task"]),
  startedAt: z.string(),
  endedAt: z.string(),
  durationMs: z.number(),
  outcome: z.enum(["uploaded", "error", "held", "abandoned"]),
  /** Records written, by kind (a complete snapshot's: uploaded or held). */
  counts: z.record(z.string(), z.number()).optional(),
  /** Upstream requests, retries, 429 waits (when the sync got that far). */
  requests: z.number().optional(),
  retries: z.number().optional(),
  rateLimitWaits: z.number().optional(),
  /** The snapshot's size as uploaded. */
  bytes: z.number().optional(),
  /** Why it failed or was held: the label's detail (redacted), and its kind. */
  reason: z.string().optional(),
  failure: failureKind.optional(),
});
export type SyncEntry = z.infer<typeof syncEntry>;

export const readinessProblem = z.object({
  check: z.enum(["platform", "upstream", "service"]),
  reason: z.union([failureKind, z.enum(["not_reached_yet", "stopping"])]),
  detail: z.string(),
});
export type ReadinessProblem = z.infer<typeof readinessProblem>;

/** `GET /status`: what `access-connectors status --service` reads and prints. */
export const statusReport = z.object({
  connector: z.string(),
  hostId: z.string(),
  version: z.string(),
  startedAt: z.string(),
  ready: z.boolean(),
  problems: z.array(readinessProblem),
  nextSyncAt: z.string().optional(),
  /** The last syncs, newest first. */
  syncs: z.array(syncEntry),
  /** The snapshot the removal guard holds, if any: its counts and how to release it. */
  held: z
    .object({ syncId: z.string(), users: z.number(), grants: z.number(), release: z.string() })
    .nullable(),
});
export type StatusReport = z.infer<typeof statusReport>;
