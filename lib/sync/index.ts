export {
  describeJob,
  followUpJobs,
  type Job,
  type JobSpec,
  jobSchema,
  makeJob,
  type Page,
} from "./job";
export { pageFingerprint } from "./pageFingerprint";
export * from "./records";
export {
  type LocalSyncOptions,
  runLocalSync,
  type SyncProgress,
  type SyncSummary,
} from "./runLocalSync";
export { type SnapshotResult, SnapshotWriter } from "./SnapshotWriter";
