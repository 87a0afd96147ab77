import type { SnapshotEnds } from "../snapshot/readSnapshot";
import type { BodyLine, SyncStartLine } from "../snapshot/records";
import { readSnapshotFile } from "../snapshot/snapshotFile";

/**
 * Streams the snapshot at `path` (plain or gzip) and hands each record between its ends to
 * `visit` (awaited only when it returns a promise). `start` sees `sync_start` before any record.
 * A file that is missing or not a complete snapshot (lib/snapshot: its structure, its sync_end's
 * syncId and counts, a record twice) is a `SnapshotInputError` in the words `diff` and `explore`
 * use too; what `visit` was given must then be thrown away. `checkDuplicates: false` only for a
 * second pass over a file a first one checked.
 */
export function readSnapshotForExport(
  path: string,
  visit: (record: BodyLine) => void | Promise<void>,
  start?: (line: SyncStartLine) => void,
  checkDuplicates = true,
): Promise<SnapshotEnds> {
  return readSnapshotFile(path, visit, { start, checkDuplicates });
}
