import { rename, rm, writeFile } from "node:fs/promises";
import { type SyncFile, writeFailure } from "../sync/errors";

/**
 * Writes `data` (parts are written one after another) as the whole of `file.path`: to a
 * temporary name beside it, then renamed, so a crash never leaves half a file. The temporary file is created exclusively (`wx`: a file or
 * symlink someone else put under its name in a shared directory is never followed or written);
 * one already there (left by a crashed process with the same pid, as pid 1 of every container
 * start) is removed, not followed, and the creation tried once more. A write the system refuses
 * (a full disk, a read-only filesystem) fails with `WriteFailedError` naming `file.path`, what
 * became of the work and the fix (`writeFailure`); the temporary file is removed and the file at
 * `file.path` stays as it was. The service's state files are all written this way.
 */
export async function writeWhole(
  file: SyncFile,
  data: string | Buffer | readonly Buffer[],
  mode: number = 0o600,
): Promise<void> {
  const temp = `${file.path}.${process.pid}.tmp`;
  const create = () => writeFile(temp, data, { mode, flag: "wx" });
  try {
    await create().catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
      await rm(temp, { force: true });
      await create();
    });
    await rename(temp, file.path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw writeFailure(error, file);
  }
}

/** How a write error tells the fix for a file in the state directory. */
export const STATE_DIR_ELSEWHERE = "point CONNECTOR_STATE_DIR at another filesystem";
