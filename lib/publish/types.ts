import type { PreviousRemovals, SnapshotDigest } from "../guard";

/**
 * Where a runtime keeps what the removal guard compares and holds: the files beside `--out` (CLI),
 * the state directory (service), the instance's prefix in the shards bucket (cloud).
 */
export interface GuardStore {
  /** The last published snapshot's digest; undefined when there is nothing to compare with. */
  published(): Promise<SnapshotDigest | undefined>;
  /**
   * What the new snapshot (by its digest) removes from the last published one, counted as that one
   * is read rather than from its digest built in memory; undefined when there is nothing to compare
   * with. Where a store has it, the guard uses it, not `published`, to judge (the CLI's, whose
   * published snapshot is the file at --out).
   */
  removals?(next: SnapshotDigest): Promise<PreviousRemovals | undefined>;
  /**
   * After a publish: its digest is what the next snapshot is compared with, and a snapshot held
   * before is superseded. Absent where the published snapshot is its own record (the CLI's
   * `--out`, digested when the next sync compares): a new snapshot is then digested only when
   * there is something to compare it with.
   */
  recordPublished?(digest: SnapshotDigest): Promise<void>;
  /** Keeps `snapshotFile` as the held snapshot, with its digest, replacing any held before. */
  hold(snapshotFile: string, digest: SnapshotDigest): Promise<void>;
  /** The held snapshot's digest (its sync id and counts), if one is held. */
  held(): Promise<SnapshotDigest | undefined>;
  /** Runs `use` with the held snapshot as a local file (the cloud's is downloaded for the time of `use`). */
  withHeldSnapshot<T>(use: (snapshotFile: string) => Promise<T>): Promise<T>;
}

/**
 * Publishes a complete snapshot file under its sync id: the CLI renames it onto `--out`, the
 * service and the cloud upload it to the platform. What it returns is handed back to the caller.
 */
export type Publisher<R> = (snapshotFile: string, syncId: string) => Promise<R>;
