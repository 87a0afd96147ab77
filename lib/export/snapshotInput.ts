import { UsageError } from "../errors";
import { openSnapshot, readCompleteSnapshot, type SnapshotEnds } from "../snapshot/readSnapshot";
import type { BodyLine } from "../snapshot/records";
import { readLines } from "../sync/jsonLines";
import type { RecordKind } from "../sync/records";

/** The file given to `export` is not a complete snapshot: names the file and what is wrong (exit 2). */
export class NotASnapshotError extends UsageError {
  override name = "NotASnapshotError";
  override readonly code: string = "not_a_snapshot";

  constructor(path: string, reason: string) {
    super(`${path} is not a complete snapshot: ${reason}; nothing was exported`);
  }
}

/** The ends of a snapshot that was read whole, with how many records of each kind it held. */
export interface SnapshotRead extends SnapshotEnds {
  counts: Record<RecordKind, number>;
}

/**
 * Streams the snapshot at `path` (plain or gzip) through `readCompleteSnapshot` and hands each
 * record between its ends to `visit` (awaited only when it returns a promise). `start` sees
 * `sync_start` before any record. Throws `NotASnapshotError` when the file is missing, not a
 * complete snapshot (as `readCompleteSnapshot` says: a record that lacks a field the format
 * defines is one), or the records counted differ from what its `sync_end` says it holds; what
 * `visit` was given must then be thrown away.
 */
export async function readSnapshotForExport(
  path: string,
  visit: (record: BodyLine) => void | Promise<void>,
  start?: Parameters<typeof readCompleteSnapshot>[2],
): Promise<SnapshotRead> {
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new NotASnapshotError(path, `it cannot be read (${errno})`);
  }
  const counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  const countRecord = (record: BodyLine) => {
    counts[record.kind]++;
    return visit(record);
  };
  let read: Awaited<ReturnType<typeof readCompleteSnapshot>>;
  try {
    read = await readCompleteSnapshot(readLines(input), countRecord, start);
  } catch (error) {
    if (error instanceof NotASnapshotError) throw error;
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === "Z_DATA_ERROR" || errno === "Z_BUF_ERROR")
      throw new NotASnapshotError(path, `its gzip data is damaged or cut short (${errno})`);
    throw error;
  } finally {
    input.destroy();
  }
  if ("notSnapshot" in read) throw new NotASnapshotError(path, read.notSnapshot);
  const declared = read.end.counts;
  for (const kind of Object.keys(counts) as RecordKind[]) {
    if (declared[kind] !== counts[kind])
      throw new NotASnapshotError(
        path,
        `its sync_end counts ${declared[kind]} ${kind} records but it holds ${counts[kind]}`,
      );
  }
  return { ...read, counts };
}
