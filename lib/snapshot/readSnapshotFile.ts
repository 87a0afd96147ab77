import { ConnectorError } from "../errors";
import { DuplicateCheck } from "./DuplicateCheck";
import { duplicateRecord, SnapshotInputError } from "./errors";
import { lineBatches } from "./lineBatches";
import {
  openSnapshot,
  readCompleteSnapshot,
  type SnapshotEnds,
  type Visitor,
} from "./readSnapshot";
import { type BodyLine, type RecordKind, recordIdentity, type SyncStartLine } from "./records";

export interface ReadSnapshotFileOptions {
  /** Sees `sync_start` before any record; may throw (a ConnectorError goes through as it is). */
  start?: (line: SyncStartLine) => void;
  /**
   * Refuse a record seen twice, found on disk in sorted runs of the records' keys
   * (`DuplicateCheck`: memory flat in the file's size, temporary files in TMPDIR). For `export`
   * and `explore`; `diff` finds them in its own sorted runs instead (`duplicateRecordError`).
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
  visit: Visitor,
  options: ReadSnapshotFileOptions = {},
): Promise<SnapshotEnds> {
  const check = options.checkDuplicates ? new DuplicateCheck(path) : undefined;
  const visitChecked = check
    ? (line: BodyLine, n: number, text?: string) => {
        const stored = check.add(line);
        return stored ? stored.then(() => visit(line, n, text)) : visit(line, n, text);
      }
    : visit;
  try {
    const read = await readWith(path, async (lines) =>
      readCompleteSnapshot(lines, visitChecked, options.start),
    );
    if ("notSnapshot" in read) throw SnapshotInputError.notComplete(path, read.notSnapshot);
    const repeated = await check?.repeated();
    if (repeated) throw await duplicateRecordError(path, repeated.kind, repeated.key);
    return read;
  } finally {
    await check?.close();
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
    for await (const batch of lines)
      for (const text of batch) {
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

/** Opens `path` and hands its lines (`lineBatches`) to `read`; the file's own failures as `SnapshotInputError`. */
async function readWith<T>(
  path: string,
  read: (lines: AsyncIterable<string[]>) => Promise<T>,
): Promise<T> {
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    input = await openSnapshot(path);
  } catch (error) {
    throw SnapshotInputError.unreadable(path, error);
  }
  try {
    return await read(lineBatches(input));
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
