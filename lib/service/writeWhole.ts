import { rename, rm, writeFile } from "node:fs/promises";
import { type SyncFile, writeFailure } from "../sync/errors";

/**
 * Writes `data` as the whole of `file.path`: to a temporary name beside it, then renamed, so a
 * crash never leaves half a file. A write the system refuses (a full disk, a read-only
 * filesystem) fails with `WriteFailedError` naming `file.path`, what became of the work and the
 * fix (`writeFailure`); the temporary file is removed and the file at `file.path` stays as it
 * was. The service's state files are all written this way.
 */
export async function writeWhole(
  file: SyncFile,
  data: string | Buffer,
  mode: number = 0o600,
): Promise<void> {
  const temp = `${file.path}.${process.pid}.tmp`;
  try {
    await writeFile(temp, data, { mode });
    await rename(temp, file.path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw writeFailure(error, file);
  }
}

/** How a write error tells the fix for a file in the state directory. */
export const STATE_DIR_ELSEWHERE = "point CONNECTOR_STATE_DIR at another filesystem";
