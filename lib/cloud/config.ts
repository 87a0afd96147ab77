import * as z from "zod";
import { ConfigError } from "../errors";

/**
 * What a function of the cloud runtime learns from its environment (set by serverless.yml): the
 * stage's resources and its limits. Parsed at the boundary, so a wiring mistake names the
 * variable instead of failing later with an AWS error.
 */
export const cloudEnvironment = z.object({
  STAGE: z.string().min(1).describe("The stage's name."),
  INSTANCES_TABLE: z.string().min(1).describe("The instance registry's DynamoDB table."),
  RUNS_TABLE: z.string().min(1).describe("The runs table (runs, jobs, the shared rate)."),
  IDEMPOTENCY_TABLE: z.string().min(1).describe("The action replies' idempotency table."),
  SHARDS_BUCKET: z.string().min(1).describe("The S3 bucket of run shards and the guard's objects."),
  SYNC_JOBS_QUEUE_URL: z.url().describe("The sync-jobs queue."),
  FINALIZE_QUEUE_URL: z.url().describe("The finalize queue."),
  INSTANCE_CHECKS_QUEUE_URL: z
    .url()
    .describe("The instance-checks queue the scheduler's sweep fans its starts out through."),
  SECRETS_PREFIX: z
    .string()
    .min(1)
    .describe("Secrets Manager name prefix of the stage's instances."),
  JOB_MAX_RECEIVES: z.coerce.number().int().min(1).default(5).meta({
    type: "whole number, at least 1",
    description:
      "Deliveries of a job before it rests in the dead-letter queue (the redrive's maxReceiveCount).",
  }),
  RUN_STALL_SECONDS: z.coerce.number().int().min(60).default(900).meta({
    type: "whole number, at least 60",
    description:
      "A run whose jobs have not moved (none started, committed or handed back) for this many seconds ends `error`.",
  }),
  INSTANCE_JOBS_IN_FLIGHT: z.coerce.number().int().min(1).default(8).meta({
    type: "whole number, at least 1",
    description:
      "Jobs of one instance that run at once; below the workers' maximum concurrency, so the rest stay free for other instances.",
  }),
});

export interface CloudConfig {
  stage: string;
  instancesTable: string;
  runsTable: string;
  idempotencyTable: string;
  shardsBucket: string;
  syncJobsQueueUrl: string;
  finalizeQueueUrl: string;
  /** The scheduler's own queue: one message per instance its sweep wants looked at. */
  instanceChecksQueueUrl: string;
  /** Secrets Manager name prefix of the stage's instances, e.g. `access-connectors/dev/`. */
  secretsPrefix: string;
  /** Deliveries of a job before it rests in the dead-letter queue (the redrive's maxReceiveCount). */
  jobMaxReceives: number;
  /** A run with no progress for this long ends `error`. */
  runStallSeconds: number;
  /** Jobs of one instance that run at once (`JobSlots`). */
  instanceJobsInFlight: number;
}

export function loadCloudConfig(env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const parsed = cloudEnvironment.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? "environment"),
        message: `${issue.message} (set by serverless.yml; redeploy the stack)`,
      })),
    );
  }
  const e = parsed.data;
  return {
    stage: e.STAGE,
    instancesTable: e.INSTANCES_TABLE,
    runsTable: e.RUNS_TABLE,
    idempotencyTable: e.IDEMPOTENCY_TABLE,
    shardsBucket: e.SHARDS_BUCKET,
    syncJobsQueueUrl: e.SYNC_JOBS_QUEUE_URL,
    finalizeQueueUrl: e.FINALIZE_QUEUE_URL,
    instanceChecksQueueUrl: e.INSTANCE_CHECKS_QUEUE_URL,
    secretsPrefix: e.SECRETS_PREFIX,
    jobMaxReceives: e.JOB_MAX_RECEIVES,
    runStallSeconds: e.RUN_STALL_SECONDS,
    instanceJobsInFlight: e.INSTANCE_JOBS_IN_FLIGHT,
  };
}
