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
  type DigestResult,
  digestSnapshotFile,
  openSnapshot,
} from "./readSnapshotDigest";
export { parseRemovalLimit, type RemovalLimit } from "./removalLimit";
export {
  decodeDigest,
  encodeDigest,
  HashList,
  idHash,
  type SnapshotDigest,
  sharedCount,
} from "./SnapshotDigest";
export {
  type BodyLine,
  isUser,
  type ResourceLine,
  readCompleteSnapshot,
  type SnapshotEnds,
  type SnapshotLine,
  type SyncStartLine,
  snapshotLine,
  userKey,
} from "./snapshotRecords";
