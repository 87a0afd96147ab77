import type * as z from "zod";
import { ConnectorError, describeIssues } from "../errors";
import { Prefetched, type RequestContext } from "../http";
import type { SnapshotRecord } from "../snapshot/records";
import {
  describeJob,
  followUpJobs,
  type Job,
  jobSchema,
  nextPageJob,
  type RecordSink,
} from "./job";
import type { Syncer } from "./types";

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
  connector: Syncer,
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

/** How far one run of a job may follow its list's next pages (`runJobPages`). */
export interface PagesBound {
  /** Read no further page once this many records were read. */
  records: number;
  /** Read at most this many pages. */
  pages: number;
  /** Read no further page once the pages read asked for more children than this. */
  children: number;
  /** Whether another page fits the time left, given the slowest page so far (ms). */
  timeForAnother(slowestPageMs: number): boolean;
}

/**
 * Runs a job and, while its bound allows, the next pages of its list in the same call: the cloud
 * runtime's coarse job, one result for several small pages. Stops at the bound, at the list's end,
 * or at the first later page that fails (its job is handed on, and meets the error on its own);
 * the first page's error is the call's. The result's follow-ups are every page's children, then
 * the next page not read (`next`). Which pages a run reads may differ between deliveries of a job.
 * Its pages are asked for ahead (`Prefetched`), as the command line's are, within the bound.
 */
export async function runJobPages(
  connector: Syncer,
  job: Job,
  ctx: RequestContext,
  bound: PagesBound,
): Promise<JobResult & { pages: number }> {
  const records: SnapshotRecord[] = [];
  const children: Job[] = [];
  // The list's next pages are asked for ahead, as many as the pages bound lets this run read;
  // none more once a page brings children (their count may stop the run) or the records bound is
  // reached, past which the pages on their way are still read: an answer not read is lost.
  const prefetched = new Prefetched(bound.pages - 1);
  const pageCtx: RequestContext = { ...ctx, prefetched };
  let next: Job | undefined = job;
  let pages = 0;
  let slowestMs = 0;
  try {
    while (next) {
      const started = performance.now();
      let page: JobResult;
      try {
        page = await runJob(connector, next, pageCtx);
      } catch (error) {
        if (pages === 0) throw error;
        break;
      }
      slowestMs = Math.max(slowestMs, performance.now() - started);
      pages++;
      for (const record of page.records) records.push(record);
      for (const child of page.followUps) if (child !== page.next) children.push(child);
      const full = records.length >= bound.records;
      if (children.length > 0 || full) prefetched.close();
      next = page.next;
      const more =
        pages < bound.pages &&
        (!full || prefetched.waiting > 0) &&
        children.length <= bound.children &&
        bound.timeForAnother(slowestMs);
      if (!more) break;
    }
  } finally {
    // Nothing asked for is left running when the run returns (a Lambda's next invocation would
    // resume it, its request and 429 counted nowhere).
    await prefetched.settled();
  }
  return {
    records,
    followUps: next ? [...children, next] : children,
    pages,
    ...(next ? { next } : {}),
  };
}
