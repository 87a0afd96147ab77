import type * as z from "zod";
import { ConnectorError, describeIssues } from "../errors";
import type { RequestContext } from "../http";
import {
  describeJob,
  followUpJobs,
  type Job,
  jobSchema,
  nextPageJob,
  type RecordSink,
} from "./job";
import type { SnapshotRecord } from "./records";
import type { SyncConnector } from "./types";

/**
 * A job that can never succeed: it does not parse, names a connector or job the connector does
 * not have, or carries a cursor the connector cannot read. Running it again changes nothing, so a
 * worker fails the run at once instead of retrying.
 */
export class InvalidJobError extends ConnectorError {
  override name = "InvalidJobError";
  override readonly code: string = "invalid_job";
}

/** Parses a job from outside (a queue message), or throws `InvalidJobError` naming the fields. */
export function parseJob(input: unknown): Job {
  const parsed = jobSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InvalidJobError(`not a sync job: ${describeIssues(parsed.error.issues, "job")}`);
}

/** Parses a job's cursor with the connector's schema, or throws `InvalidJobError`. */
export function parseCursor<Schema extends z.ZodType>(schema: Schema, job: Job): z.output<Schema> {
  const parsed = schema.safeParse(job.cursor);
  if (parsed.success) return parsed.data;
  throw new InvalidJobError(
    `${describeJob(job)}: bad cursor (${describeIssues(parsed.error.issues, "cursor")})`,
  );
}

/** The error for a job a connector does not have. */
export function unknownJob(connector: string, job: Job): InvalidJobError {
  return new InvalidJobError(`${connector} has no job ${describeJob(job)}`);
}

export interface JobResult {
  records: SnapshotRecord[];
  /** The jobs that follow: the children the page asked for, and the next page (`next`). */
  followUps: Job[];
  /** The next page's job, among `followUps`, when the page has a next one. */
  next?: Job;
}

/**
 * Runs one job of a sync: the one place the CLI, the service and the sync worker run jobs. With
 * `sink`, some records may go to it before the page is done; `records` holds the rest.
 */
export async function runJob(
  connector: SyncConnector,
  job: Job,
  ctx: RequestContext,
  sink?: RecordSink,
): Promise<JobResult> {
  if (job.connector !== connector.name) {
    throw new InvalidJobError(
      `${describeJob(job)} is a ${job.connector} job; this is the ${connector.name} connector`,
    );
  }
  const page = await connector.runJob(job, ctx, sink);
  const next = nextPageJob(job, page);
  return { records: page.records, followUps: followUpJobs(job, page, next), next };
}
