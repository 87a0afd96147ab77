import { openSnapshot, readCompleteSnapshot } from "../snapshot/readSnapshot";
import { isUser, userKey } from "../snapshot/records";
import { readLines } from "../sync/jsonLines";
import { HashList, idHash, type SnapshotDigest } from "./SnapshotDigest";

/** A snapshot's digest, or why the file is not a complete snapshot. */
export type DigestResult = { digest: SnapshotDigest } | { notSnapshot: string };

/**
 * Streams a snapshot (one line at a time; memory holds only the hashes) into its digest: the
 * hash of each user's key and of each grant's id, the same keys `diff` compares by
 * (lib/diff). A file that is not a complete snapshot says so instead (`readCompleteSnapshot`).
 */
export async function digestSnapshotLines(lines: AsyncIterable<string>): Promise<DigestResult> {
  const users = new HashList();
  const grants = new HashList();
  const read = await readCompleteSnapshot(lines, (line) => {
    if (line.kind === "resource") {
      if (isUser(line)) users.push(idHash(userKey(line.type, line.id)));
    } else if (line.kind === "grant") {
      grants.push(idHash(line.id));
    }
  });
  if ("notSnapshot" in read) return read;
  const { syncId, connector } = read.start;
  return { digest: { syncId, connector, users: users.finish(), grants: grants.finish() } };
}

/** The digest of a snapshot file, plain or gzip (told by its first bytes, not its name). */
export async function digestSnapshotFile(path: string): Promise<DigestResult> {
  return digestSnapshotLines(readLines(await openSnapshot(path)));
}
