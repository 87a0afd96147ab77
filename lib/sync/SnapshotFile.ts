import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { createGzip } from "node:zlib";
import { registerTempFile, unregisterTempFile } from "./tempFiles";

/**
 * The file sink of a snapshot: a temporary file beside `path` (gzip when `path` ends in `.gz`),
 * renamed onto `path` only by `commit`, so a failed sync never replaces a good snapshot. The
 * temporary file is registered (`tempFiles`) while it exists, so a signal removes it too.
 */
export class SnapshotFile {
  readonly path: string;
  readonly tempPath: string;
  /** Where the snapshot's lines go; the assembler ends it. */
  readonly stream: Writable;
  readonly #file: WriteStream;

  private constructor(path: string, tag: string) {
    this.path = path;
    this.tempPath = join(dirname(path), `.${basename(path)}.${tag}.partial`);
    this.#file = createWriteStream(this.tempPath, { flags: "wx" });
    if (path.endsWith(".gz")) {
      const gzip = createGzip();
      gzip.pipe(this.#file);
      gzip.on("error", (error) => this.#file.destroy(error));
      this.stream = gzip;
    } else {
      this.stream = this.#file;
    }
  }

  /** Opens the temporary file; `tag` (the sync id) keeps concurrent runs apart. */
  static async open(path: string, tag: string): Promise<SnapshotFile> {
    const file = new SnapshotFile(path, tag);
    await once(file.#file, "open");
    // Created by this open ("wx"), so ours to remove on any way out.
    registerTempFile(file.tempPath);
    return file;
  }

  /** Waits for the file to be flushed and closed, then renames it onto `path`. */
  async commit(): Promise<void> {
    if (!this.#file.closed) await once(this.#file, "close");
    if (this.#file.errored) throw this.#file.errored;
    await rename(this.tempPath, this.path);
    unregisterTempFile(this.tempPath);
  }

  /** Removes the temporary file; whatever is at `path` stays as it was. */
  async abort(): Promise<void> {
    this.stream.destroy();
    this.#file.destroy();
    await rm(this.tempPath, { force: true });
    unregisterTempFile(this.tempPath);
  }
}
