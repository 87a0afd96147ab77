import { open } from "node:fs/promises";
import { readFull } from "../snapshot/readFull";
import { RemovalCounter } from "./RemovalCounter";
import type { PreviousRemovals } from "./readSnapshotDigest";
import { decodeDigestHeader, type SnapshotDigest } from "./SnapshotDigest";

/** Bytes read at once: a multiple of a hash's 8, larger than any header line written. */
const READ_BYTES = 256 * 1024;

/**
 * What the new snapshot (by its digest `next`) removes from the one whose digest file (as
 * `encodeDigest` writes it) is at `path`, counted as the file is read (`RemovalCounter`), so its
 * hashes are never all in memory; undefined when there is no file. A file that is not a digest
 * throws as `decodeDigest` does, with the same message, naming `source` (a copy downloaded names
 * where it came from).
 */
export async function countRemovalsFromDigestFile(
  path: string,
  next: SnapshotDigest,
  source = path,
): Promise<PreviousRemovals | undefined> {
  const file = await open(path, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!file) return undefined;
  try {
    const { size } = await file.stat();
    const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
    let filled = await readFull(file, buffer, 0);
    const { header, bodyAt } = decodeDigestHeader(buffer.subarray(0, filled), size, source);
    // A digest file holds each hash once (`encodeDigest` of a finished `HashList`).
    const counter = new RemovalCounter(next, { distinct: true });
    const words = new Uint32Array(2);
    let hash = 0;
    let at = bodyAt;
    for (let position = filled; ; ) {
      for (; at + 8 <= filled; at += 8, hash++) {
        words[0] = buffer.readUInt32LE(at);
        words[1] = buffer.readUInt32LE(at + 4);
        if (hash < header.users) counter.userWords(words, 0);
        else counter.grantWords(words, 0);
      }
      // A hash cut at the end of the block is read whole from the start of the next.
      const left = filled - at;
      buffer.copy(buffer, 0, at, filled);
      const read = await readFull(file, buffer.subarray(left), position);
      if (read === 0) break;
      position += read;
      filled = left + read;
      at = 0;
    }
    return { connector: header.connector, ...counter.finish() };
  } finally {
    await file.close();
  }
}
