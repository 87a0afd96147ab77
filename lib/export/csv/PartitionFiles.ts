import { createWriteStream, type WriteStream } from "node:fs";
import { endStream, writeChunk } from "../../snapshot/jsonLines";
import type { RunFiles } from "../../sortedRuns/RunFiles";

/** Characters a partition gathers before they are written (so memory holds this a partition). */
const CHUNK = 32 * 1024;

/**
 * Lines appended to `count` temporary files (`RunFiles`), each to the file its caller chooses:
 * the partitions of a hash join. Each file keeps its lines in the order they came.
 */
export class PartitionFiles {
  readonly paths: readonly string[];
  readonly #files: RunFiles;
  readonly #streams: (WriteStream | undefined)[];
  readonly #pending: string[];

  constructor(files: RunFiles, tag: string, count: number) {
    this.#files = files;
    this.paths = Array.from({ length: count }, () => files.path(tag));
    this.#streams = new Array(count).fill(undefined);
    this.#pending = new Array(count).fill("");
  }

  /** Appends `line` (no line break in it) to partition `at`; a promise while a full chunk is written. */
  add(at: number, line: string): undefined | Promise<void> {
    const text = `${this.#pending[at]}${line}\n`;
    if (text.length < CHUNK) {
      this.#pending[at] = text;
      return undefined;
    }
    this.#pending[at] = "";
    return this.#write(at, text);
  }

  /** Writes what is left and closes every file (an empty partition is an empty file). */
  async end(): Promise<void> {
    for (let at = 0; at < this.paths.length; at++) {
      await this.#write(at, this.#pending[at] as string);
      this.#pending[at] = "";
      const out = this.#stream(at);
      try {
        await endStream(out);
      } catch (error) {
        throw this.#files.writeFailure(error, this.paths[at] as string, out);
      }
    }
  }

  /** Closes every file still open (after a failure; `end` closes them otherwise). */
  destroy(): void {
    for (const out of this.#streams) out?.destroy();
  }

  async #write(at: number, text: string): Promise<void> {
    const out = this.#stream(at);
    try {
      await writeChunk(out, text);
    } catch (error) {
      throw this.#files.writeFailure(error, this.paths[at] as string, out);
    }
  }

  #stream(at: number): WriteStream {
    let out = this.#streams[at];
    if (!out) {
      out = createWriteStream(this.paths[at] as string);
      this.#streams[at] = out;
    }
    return out;
  }
}

/** A string's partition of `count`: FNV-1a over its UTF-16 code units. */
export function partitionOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % count;
}
