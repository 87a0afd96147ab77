import { createReadStream, createWriteStream } from "node:fs";
import { endStream, writeChunk } from "../snapshot/jsonLines";
import type { RunFiles } from "./RunFiles";

/** Records sorted in memory before they go to disk as one run (about 20 MB of them at most). */
export const RUN_RECORDS = 50_000;
/** Runs merged at once; more are merged into longer runs first, so memory stays flat in size. */
export const MAX_FAN_IN = 32;

/** A record a run holds: `key` orders it and is unique in one snapshot. */
export interface Keyed {
  key: string;
}

/** How a record is one line of a run and back (the line holds no line break). */
export interface RunCodec<T extends Keyed> {
  encode(record: T): string;
  decode(line: string): T;
}

/** A record on its way to a run: its key, and its line (`RunCodec.encode`). */
export interface RunEntry {
  key: string;
  line: string;
}

/** Orders keys by UTF-16 code units, the same everywhere (sorting runs, merging, joining). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const NEEDS_ESCAPE = /[\\\n]/;

/** Text on one line: `\` as `\\` and a line break as `\n` (rarely needed: ids seldom hold either). */
export function escapeLine(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n") : text;
}

export function unescapeLine(line: string): string {
  return line.includes("\\")
    ? line.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"))
    : line;
}

/**
 * Two records with one key in the sorted runs of one snapshot: the file holds a record twice
 * (the snapshot reader's `duplicateRecordError` names the file and its lines).
 */
export class RepeatedKey<T extends Keyed = Keyed> extends Error {
  constructor(
    readonly file: string,
    readonly record: T,
  ) {
    super(`${record.key} of ${file} is in its sorted runs twice`);
  }
}

/**
 * Sorts `entries`, records of the snapshot `file`, by key and writes them as one run; returns its
 * path. Two entries with one key are a record the file holds twice (`RepeatedKey`).
 */
export async function writeRun<T extends Keyed>(
  files: RunFiles,
  tag: string,
  entries: RunEntry[],
  file: string,
  codec: RunCodec<T>,
): Promise<string> {
  entries.sort((a, b) => compareKeys(a.key, b.key));
  for (let i = 1; i < entries.length; i++) {
    const entry = entries[i] as RunEntry;
    if (entry.key === entries[i - 1]?.key) throw new RepeatedKey(file, codec.decode(entry.line));
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
    throw files.writeFailure(error, path, out);
  }
  return path;
}

/** Bytes written at once; a run is read 16 KiB at a time (up to 64 runs are open in a merge-join). */
const CHUNK = 256 * 1024;
const READ_CHUNK = 16 * 1024;

/** The records of one run (a file of lines) in batches (one a chunk read), in its order. */
export async function* readRun<T>(path: string, decode: (line: string) => T): AsyncGenerator<T[]> {
  let rest = "";
  for await (const text of createReadStream(path, {
    encoding: "utf8",
    highWaterMark: READ_CHUNK,
  })) {
    const chunk = rest + (text as string);
    const batch: T[] = [];
    let from = 0;
    for (let end = chunk.indexOf("\n"); end !== -1; end = chunk.indexOf("\n", from)) {
      batch.push(decode(chunk.slice(from, end)));
      from = end + 1;
    }
    rest = chunk.slice(from);
    if (batch.length > 0) yield batch;
  }
  if (rest.length > 0) yield [decode(rest)];
}

/** One run being read: its current batch and where in it. */
class RunCursor<T extends Keyed> {
  #batch: T[] = [];
  #at = 0;
  readonly #batches: AsyncGenerator<T[]>;

  constructor(path: string, decode: (line: string) => T) {
    this.#batches = readRun(path, decode);
  }

  get record(): T {
    return this.#batch[this.#at] as T;
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
 * The records of sorted runs of one snapshot as one sorted sequence (a k-way merge on a binary
 * heap: memory holds a batch a run). A key that repeats is a record twice: `next` throws
 * `RepeatedKey` (a duplicate is found for free here, where a set of keys would grow with the file).
 * `head` is the current record (undefined at the end); `next` moves past it and awaits only when a
 * run's batch is used up, so most records cost no tick.
 */
export class MergedRuns<T extends Keyed> {
  readonly #heap: RunCursor<T>[] = [];
  readonly #all: RunCursor<T>[];
  readonly #file: string;
  #last: string | undefined;

  private constructor(cursors: RunCursor<T>[], file: string) {
    this.#all = cursors;
    this.#file = file;
  }

  /** Merges `paths`, sorted runs of the snapshot `file` (named by `RepeatedKey`). */
  static async open<T extends Keyed>(
    paths: readonly string[],
    file: string,
    codec: RunCodec<T>,
  ): Promise<MergedRuns<T>> {
    const merged = new MergedRuns(
      paths.map((path) => new RunCursor(path, codec.decode)),
      file,
    );
    for (const cursor of merged.#all) {
      if (await cursor.step()) push(merged.#heap, cursor);
    }
    return merged;
  }

  get head(): T | undefined {
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
    const end = this.#heap.pop() as RunCursor<T>;
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
async function mergeIntoRun<T extends Keyed>(
  files: RunFiles,
  tag: string,
  paths: readonly string[],
  file: string,
  codec: RunCodec<T>,
): Promise<string> {
  const path = files.path(tag);
  const out = createWriteStream(path);
  const merged = await MergedRuns.open(paths, file, codec);
  try {
    let chunk = "";
    for (let record = merged.head; record; record = merged.head) {
      chunk += `${codec.encode(record)}\n`;
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
    throw files.writeFailure(error, path, out);
  } finally {
    await merged.close();
  }
  for (const done of paths) await files.remove(done);
  return path;
}

/**
 * Merges the sorted runs `paths` of the snapshot `file` into longer ones until at most `fanIn`
 * are left (so memory stays a batch a run, whatever the file's size), then reads those once in
 * key order: a key in two runs throws `RepeatedKey`, so a record twice is found before the runs are
 * used. Returns the runs left.
 */
export async function mergeRuns<T extends Keyed>(
  files: RunFiles,
  tag: string,
  paths: readonly string[],
  file: string,
  codec: RunCodec<T>,
  fanIn: number,
): Promise<string[]> {
  let runs = [...paths];
  while (runs.length > fanIn) {
    const merged: string[] = [];
    for (let at = 0; at < runs.length; at += fanIn)
      merged.push(await mergeIntoRun(files, tag, runs.slice(at, at + fanIn), file, codec));
    runs = merged;
  }
  // A run holds no key twice (writeRun, mergeIntoRun); keys repeated across runs are looked for now.
  if (runs.length > 1) await refuseRepeatedKeys(runs, file, codec);
  return runs;
}

/** Reads the runs of the snapshot `file` once in key order; throws `RepeatedKey` at a key in two of them. */
async function refuseRepeatedKeys<T extends Keyed>(
  paths: readonly string[],
  file: string,
  codec: RunCodec<T>,
): Promise<void> {
  const merged = await MergedRuns.open(paths, file, codec);
  try {
    while (merged.head) {
      const pending = merged.next();
      if (pending) await pending;
    }
  } finally {
    await merged.close();
  }
}

const less = <T extends Keyed>(a: RunCursor<T>, b: RunCursor<T>) => a.record.key < b.record.key;

function push<T extends Keyed>(heap: RunCursor<T>[], cursor: RunCursor<T>): void {
  heap.push(cursor);
  let at = heap.length - 1;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!less(heap[at] as RunCursor<T>, heap[parent] as RunCursor<T>)) break;
    [heap[at], heap[parent]] = [heap[parent] as RunCursor<T>, heap[at] as RunCursor<T>];
    at = parent;
  }
}

function siftDown<T extends Keyed>(heap: RunCursor<T>[], from: number): void {
  let at = from;
  for (;;) {
    const left = 2 * at + 1;
    const right = left + 1;
    let least = at;
    if (left < heap.length && less(heap[left] as RunCursor<T>, heap[least] as RunCursor<T>))
      least = left;
    if (right < heap.length && less(heap[right] as RunCursor<T>, heap[least] as RunCursor<T>))
      least = right;
    if (least === at) return;
    [heap[at], heap[least]] = [heap[least] as RunCursor<T>, heap[at] as RunCursor<T>];
    at = least;
  }
}
