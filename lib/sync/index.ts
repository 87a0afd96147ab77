export { SyncDeadlineError } from "./errors";
export {
  firstIndexCursor,
  type IndexCursor,
  indexCursor,
  indexPagesAhead,
  indexQuery,
  nextIndexCursor,
} from "./indexPaging";
export {
  describeJob,
  followUpJobs,
  type Job,
  type JobSpec,
  jobSchema,
  makeJob,
  type Page,
  type RecordSink,
  type RunIdentity,
} from "./job";
export {
  firstPageCursor,
  ListChangedError,
  ListShortOfTotalError,
  nextPageCursor,
  PAGES_AHEAD,
  type PageCursor,
  type PageSize,
  pageCursor,
  pageFingerprint,
  pageQuery,
  pagesAhead,
  RepeatedPageError,
  TooManyPagesError,
} from "./paging";
export {
  InvalidJobError,
  type JobResult,
  type PagesBound,
  parseCursor,
  parseJob,
  runJob,
  runJobPages,
  unknownJob,
} from "./runJob";
export {
  type LocalSyncOptions,
  type LocalSyncResult,
  runLocalSync,
  type SyncProgress,
  type SyncSummary,
} from "./runLocalSync";
export type { Syncer, ValidationReport } from "./types";
