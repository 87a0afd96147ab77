import { createHash } from "node:crypto";
import * as z from "zod";
import type { SnapshotRecord } from "../snapshot/records";

/**
 * A job: plain, versioned data that can travel through a queue. Running one yields one page of
 * records and the jobs that follow from it (the next page, the membership pages of a team).
 * `connector` is the connector kind (`blackline`), `connectorId` the instance it syncs
 * (`blackline-prod`); the cursor is the connector's own, validated by the connector.
 */
export const JOB_VERSION = 1;

export const jobSchema = z
  .object({
    v: z.literal(JOB_VERSION),
    syncId: z.string().min(1),
    connector: z.string().min(1),
    connectorId: z.string().min(1),
    resourceType: z.string().min(1),
    op: z.string().min(1),
    cursor: z.unknown().optional(),
    parent: z
      .object({ type: z.string().min(1), id: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();

export type Job = z.infer<typeof jobSchema>;

/** A job as a connector asks for it; the runner adds the run's identity. */
export type JobSpec = Pick<Job, "resourceType" | "op" | "cursor" | "parent">;

/** The run a job belongs to: its sync id, connector kind and instance. */
export type RunIdentity = Pick<Job, "syncId" | "connector" | "connectorId">;

/** One page in, one page out. `next` continues the same job; `children` are new jobs. */
export interface Page {
  records: SnapshotRecord[];
  next?: unknown;
  children?: JobSpec[];
}

/**
 * Where a job may hand records before its page is done, in order, ahead of `Page.records`: a page
 * read item by item writes them as it goes, so they are not all held until the page ends. Only a
 * runtime that fails the whole sync when a job fails gives one (the records handed are then never
 * kept on their own); any other reads every record from `Page.records`.
 */
export interface RecordSink {
  write(records: readonly SnapshotRecord[]): void;
}

export function makeJob(run: RunIdentity, spec: JobSpec): Job {
  return {
    v: JOB_VERSION,
    syncId: run.syncId,
    connector: run.connector,
    connectorId: run.connectorId,
    ...spec,
  };
}

/** The job of the next page of a job's list, when the page gave one. */
export function nextPageJob(job: Job, page: Page): Job | undefined {
  return page.next === undefined ? undefined : { ...job, cursor: page.next };
}

/** The jobs after a page: the children it asked for, then `next`, the next page's job. */
export function followUpJobs(job: Job, page: Page, next = nextPageJob(job, page)): Job[] {
  const jobs = (page.children ?? []).map((spec) => makeJob(job, spec));
  if (next) jobs.push(next);
  return jobs;
}

/** A short, stable label for logs and errors, e.g. `team/members parent=team:7`. */
export function describeJob(job: Pick<Job, "resourceType" | "op" | "parent">): string {
  const parent = job.parent ? ` parent=${job.parent.type}:${job.parent.id}` : "";
  return `${job.resourceType}/${job.op}${parent}`;
}

/**
 * A job's identity: a digest of its canonical JSON, so equal jobs (the same page asked for twice,
 * a redelivered message) have one id whatever their key order. The cloud runtime keys a job's
 * marker and objects by it.
 */
export function jobId(job: Job): string {
  return createHash("sha256").update(canonicalJson(job)).digest("base64url").slice(0, 32);
}

/** JSON with object keys sorted, so equal jobs give equal text whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
