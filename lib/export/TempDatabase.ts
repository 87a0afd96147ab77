import { closeSync, openSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import sqlite3, { type Database } from "node-sqlite3-wasm";
import { registerTempFile, unregisterTempFile } from "../snapshot/tempFiles";
import { type SyncFile, writeFailure } from "../sync/errors";

/** SQLite's page cache: the most of the database memory holds, whatever its size. */
const CACHE_KIB = 64 * 1024;

/**
 * An SQLite database in a temporary file beside an export's OUT, for what an export needs in
 * order but cannot hold in memory at the size of the largest tenants (the c1z's tables, the csv's
 * names by key). node-sqlite3-wasm is SQLite compiled to WebAssembly that reads and writes its file
 * through node:fs (no native build), so memory holds its page cache (`CACHE_KIB`) and not the
 * database. Its temporary storage is memory only (built with SQLITE_TEMP_STORE=3), so nothing
 * here may make SQLite sort a table (an index created on rows already in, an `order by` without an
 * index): indexes are created before the rows go in. The file and SQLite's lock beside it (a
 * directory `{path}.lock` while the database is open) are registered (lib/snapshot/tempFiles) so a
 * signal removes them, and `close` removes them.
 */
export class TempDatabase {
  readonly path: string;
  readonly db: Database;
  readonly #file: SyncFile;

  private constructor(path: string, db: Database, file: SyncFile) {
    this.path = path;
    this.db = db;
    this.#file = file;
  }

  /** A new database beside `outPath`, named after it, this process and `tag`. */
  static open(outPath: string, tag: string): TempDatabase {
    const path = join(dirname(outPath), `.${basename(outPath)}.${process.pid}.${tag}.db`);
    const file: SyncFile = {
      what: "a temporary database of the export",
      path,
      elsewhere: "give an OUT on a filesystem with room",
      outcome: `nothing was exported and ${outPath} is as it was`,
    };
    const lock = `${path}.lock`;
    registerTempFile(path);
    registerTempFile(lock);
    let db: Database;
    try {
      // Created here first: a directory that cannot take it fails with the system's errno (EACCES,
      // EROFS), which SQLite would only call "unable to open database file".
      closeSync(openSync(path, "wx"));
      db = new sqlite3.Database(path);
      db.exec(
        `pragma journal_mode = off; pragma synchronous = off; pragma locking_mode = exclusive; pragma cache_size = -${CACHE_KIB}`,
      );
    } catch (error) {
      removeFiles(path);
      throw writeFailure(databaseFailure(error, file), file);
    }
    return new TempDatabase(path, db, file);
  }

  /** `error` of SQLite on this file: a full disk or a failed write names it, its cause and the fix. */
  failure(error: unknown): unknown {
    return databaseFailure(error, this.#file);
  }

  /** Closes the database and removes its file; never throws. */
  close(): void {
    try {
      if (this.db.isOpen) this.db.close();
    } catch {
      // The file goes whatever SQLite says on closing it.
    }
    removeFiles(this.path);
  }
}

/** Removes the database at `path` and its lock, and unregisters them. */
function removeFiles(path: string): void {
  for (const file of [path, `${path}.lock`]) {
    rmSync(file, { force: true, recursive: true });
    unregisterTempFile(file);
  }
}

/**
 * SQLite's words for a file that cannot take a write, as the system's error they stand for, so
 * `writeFailure` names the file, the cause and the fix (exit 1); any other error as it is.
 */
function databaseFailure(error: unknown, file: SyncFile): unknown {
  if (!(error instanceof Error) || error.name !== "SQLite3Error") return error;
  const { message } = error;
  const errno = message.includes("disk is full")
    ? "ENOSPC"
    : message.includes("disk I/O error") || message.includes("unable to open database file")
      ? "EIO"
      : undefined;
  if (!errno) return error;
  return writeFailure(Object.assign(new Error(message), { code: errno }), file);
}
