export { RunFiles } from "../sortedRuns/RunFiles";
export {
  type Change,
  type DiffCounts,
  type DiffOptions,
  type DiffResult,
  diffSnapshots,
} from "./compareSnapshots";
export { DiffWorkError, SnapshotInputError } from "./errors";
export { HumanReport } from "./humanReport";
export { jsonChanges, jsonEnd } from "./jsonReport";
export { ChunkedOutput } from "./output";
