import { ConnectorError } from "../errors";
import type { SnapshotEnds } from "../snapshot/readSnapshot";
import type { SyncStartLine } from "../snapshot/records";
import { duplicateRecordError, readSnapshotFile } from "../snapshot/snapshotFile";
import { DiffWorkError } from "./errors";
import { encodeRecord, keyedRecord } from "./keyedRecord";
import {
  mergeIntoRun,
  RepeatedKey,
  type RunEntry,
  type RunFiles,
  refuseRepeatedKeys,
  writeRun,
} from "./runFiles";

/** Records sorted in memory before they go to disk as one run (about 20 MB of them at most). */
export const RUN_RECORDS = 50_000;
/** Runs merged at once; more are merged into longer runs first, so memory stays flat in size. */
export const MAX_FAN_IN = 32;

/** A complete snapshot, sorted on disk. */
export interface SortedSnapshot extends SnapshotEnds {
  path: string;
  /** The records `diff` compares. */
  records: number;
  /** Sorted runs of keyed records, at most `MAX_FAN_IN`. */
  runs: string[];
}

export interface SortOptions {
  /** `OLD` or `NEW`: names its temporary files. */
  tag: string;
  /** Sees `sync_start` first; may throw (two connectors) to stop before the rest is read. */
  onStart?: (start: SyncStartLine) => void;
  runRecords?: number;
  fanIn?: number;
}

/**
 * Reads the snapshot at `path` (plain or gzip) once, line by line, into sorted runs of its keyed
 * records (an external sort: memory holds `runRecords` records, whatever the snapshot's size). A
 * file that cannot be read, or is not a complete snapshot, is a `SnapshotInputError` naming it
 * (lib/snapshot). A record twice is found where it costs no memory: a resource type (a handful a
 * connector) in a set here, the others as equal neighbours in the sorted runs (`RepeatedKey`, thrown while
 * runs are written, merged, and read once more in key order before `diffSnapshots` joins them).
 */
export async function sortSnapshot(
  path: string,
  files: RunFiles,
  options: SortOptions,
): Promise<SortedSnapshot> {
  const runRecords = options.runRecords ?? RUN_RECORDS;
  const fanIn = options.fanIn ?? MAX_FAN_IN;
  let runs: string[] = [];
  let buffer: RunEntry[] = [];
  let records = 0;
  const resourceTypes = new Set<string>();
  let repeatedType: string | undefined;
  let repeated: RepeatedKey | undefined;
  const read = await readSnapshotFile(
    path,
    (line) => {
      if (line.kind === "resource_type" && !repeatedType) {
        if (resourceTypes.has(line.id)) repeatedType = line.id;
        resourceTypes.add(line.id);
      }
      const record = keyedRecord(line);
      if (!record) return;
      buffer.push({ key: record.key, line: encodeRecord(record) });
      records++;
      if (buffer.length < runRecords) return;
      const full = buffer;
      buffer = [];
      return writeRun(files, options.tag, full, path).then(
        (run) => {
          runs.push(run);
        },
        (error: unknown) => {
          // Refused once the rest of the file is found whole, as every reader does.
          if (error instanceof RepeatedKey) repeated ??= error;
          else throw ConnectorError.is(error) ? error : new DiffWorkError(error);
        },
      );
    },
    { start: options.onStart },
  );
  if (repeated) throw repeated;
  if (repeatedType !== undefined)
    throw await duplicateRecordError(path, "resource_type", repeatedType);
  if (buffer.length > 0) runs.push(await writeRun(files, options.tag, buffer, path));
  buffer = [];
  while (runs.length > fanIn) {
    const merged: string[] = [];
    for (let at = 0; at < runs.length; at += fanIn) {
      merged.push(await mergeIntoRun(files, options.tag, runs.slice(at, at + fanIn), path));
    }
    runs = merged;
  }
  // A run holds no key twice (writeRun, mergeIntoRun); keys repeated across runs are looked for
  // now, so diff refuses the file before printing any change.
  if (runs.length > 1) await refuseRepeatedKeys(runs, path);
  return { path, start: read.start, end: read.end, counts: read.counts, records, runs };
}
