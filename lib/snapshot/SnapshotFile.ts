import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { createGzip } from "node:zlib";
import { type SyncFile, writeFailure } from "../sync/errors";
import { createTempFile, unregisterTempFile } from "./tempFiles";

/**
 * The file sink of a snapshot: a temporary file beside `path` (gzip when `path` ends in `.gz`),
 * renamed onto `path` only by `commit`, so a failed sync never replaces a good snapshot. The
 * temporary file is registered (`tempFiles`) while it exists, so a signal removes it too. A file
 * that cannot be written (a full disk, say) fails with `WriteFailedError` naming it.
 */
export class SnapshotFile {
  readonly path: string;
  readonly tempPath: string;
  /**
   * Where the snapshot's lines go; the assembler ends it. Fails as the file does. Done with each
   * chunk once its write's callback has run (`outReleasesChunks` of the assembler).
   */
  readonly stream: Writable;
  /** The temporary file, as a write error names it. */
  readonly file: SyncFile;
  readonly #file: WriteStream;

  private constructor(path: string, tag: string, elsewhere: string) {
    this.path = path;
    this.tempPath = join(dirname(path), `.${basename(path)}.${tag}.partial`);
    this.file = { what: "the new snapshot", path: this.tempPath, elsewhere };
    this.#file = createTempFile(this.tempPath);
    if (path.endsWith(".gz")) {
      const gzip = createGzip();
      gzip.pipe(this.#file);
      gzip.on("error", (error) => this.#file.destroy(error));
      // The file's error reaches the assembler through gzip; unheard, it crashed the process.
      this.#file.on("error", (error) => gzip.destroy(error));
      this.stream = gzip;
    } else {
      this.stream = this.#file;
    }
  }

  /**
   * Opens the temporary file; `tag` (the sync id) keeps concurrent runs apart; `elsewhere` says
   * how to write the snapshot on another filesystem, for a write error's message.
   */
  static async open(path: string, tag: string, elsewhere: string): Promise<SnapshotFile> {
    const file = new SnapshotFile(path, tag, elsewhere);
    try {
      await once(file.#file, "open");
    } catch (error) {
      file.stream.destroy();
      throw writeFailure(error, file.file);
    }
    return file;
  }

  /** Waits for the file to be flushed and closed, then renames it onto `path`. */
  async commit(): Promise<void> {
    if (!this.#file.closed) await once(this.#file, "close");
    if (this.#file.errored) throw writeFailure(this.#file.errored, this.file);
    await rename(this.tempPath, this.path).catch((error: unknown) => {
      throw writeFailure(error, { ...this.file, what: "the snapshot", path: this.path });
    });
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
