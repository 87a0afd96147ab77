import { createWriteStream, rmSync, type WriteStream } from "node:fs";

/**
 * The temporary files of this process: a snapshot's `.partial` file, the assembler's grant spool
 * and an export's `.partial`. Their owners create them registered (`createTempFile`) and
 * unregister them when they rename or remove them, so a normal failure removes them through the
 * owner. The rest of the ways out of a command (SIGINT, SIGTERM, an uncaught exception) remove them
 * here, once `removeTempFilesOnExit` is installed by a command that has no shutdown of its own (the
 * CLI's sync, not the service).
 */
const files = new Set<string>();

export function registerTempFile(path: string): void {
  files.add(path);
}

export function unregisterTempFile(path: string): void {
  files.delete(path);
}

/**
 * A write stream to a new file at `path` ("wx": one that exists is an error), registered from
 * before the file exists: registered once the stream's `open` event came, a file a signal found
 * between its creation and that event was left behind (the SIGINT test of the command line's sync
 * saw its grant spool stay). So `path` must be this process's own (a sync id, a pid in its name).
 * An open that fails unregisters it: the file is not this process's (it existed) or not there. The
 * caller still waits for `open` and handles the error.
 */
export function createTempFile(path: string): WriteStream {
  registerTempFile(path);
  const stream = createWriteStream(path, { flags: "wx" });
  const notOpened = () => unregisterTempFile(path);
  stream.once("error", notOpened);
  stream.once("open", () => stream.off("error", notOpened));
  return stream;
}

/** The registered files now, for tests and diagnostics. */
export function tempFiles(): readonly string[] {
  return [...files];
}

/** Removes every registered file, synchronously: it runs where nothing asynchronous may. */
export function removeTempFiles(): void {
  for (const path of files) {
    try {
      // Recursive: a registered path may be a directory (the lock of an export's SQLite file).
      rmSync(path, { force: true, recursive: true });
    } catch {
      // A file that cannot be removed now cannot be removed later either; the others still go.
    }
  }
  files.clear();
}

/** The conventional exit code of a process ended by a signal: 128 + its number. */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

let installed = false;

/**
 * Installs, once per process, the removal of the registered files on SIGINT and SIGTERM (then
 * exits 130 or 143) and on an uncaught exception or unhandled rejection (whose default report and
 * exit code 1 are kept: a monitor does not replace them).
 */
export function removeTempFilesOnExit(): void {
  if (installed) return;
  installed = true;
  for (const [signal, code] of Object.entries(SIGNAL_EXIT_CODES)) {
    process.once(signal, () => {
      removeTempFiles();
      process.exit(code);
    });
  }
  process.on("uncaughtExceptionMonitor", removeTempFiles);
}
