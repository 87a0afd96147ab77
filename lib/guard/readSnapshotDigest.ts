import { readLines } from "../snapshot/jsonLines";
import { openSnapshot, readCompleteSnapshot } from "../snapshot/readSnapshot";
import type { Removal } from "./judgeRemoval";
import { RemovalCounter } from "./RemovalCounter";
import type { SnapshotDigest } from "./SnapshotDigest";
import { SnapshotDigestBuilder } from "./SnapshotDigestBuilder";

/** A snapshot's digest, or why the file is not a complete snapshot. */
export type DigestResult = { digest: SnapshotDigest } | { notSnapshot: string };

/**
 * Streams a snapshot (one line at a time; memory holds only the hashes) into its digest: the
 * hash of each user's key and of each grant's id, the same keys `diff` compares by
 * (lib/diff), by the rule the snapshot's writer builds it with (`SnapshotDigestBuilder`). A file
 * that is not a complete snapshot says so instead (`readCompleteSnapshot`).
 */
export async function digestSnapshotLines(lines: AsyncIterable<string>): Promise<DigestResult> {
  const digest = new SnapshotDigestBuilder();
  const read = await readCompleteSnapshot(lines, (line) => digest.add(line));
  if ("notSnapshot" in read) return read;
  return { digest: digest.finish(read.start) };
}

/** The digest of a snapshot file, plain or gzip (told by its first bytes, not its name). */
export async function digestSnapshotFile(path: string): Promise<DigestResult> {
  return digestSnapshotLines(readLines(await openSnapshot(path)));
}

/** What a new snapshot removes from a previous one (its connector, its users and grants). */
export interface PreviousRemovals {
  connector: string;
  users: Removal;
  grants: Removal;
}

/**
 * The users and grants of the snapshot file at `path` (plain or gzip) that the new snapshot, by
 * its digest `next`, no longer has: the counts `judgeRemoval` takes from the two digests, read in
 * one pass without building the file's digest (`RemovalCounter`); or why the file is not a
 * complete snapshot.
 */
export async function countRemovalsFromFile(
  path: string,
  next: SnapshotDigest,
): Promise<PreviousRemovals | { notSnapshot: string }> {
  const counter = new RemovalCounter(next);
  const read = await readCompleteSnapshot(readLines(await openSnapshot(path)), (line) =>
    counter.add(line),
  );
  if ("notSnapshot" in read) return read;
  return { connector: read.start.connector, ...counter.finish() };
}
