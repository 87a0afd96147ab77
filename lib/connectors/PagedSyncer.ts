import type { Bound } from "../config";
import type { RequestContext } from "../http";
import type { ResourceTypeRecord } from "../snapshot";
import type { Job, JobSpec, Page, PageSize, RecordSink, Syncer, ValidationReport } from "../sync";
import type { UpstreamTuning } from "./upstreamTuning";

/**
 * What every connector's syncer holds besides its API client: its resource types, the page size
 * it asks for (with its variable and the upstream's largest), the pages one list may have, and
 * the sync's deadline, all from its tuning. A connector adds its jobs and its check.
 */
export abstract class PagedSyncer implements Syncer {
  abstract readonly name: string;
  readonly syncDeadline: Bound;
  protected readonly pageSize: PageSize;
  protected readonly maxPages: Bound;
  readonly #resourceTypes: ResourceTypeRecord[];

  constructor(tuning: UpstreamTuning, maxPageSize: number, resourceTypes: ResourceTypeRecord[]) {
    this.pageSize = {
      value: tuning.pageSize,
      variable: tuning.bounds.pageSizeVariable,
      max: maxPageSize,
    };
    this.maxPages = tuning.bounds.maxPagesPerList;
    this.syncDeadline = tuning.bounds.syncDeadlineMs;
    this.#resourceTypes = resourceTypes;
  }

  resourceTypes(): ResourceTypeRecord[] {
    return this.#resourceTypes;
  }

  abstract rootJobs(): JobSpec[];
  abstract runJob(job: Job, ctx: RequestContext, sink?: RecordSink): Promise<Page>;
  abstract validate(ctx: RequestContext): Promise<ValidationReport>;
}

/** How long a token just issued stays valid, in whole seconds, as `validate` reports it. */
export function secondsValid(token: { expiresAt: number }): number {
  return Math.round((token.expiresAt - Date.now()) / 1000);
}
