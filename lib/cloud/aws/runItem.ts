import * as z from "zod";

/** A run's item in the runs table (`pk = run#<syncId>`, `sk = run`), as `RunStore` writes it. */
export const runItem = z.object({
  syncId: z.string(),
  connectorId: z.string(),
  connector: z.string(),
  /** `held`: assembled, and held by the mass-deletion guard (its reason in `error`) until released. */
  status: z.enum(["running", "finalizing", "complete", "error", "held"]),
  outstanding: z.number().int(),
  jobsDone: z.number().int(),
  records: z.number().int(),
  requests: z.number().int(),
  /** Upstream 429 answers that sent a job of the run back to the queue. */
  upstream429s: z.number().int().optional(),
  startedAt: z.string(),
  lastProgressAt: z.string(),
  finalizeLeaseAt: z.string().optional(),
  finalizeAttempts: z.number().int().optional(),
  /** Set once a finalize message was sent, so the many workers that see the end send one. */
  finalizeRequested: z.boolean().optional(),
  error: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type RunItem = z.infer<typeof runItem>;

export const jobMarker = z.object({
  jobId: z.string(),
  state: z.enum(["pending", "done"]),
  /** The job id that asked for this job, or `root`. */
  owner: z.string(),
  /** Where a done job's records are in S3; none when it read no records. */
  shardKey: z.string().optional(),
  records: z.number().int().optional(),
  /** Set once the job's children were sent; until then a redelivery sends them. */
  childrenSent: z.boolean().optional(),
  /** A pending child's job as JSON, so a later delivery of its owner can send it. */
  job: z.string().optional(),
});
export type JobMarker = z.infer<typeof jobMarker>;
