import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { finished } from "node:stream/promises";

/**
 * The one JSON Lines encoding of the project: snapshots, shards and spools. One JSON value a
 * line, `\n`-terminated, UTF-8.
 */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * Writes `chunk` (text as UTF-8) and waits for the stream to drain when its buffer is full; a
 * stream that already failed throws its error (it would never drain).
 */
export async function writeChunk(stream: Writable, chunk: string | Uint8Array): Promise<void> {
  if (stream.errored) throw stream.errored;
  if (!stream.write(chunk)) await once(stream, "drain");
}

export function writeJsonLine(stream: Writable, value: unknown): Promise<void> {
  return writeChunk(stream, jsonLine(value));
}

/** The lines of a JSON Lines stream as raw text, blank lines skipped. */
export async function* readLines(input: Readable): AsyncGenerator<string> {
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.length > 0) yield line;
  }
}

/**
 * Ends a stream and waits until everything written has been flushed; throws the stream's error,
 * also one it had before (a `finish` event would never come).
 */
export async function endStream(stream: Writable): Promise<void> {
  stream.end();
  await finished(stream, { readable: false });
}
