import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { type SyncFile, writeFailure } from "../sync/errors";
import { endStream, writeChunk } from "../sync/jsonLines";
import { registerTempFile, unregisterTempFile } from "../sync/tempFiles";
import { compareKeys, decodeRecord, encodeRecord, type KeyedRecord } from "./keyedRecord";

/**
 * The temporary files of one `diff`: sorted runs of keyed records (JSON Lines), named after this
 * process in the system's temporary directory and registered (lib/sync/tempFiles), so a signal
 * removes them as well as `removeAll`.
 */
export class RunFiles {
  readonly #prefix: string;
  readonly #paths = new Set<string>();
  #count = 0;

  constructor(dir = tmpdir()) {
    this.#prefix = join(dir, `access-connectors-diff-${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  /** A fresh path for a temporary file, registered for removal. */
  path(tag: string): string {
    const path = `${this.#prefix}-${tag}-${++this.#count}.jsonl`;
    this.#paths.add(path);
    registerTempFile(path);
    return path;
  }

  async remove(path: string): Promise<void> {
    await rm(path, { force: true });
    this.#paths.delete(path);
    unregisterTempFile(path);
  }

  /** Never throws: a file that cannot be removed must not hide the failure that ended the work. */
  async removeAll(): Promise<void> {
    await Promise.all([...this.#paths].map((path) => this.remove(path).catch(() => {})));
  }
}

/**
 * A temporary file of diff as a write error names it: a failure of the file itself (a full disk)
 * is a `WriteFailedError` naming it and the fix (exit 1); any other error stays as it is.
 */
export function diffWriteFailure(error: unknown, path: string, out: Writable): unknown {
  if (!out.errored) return error;
  const file: SyncFile = {
    what: "a temporary file of diff",
    path,
    elsewhere: "set TMPDIR to a directory on a filesystem with room",
    outcome: "the diff stopped and its temporary files are removed",
  };
  return writeFailure(out.errored, file);
}

/** A record on its way to a run: its key, and its line (`encodeRecord`). */
export interface RunEntry {
  key: string;
  line: string;
}

/**
 * Sorts `entries`, records of the snapshot `file`, by key and writes them as one run; returns its
 * path. Two entries with one key are a record the file holds twice (`RepeatedKey`).
 */
export async function writeRun(
  files: RunFiles,
  tag: string,
  entries: RunEntry[],
  file: string,
): Promise<string> {
  entries.sort((a, b) => compareKeys(a.key, b.key));
  for (let i = 1; i < entries.length; i++) {
    const entry = entries[i] as RunEntry;
    if (entry.key === entries[i - 1]?.key) throw new RepeatedKey(file, decodeRecord(entry.line));
  }
  const path = files.path(tag);
  const out = createWriteStream(path);
  try {
    let chunk = "";
    for (const entry of entries) {
      chunk += `${entry.line}\n`;
      if (chunk.length >= CHUNK) {
        await writeChunk(out, chunk);
        chunk = "";
      }
    }
    await writeChunk(out, chunk);
    await endStream(out);
  } catch (error) {
    out.destroy();
    throw diffWriteFailure(error, path, out);
  }
  return path;
}

/** Bytes written at once; a run is read 16 KiB at a time (up to 64 runs are open in a merge-join). */
const CHUNK = 256 * 1024;
const READ_CHUNK = 16 * 1024;

/** The records of one run in batches (one a chunk read), in its order. */
async function* readRun(path: string): AsyncGenerator<KeyedRecord[]> {
  let rest = "";
  for await (const text of createReadStream(path, {
    encoding: "utf8",
    highWaterMark: READ_CHUNK,
  })) {
    const chunk = rest + (text as string);
    const batch: KeyedRecord[] = [];
    let from = 0;
    for (let end = chunk.indexOf("\n"); end !== -1; end = chunk.indexOf("\n", from)) {
      batch.push(decodeRecord(chunk.slice(from, end)));
      from = end + 1;
    }
    rest = chunk.slice(from);
    if (batch.length > 0) yield batch;
  }
  if (rest.length > 0) yield [decodeRecord(rest)];
}

/** One run being read: its current batch and where in it. */
class RunCursor {
  #batch: KeyedRecord[] = [];
  #at = 0;
  readonly #batches: AsyncGenerator<KeyedRecord[]>;

  constructor(path: string) {
    this.#batches = readRun(path);
  }

  get record(): KeyedRecord {
    return this.#batch[this.#at] as KeyedRecord;
  }

  /** Moves to the next record; false at the end. Awaits only to read the next batch. */
  step(): boolean | Promise<boolean> {
    this.#at++;
    return this.#at < this.#batch.length ? true : this.#load();
  }

  async #load(): Promise<boolean> {
    const next = await this.#batches.next();
    if (next.done) return false;
    this.#batch = next.value;
    this.#at = 0;
    return true;
  }

  async close(): Promise<void> {
    await this.#batches.return(undefined);
  }
}

/**
 * Two records with one key in the sorted runs of one snapshot: the file holds a record twice
 * (`refuseRepeated` in sortSnapshot.ts names the file and its lines).
 */
export class RepeatedKey extends Error {
  constructor(
    readonly file: string,
    readonly record: KeyedRecord,
  ) {
    super(`${record.kind} ${record.id} of ${file} is in its sorted runs twice`);
  }
}

/**
 * The records of sorted runs of one snapshot as one sorted sequence (a k-way merge on a binary
 * heap: memory holds a batch a run). A key that repeats is a record twice: `next` throws
 * `RepeatedKey` (a duplicate is found for free here, where a set of keys would grow with the file).
 * `head` is the current record (undefined at the end); `next` moves past it and awaits only when a
 * run's batch is used up, so most records cost no tick.
 */
export class MergedRuns {
  readonly #heap: RunCursor[] = [];
  readonly #all: RunCursor[];
  readonly #file: string;
  #last: string | undefined;

  private constructor(cursors: RunCursor[], file: string) {
    this.#all = cursors;
    this.#file = file;
  }

  /** Merges `paths`, sorted runs of the snapshot `file` (named by `RepeatedKey`). */
  static async open(paths: readonly string[], file: string): Promise<MergedRuns> {
    const merged = new MergedRuns(
      paths.map((path) => new RunCursor(path)),
      file,
    );
    for (const cursor of merged.#all) {
      if (await cursor.step()) push(merged.#heap, cursor);
    }
    return merged;
  }

  get head(): KeyedRecord | undefined {
    return this.#heap[0]?.record;
  }

  next(): undefined | Promise<void> {
    const top = this.#heap[0];
    if (!top) return undefined;
    this.#last = top.record.key;
    const stepped = top.step();
    if (stepped === true) {
      siftDown(this.#heap, 0);
      return this.#refuseRepeat();
    }
    if (stepped === false) {
      this.#dropTop();
      return this.#refuseRepeat();
    }
    return stepped.then((more) => {
      if (more) siftDown(this.#heap, 0);
      else this.#dropTop();
      return this.#refuseRepeat();
    });
  }

  #refuseRepeat(): undefined | Promise<void> {
    const head = this.head;
    if (head !== undefined && head.key === this.#last) throw new RepeatedKey(this.#file, head);
    return undefined;
  }

  #dropTop(): void {
    const end = this.#heap.pop() as RunCursor;
    if (this.#heap.length > 0) {
      this.#heap[0] = end;
      siftDown(this.#heap, 0);
    }
  }

  /** Closes the runs' files (also when the merge stops early). */
  async close(): Promise<void> {
    await Promise.all(this.#all.map((cursor) => cursor.close()));
  }
}

/** Merges `paths`, runs of the snapshot `file`, into one run (a pass of a merge with more runs than it reads at once). */
export async function mergeIntoRun(
  files: RunFiles,
  tag: string,
  paths: readonly string[],
  file: string,
): Promise<string> {
  const path = files.path(tag);
  const out = createWriteStream(path);
  const merged = await MergedRuns.open(paths, file);
  try {
    let chunk = "";
    for (let record = merged.head; record; record = merged.head) {
      chunk += `${encodeRecord(record)}\n`;
      if (chunk.length >= CHUNK) {
        await writeChunk(out, chunk);
        chunk = "";
      }
      const pending = merged.next();
      if (pending) await pending;
    }
    await writeChunk(out, chunk);
    await endStream(out);
  } catch (error) {
    out.destroy();
    throw diffWriteFailure(error, path, out);
  } finally {
    await merged.close();
  }
  for (const done of paths) await files.remove(done);
  return path;
}

/**
 * Reads the runs of the snapshot `file` once in key order and throws `RepeatedKey` at a key in
 * two of them, so a record twice is refused before `diff` prints a change (memory: a batch a run).
 */
export async function refuseRepeatedKeys(paths: readonly string[], file: string): Promise<void> {
  const merged = await MergedRuns.open(paths, file);
  try {
    while (merged.head) {
      const pending = merged.next();
      if (pending) await pending;
    }
  } finally {
    await merged.close();
  }
}

const less = (a: RunCursor, b: RunCursor) => a.record.key < b.record.key;

function push(heap: RunCursor[], cursor: RunCursor): void {
  heap.push(cursor);
  let at = heap.length - 1;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!less(heap[at] as RunCursor, heap[parent] as RunCursor)) break;
    [heap[at], heap[parent]] = [heap[parent] as RunCursor, heap[at] as RunCursor];
    at = parent;
  }
}

function siftDown(heap: RunCursor[], from: number): void {
  let at = from;
  for (;;) {
    const left = 2 * at + 1;
    const right = left + 1;
    let least = at;
    if (left < heap.length && less(heap[left] as RunCursor, heap[least] as RunCursor)) least = left;
    if (right < heap.length && less(heap[right] as RunCursor, heap[least] as RunCursor))
      least = right;
    if (least === at) return;
    [heap[at], heap[least]] = [heap[least] as RunCursor, heap[at] as RunCursor];
    at = least;
  }
}
