import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { endStream, writeChunk } from "../snapshot/jsonLines";
import { createTempFile, unregisterTempFile } from "../snapshot/tempFiles";
import { type SyncFile, writeFailure } from "../sync/errors";

/**
 * The file an export writes: a temporary file beside `path`, renamed onto it only by `commit`, so
 * an export that fails (a snapshot found incomplete halfway, a full disk) leaves whatever was at
 * `path` as it was. A write that fails throws `WriteFailedError` naming `path`. The temporary file
 * is registered while it exists, so a signal removes it too.
 */
export class ExportFile {
  readonly path: string;
  readonly tempPath: string;
  readonly #stream: WriteStream;
  readonly #file: SyncFile;

  private constructor(path: string) {
    this.path = path;
    this.tempPath = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
    this.#file = {
      what: "the export",
      path,
      elsewhere: "give another OUT",
      outcome: `nothing was exported and ${path} is as it was`,
    };
    this.#stream = createTempFile(this.tempPath);
  }

  static async open(path: string): Promise<ExportFile> {
    const file = new ExportFile(path);
    try {
      await once(file.#stream, "open");
    } catch (error) {
      file.#stream.destroy();
      throw writeFailure(error, file.#file);
    }
    return file;
  }

  /** Writes `chunk`, waiting while the file's buffer is full. */
  async write(chunk: string | Uint8Array): Promise<void> {
    try {
      await writeChunk(this.#stream, chunk);
    } catch (error) {
      throw writeFailure(error, this.#file);
    }
  }

  /** Flushes and closes the file, then renames it onto `path`. */
  async commit(): Promise<void> {
    try {
      await endStream(this.#stream);
      await rename(this.tempPath, this.path);
    } catch (error) {
      throw writeFailure(error, this.#file);
    }
    unregisterTempFile(this.tempPath);
  }

  /** Removes the temporary file; whatever is at `path` stays as it was. */
  async abort(): Promise<void> {
    this.#stream.destroy();
    await rm(this.tempPath, { force: true });
    unregisterTempFile(this.tempPath);
  }

  /** Runs `write` on a fresh file at `path` and commits it, or removes it when `write` fails. */
  static async writeAtomically(
    path: string,
    write: (file: ExportFile) => Promise<void>,
  ): Promise<void> {
    const file = await ExportFile.open(path);
    try {
      await write(file);
      await file.commit();
    } catch (error) {
      await file.abort();
      throw error;
    }
  }
}
