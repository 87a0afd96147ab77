import { ConnectorError } from "../errors";
import type { SnapshotEnds } from "../snapshot/readSnapshot";
import { duplicateRecordError, readSnapshotFile } from "../snapshot/readSnapshotFile";
import type { SyncStartLine } from "../snapshot/records";
import type { RunFiles } from "../sortedRuns/RunFiles";
import {
  MAX_FAN_IN,
  mergeRuns,
  RepeatedKey,
  RUN_RECORDS,
  type RunEntry,
  writeRun,
} from "../sortedRuns/runs";
import { DiffWorkError } from "./errors";
import { encodeRecord, KEYED_RECORD_CODEC, keyedRecord } from "./keyedRecord";

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
      return writeRun(files, options.tag, full, path, KEYED_RECORD_CODEC).then(
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
  if (buffer.length > 0)
    runs.push(await writeRun(files, options.tag, buffer, path, KEYED_RECORD_CODEC));
  buffer = [];
  // Merged down to `fanIn` runs; a key in two runs throws `RepeatedKey` before diff prints a change.
  runs = await mergeRuns(files, options.tag, runs, path, KEYED_RECORD_CODEC, fanIn);
  return { path, start: read.start, end: read.end, counts: read.counts, records, runs };
}
