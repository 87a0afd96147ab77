import {
  digestSnapshotFile,
  type GuardVerdict,
  judgeRemoval,
  judgeRemovals,
  type RemovalLimit,
  type SnapshotDigest,
} from "../guard";
import type { GuardStore, Publisher } from "./types";

export interface GuardedPublish<R> {
  /** The new, complete snapshot (plain or gzip). */
  snapshotFile: string;
  /**
   * The new snapshot's digest, as its writer built it (`SnapshotAssembler.digest`); when absent,
   * the guard reads it back from `snapshotFile`.
   */
  digest?: SnapshotDigest;
  syncId: string;
  limit: RemovalLimit;
  store: GuardStore;
  publish: Publisher<R>;
}

/** Published (with what the publisher returned), or held by the guard (nothing published). */
export type PublishOutcome<R> =
  | { held: false; verdict: GuardVerdict; published: R }
  | { held: true; verdict: GuardVerdict };

/**
 * The step after a complete snapshot, the same in every runtime: the removal guard judges it
 * against the last published snapshot; over the limit it is held in the store and nothing is
 * published; otherwise it is published and its digest recorded as the one the next snapshot is
 * compared with. A failure of the publisher or the store is thrown, and nothing is recorded.
 */
export async function publishGuarded<R>(step: GuardedPublish<R>): Promise<PublishOutcome<R>> {
  const { store } = step;
  const { verdict, digest } = await judge(step);
  if (verdict.held) {
    await store.hold(step.snapshotFile, digest as SnapshotDigest);
    return { held: true, verdict };
  }
  const published = await step.publish(step.snapshotFile, step.syncId);
  if (digest && store.recordPublished) await store.recordPublished(digest);
  return { held: false, verdict, published };
}

/** The verdict on the new snapshot, and its digest where it was needed. */
async function judge<R>(
  step: GuardedPublish<R>,
): Promise<{ verdict: GuardVerdict; digest: SnapshotDigest | undefined }> {
  const { store, limit } = step;
  const first: GuardVerdict = { held: false, basis: "first", limit };
  if (store.removals && step.digest) {
    const removals = await store.removals(step.digest);
    const verdict =
      removals && removals.connector === step.digest.connector
        ? judgeRemovals(removals.users, removals.grants, limit)
        : first;
    return { verdict, digest: step.digest };
  }
  const previous = await store.published();
  // Nothing to compare with and no digest to keep: the new snapshot is not read again
  // (100,000 users take about 1.5 s of CPU), nor is it when its writer handed its digest.
  const digest =
    previous || store.recordPublished
      ? (step.digest ?? (await digestNew(step.snapshotFile)))
      : undefined;
  return { verdict: digest ? judgeRemoval(previous, digest, limit) : first, digest };
}

async function digestNew(snapshotFile: string): Promise<SnapshotDigest> {
  const result = await digestSnapshotFile(snapshotFile);
  if ("digest" in result) return result.digest;
  throw new Error(`the new snapshot cannot be read back: ${result.notSnapshot}`);
}
