import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { lineBatches } from "./lineBatches";

/**
 * The one JSON Lines encoding of the project: snapshots, shards and spools. One JSON value a
 * line, `\n`-terminated, UTF-8.
 */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * The JSON Lines of `values` (objects) as UTF-8 bytes: exactly the bytes of `jsonLine` for each,
 * from one `JSON.stringify` of each run of `STRINGIFY_RUN` values (twice as fast as one a value).
 * In an array's text `},{` stands between each two values; when it stands nowhere else (no string
 * holds one), each becomes `}\n{`, and the closing `]` the last line's end. Otherwise the values
 * are serialised one by one.
 */
export function jsonLinesBytes(values: readonly object[]): Buffer {
  if (values.length === 0) return Buffer.alloc(0);
  const texts: string[] = [];
  let size = 0;
  for (let from = 0; from < values.length; from += STRINGIFY_RUN) {
    const text = JSON.stringify(values.slice(from, from + STRINGIFY_RUN)).slice(1);
    texts.push(text);
    size += Buffer.byteLength(text);
  }
  const bytes = Buffer.allocUnsafe(size);
  let end = 0;
  for (const text of texts) {
    end += bytes.write(text, end);
    bytes[end - 1] = NEWLINE;
  }
  let between = 0;
  for (let at = bytes.indexOf(SEPARATOR); at !== -1; at = bytes.indexOf(SEPARATOR, at + 3)) {
    bytes[at + 1] = NEWLINE;
    between++;
  }
  return between === values.length - texts.length ? bytes : oneByOne(values);
}

/**
 * Values a `JSON.stringify`: a page's text at once (300 KB and more for 1,000 users) is a large
 * object of V8's heap, mapped afresh and copied whole when `slice` flattens it; runs of 64 keep
 * each text small. A 100,000-user sync's 100 pages of users: half the CPU, a fifth of the page
 * faults (microbenchmark: 300 pages, 1.8 against 1.0-1.3 s of CPU, 34,000 against 7,000 faults).
 */
const STRINGIFY_RUN = 64;
const SEPARATOR = Buffer.from("},{");
/** `\n`, which ends each line (and which no byte of a multi-byte UTF-8 character is). */
export const NEWLINE = 0x0a;

function oneByOne(values: readonly object[]): Buffer {
  return Buffer.from(values.map(jsonLine).join(""));
}

/**
 * Writes `chunk` (text as UTF-8) and waits for the stream to drain when its buffer is full; a
 * stream that already failed throws its error (it would never drain). `written` is called once
 * the stream is done with the chunk.
 */
export async function writeChunk(
  stream: Writable,
  chunk: string | Uint8Array,
  written?: () => void,
): Promise<void> {
  if (stream.errored) throw stream.errored;
  if (!stream.write(chunk, written)) await once(stream, "drain");
}

export function writeJsonLine(stream: Writable, value: unknown): Promise<void> {
  return writeChunk(stream, jsonLine(value));
}

/** The lines of a JSON Lines stream as raw text, blank lines skipped (`lineBatches`, one at a time). */
export async function* readLines(input: Readable): AsyncGenerator<string> {
  for await (const lines of lineBatches(input)) yield* lines;
}

/**
 * Ends a stream and waits until everything written has been flushed; throws the stream's error,
 * also one it had before (a `finish` event would never come).
 */
export async function endStream(stream: Writable): Promise<void> {
  stream.end();
  await finished(stream, { readable: false });
}
