import { ConnectorError } from "../errors";
import { HashedIdSet } from "../sync/HashedIdSet";
import { readLines } from "../sync/jsonLines";
import { duplicateRecord, SnapshotInputError } from "./errors";
import { openSnapshot, readCompleteSnapshot, type SnapshotEnds } from "./readSnapshot";
import { type BodyLine, type RecordKind, recordIdentity, type SyncStartLine } from "./records";

export interface ReadSnapshotFileOptions {
  /** Sees `sync_start` before any record; may throw (a ConnectorError goes through as it is). */
  start?: (line: SyncStartLine) => void;
  /**
   * Refuse a record seen twice, by a 128-bit hash of each key in memory (`HashedIdSet`: about 25
   * bytes a record). For readers that hold the snapshot anyway (`explore`, `export`); `diff`
   * keeps its memory flat and finds them in its sorted runs instead (`duplicateRecordError`).
   */
  checkDuplicates?: boolean;
}

/**
 * Reads the snapshot file at `path` (plain or gzip) through `readCompleteSnapshot`, handing each
 * record to `visit` (awaited only when it returns a promise). Every refusal is a
 * `SnapshotInputError` in the same words whichever command reads: a file that cannot be read,
 * damaged gzip data, not a complete snapshot (`readCompleteSnapshot`'s reasons), and with
 * `checkDuplicates` a record twice, naming its key and both lines. A record twice is reported
 * only once the rest of the file is found whole, as `diff` finds it after reading. Any other
 * ConnectorError `visit` or `start` throws goes through as it is.
 */
export async function readSnapshotFile(
  path: string,
  visit: (line: BodyLine, lineNumber: number) => void | Promise<void>,
  options: ReadSnapshotFileOptions = {},
): Promise<SnapshotEnds> {
  const keys = options.checkDuplicates ? new RecordKeys() : undefined;
  let repeated: { kind: RecordKind; key: string } | undefined;
  const visitChecked = keys
    ? (line: BodyLine, n: number) => {
        if (!repeated && !keys.add(line))
          repeated = { kind: line.kind, key: recordIdentity(line).key };
        return visit(line, n);
      }
    : visit;
  const read = await readWith(path, async (lines) =>
    readCompleteSnapshot(lines, visitChecked, options.start),
  );
  if ("notSnapshot" in read) throw SnapshotInputError.notComplete(path, read.notSnapshot);
  if (repeated) throw await duplicateRecordError(path, repeated.kind, repeated.key);
  return read;
}

/** The keys read so far, one hashed set a kind. */
class RecordKeys {
  readonly #sets: Record<RecordKind, HashedIdSet> = {
    resource_type: new HashedIdSet(8),
    resource: new HashedIdSet(),
    entitlement: new HashedIdSet(),
    grant: new HashedIdSet(),
  };

  /** False when the record's key was read before. */
  add(line: BodyLine): boolean {
    return this.#sets[line.kind].add(recordIdentity(line).hashKey);
  }
}

/**
 * The refusal of a snapshot that holds a record twice: reads the file again (only on this path,
 * so a reader needs no line numbers to find it) for the lines that hold `kind` `key`.
 */
export async function duplicateRecordError(
  path: string,
  kind: RecordKind,
  key: string,
): Promise<SnapshotInputError> {
  const found: number[] = [];
  await readWith(path, async (lines) => {
    let n = 0;
    for await (const text of lines) {
      n++;
      let line: BodyLine;
      try {
        line = JSON.parse(text) as BodyLine;
      } catch {
        continue;
      }
      if (line?.kind !== kind || recordIdentity(line).key !== key) continue;
      found.push(n);
      if (found.length === 2) return;
    }
  });
  return SnapshotInputError.notComplete(path, duplicateRecord(kind, key, found));
}

/** Opens `path` and hands its lines to `read`; the file's own failures as `SnapshotInputError`. */
async function readWith<T>(
  path: string,
  read: (lines: AsyncIterable<string>) => Promise<T>,
): Promise<T> {
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    throw SnapshotInputError.unreadable(path, error);
  }
  try {
    return await read(readLines(input));
  } catch (error) {
    if (ConnectorError.is(error)) throw error;
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === "Z_DATA_ERROR" || errno === "Z_BUF_ERROR")
      throw SnapshotInputError.notComplete(
        path,
        `its gzip data is damaged or cut short (${errno})`,
      );
    throw SnapshotInputError.unreadable(path, error);
  } finally {
    input.destroy();
  }
}
