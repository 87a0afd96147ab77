import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { SnapshotFileError } from "./errors";

/**
 * Bytes a snapshot is read in, to hash it and to upload it: at or above the 128 KiB from which the
 * command's `#!` line has glibc map a block of its own (bin/access-connectors.js), so the chunks of
 * a 1,000,000-user upload (about 100 MB, read twice) are given back when freed instead of leaving
 * the malloc heap grown for the next sync.
 */
export const SNAPSHOT_CHUNK_BYTES = 256 * 1024;

/** A file's size and hex SHA-256, read as a stream (never whole in memory). */
export async function digestFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    await pipeline(
      createReadStream(path, { highWaterMark: SNAPSHOT_CHUNK_BYTES }),
      async (chunks: AsyncIterable<Buffer>) => {
        for await (const chunk of chunks) {
          bytes += chunk.length;
          hash.update(chunk);
        }
      },
    );
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SnapshotFileError(`cannot read the snapshot ${path} (${reason})`, { cause: error });
  }
  return { sha256: hash.digest("hex"), bytes };
}
