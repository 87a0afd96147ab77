import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { readFull } from "../snapshot/readFull";
import { SnapshotFileError } from "./errors";

/** Bytes a file is read in to hash it, all into one buffer. */
const READ_BYTES = 256 * 1024;

/**
 * A file's size and hex SHA-256, read in blocks into one buffer (never whole in memory). One
 * buffer, not a read stream's new one a block: those are freed only when V8 collects, and a pass
 * that allocates next to nothing on V8's heap collects only when 64 MB of them are dead, a spike
 * of tens of MB in RSS for a 1,000,000-user snapshot (docs/service.md).
 */
export async function digestFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    const file = await open(path, "r");
    try {
      const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
      for (;;) {
        const read = await readFull(file, buffer, bytes);
        hash.update(buffer.subarray(0, read));
        bytes += read;
        if (read < buffer.length) break;
      }
    } finally {
      await file.close();
    }
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SnapshotFileError(`cannot read the snapshot ${path} (${reason})`, { cause: error });
  }
  return { sha256: hash.digest("hex"), bytes };
}
