export {
  MAX_REMOVAL_FLAG,
  MAX_REMOVAL_VARIABLE,
} from "./constants";
export { SnapshotHeldError } from "./errors";
export {
  describeVerdict,
  type GuardVerdict,
  judgeRemoval,
  judgeRemovals,
  type Removal,
} from "./judgeRemoval";
export {
  countRemovalsFromFile,
  type DigestResult,
  digestSnapshotFile,
  type PreviousRemovals,
} from "./readSnapshotDigest";
export { parseRemovalLimit, type RemovalLimit, removalLimitSetting } from "./removalLimit";
export {
  decodeDigest,
  digestParts,
  encodeDigest,
  HashList,
  idHash,
  releaseHashes,
  type SnapshotDigest,
  sharedCount,
} from "./SnapshotDigest";
export { type DigestedRecord, SnapshotDigestBuilder } from "./SnapshotDigestBuilder";
