import type { Bound } from "../config";
import type { RequestContext } from "../http";
import type { ResourceTypeRecord } from "../snapshot/records";
import type { Job, JobSpec, Page, RecordSink } from "./job";

/** What `validate` checked, one line each, for the person who runs it. */
export interface ValidationReport {
  checks: string[];
}

/**
 * The read side of a connector: its resource types and the jobs of a full sync. An instance holds
 * configuration and reusable clients only; what one run counts, logs and may abort comes with each
 * call in `ctx`, so a warm Lambda can reuse an instance across runs.
 */
export interface Syncer {
  /** The connector kind, e.g. `blackline`; the snapshot's `connector`. */
  readonly name: string;
  /** The most a whole sync may take (CONNECTOR_<APP>_SYNC_DEADLINE); none when absent. */
  readonly syncDeadline?: Bound;
  resourceTypes(): ResourceTypeRecord[];
  /** The jobs a sync starts with. */
  rootJobs(): JobSpec[];
  /**
   * One page of one job; an unknown job or a bad cursor throws `InvalidJobError`. With `sink`,
   * some of the page's records may be handed to it first (`RecordSink`).
   */
  runJob(job: Job, ctx: RequestContext, sink?: RecordSink): Promise<Page>;
  /** One token call and one small read; throws what is wrong. */
  validate(ctx: RequestContext): Promise<ValidationReport>;
}
