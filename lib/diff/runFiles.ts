import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endStream, jsonLinesBytes, readLines, writeChunk } from "../sync/jsonLines";
import { registerTempFile, unregisterTempFile } from "../sync/tempFiles";
import { compareKeys, type KeyedRecord } from "./keyedRecord";

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

  async removeAll(): Promise<void> {
    await Promise.all([...this.#paths].map((path) => this.remove(path)));
  }
}

/** Sorts `records` by key and writes them as one run; returns its path. */
export async function writeRun(
  files: RunFiles,
  tag: string,
  records: KeyedRecord[],
): Promise<string> {
  records.sort((a, b) => compareKeys(a.key, b.key));
  const path = files.path(tag);
  const out = createWriteStream(path);
  const slice = 4096;
  for (let at = 0; at < records.length; at += slice) {
    await writeChunk(out, jsonLinesBytes(records.slice(at, at + slice)));
  }
  await endStream(out);
  return path;
}

/** The records of one run, in its order. */
async function* readRun(path: string): AsyncGenerator<KeyedRecord> {
  for await (const line of readLines(createReadStream(path))) yield JSON.parse(line) as KeyedRecord;
}

interface Head {
  record: KeyedRecord;
  rest: AsyncGenerator<KeyedRecord>;
}

/**
 * The records of sorted runs in one sorted stream (a k-way merge on a binary heap: memory holds
 * one record and one read buffer a run). A key that repeats is kept once, as the guard's digest
 * counts an id once.
 */
export async function* mergeRuns(paths: readonly string[]): AsyncGenerator<KeyedRecord> {
  const heap: Head[] = [];
  for (const path of paths) {
    const rest = readRun(path);
    const first = await rest.next();
    if (!first.done) push(heap, { record: first.value, rest });
  }
  try {
    yield* drain(heap);
  } finally {
    // A consumer that stops early closes the runs' files.
    await Promise.all(heap.map((head) => head.rest.return(undefined)));
  }
}

async function* drain(heap: Head[]): AsyncGenerator<KeyedRecord> {
  let last: string | undefined;
  while (heap.length > 0) {
    const top = heap[0] as Head;
    if (top.record.key !== last) {
      last = top.record.key;
      yield top.record;
    }
    const next = await top.rest.next();
    if (next.done) {
      const end = heap.pop() as Head;
      if (heap.length > 0) {
        heap[0] = end;
        siftDown(heap, 0);
      }
    } else {
      top.record = next.value;
      siftDown(heap, 0);
    }
  }
}

/** Merges `paths` into one run (a pass of a merge with more runs than it reads at once). */
export async function mergeIntoRun(
  files: RunFiles,
  tag: string,
  paths: readonly string[],
): Promise<string> {
  const path = files.path(tag);
  const out = createWriteStream(path);
  let batch: KeyedRecord[] = [];
  for await (const record of mergeRuns(paths)) {
    batch.push(record);
    if (batch.length === 4096) {
      await writeChunk(out, jsonLinesBytes(batch));
      batch = [];
    }
  }
  await writeChunk(out, jsonLinesBytes(batch));
  await endStream(out);
  for (const merged of paths) await files.remove(merged);
  return path;
}

const less = (a: Head, b: Head) => a.record.key < b.record.key;

function push(heap: Head[], head: Head): void {
  heap.push(head);
  let at = heap.length - 1;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!less(heap[at] as Head, heap[parent] as Head)) break;
    [heap[at], heap[parent]] = [heap[parent] as Head, heap[at] as Head];
    at = parent;
  }
}

function siftDown(heap: Head[], from: number): void {
  let at = from;
  for (;;) {
    const left = 2 * at + 1;
    const right = left + 1;
    let least = at;
    if (left < heap.length && less(heap[left] as Head, heap[least] as Head)) least = left;
    if (right < heap.length && less(heap[right] as Head, heap[least] as Head)) least = right;
    if (least === at) return;
    [heap[at], heap[least]] = [heap[least] as Head, heap[at] as Head];
    at = least;
  }
}
