import { UsageError } from "../errors";
import { openSnapshot, readCompleteSnapshot, type SnapshotEnds } from "../snapshot/readSnapshot";
import type { BodyLine } from "../snapshot/records";
import { readLines } from "../sync/jsonLines";

/**
 * Reads a complete snapshot (plain or gzip) through `readCompleteSnapshot` and hands each line
 * between `sync_start` and `sync_end` to `visit`. A file that is not a complete snapshot is a
 * UsageError naming the file, the line and the field at fault (exit 2): the page never shows part
 * of a sync as the whole.
 */
export async function readSnapshotForExplore(
  path: string,
  visit: (line: BodyLine) => void,
): Promise<SnapshotEnds> {
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code ?? String(error)}; check the path`);
  }
  let read: Awaited<ReturnType<typeof readCompleteSnapshot>>;
  try {
    read = await readCompleteSnapshot(readLines(input), visit);
  } finally {
    input.destroy();
  }
  if ("notSnapshot" in read)
    throw new UsageError(
      `${path} is not a complete snapshot: ${read.notSnapshot} (give a file a sync wrote)`,
    );
  return read;
}
