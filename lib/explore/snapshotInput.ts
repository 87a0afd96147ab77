import type { SnapshotEnds } from "../snapshot/readSnapshot";
import type { BodyLine } from "../snapshot/records";
import { readSnapshotFile } from "../snapshot/snapshotFile";

/**
 * Reads a complete snapshot (plain or gzip) and hands each line between `sync_start` and
 * `sync_end` to `visit`. A file that is not a complete snapshot (lib/snapshot: its structure, its
 * sync_end's syncId and counts, a record twice) is a `SnapshotInputError` (a UsageError, exit 2)
 * in the words `diff` and `export` use too: the page never shows part of a sync as the whole.
 */
export function readSnapshotForExplore(
  path: string,
  visit: (line: BodyLine) => void,
): Promise<SnapshotEnds> {
  return readSnapshotFile(path, visit, { checkDuplicates: true });
}
