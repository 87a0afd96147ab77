import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { SnapshotFileError } from "./errors";

/** A file's size and hex SHA-256, read as a stream (never whole in memory). */
export async function digestFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  try {
    await pipeline(createReadStream(path), async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) {
        bytes += chunk.length;
        hash.update(chunk);
      }
    });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SnapshotFileError(`cannot read the snapshot ${path} (${reason})`, { cause: error });
  }
  return { sha256: hash.digest("hex"), bytes };
}
