import type { FileHandle } from "node:fs/promises";

/** Fills `into` from `position` of the file; fewer bytes only at its end. */
export async function readFull(file: FileHandle, into: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < into.length) {
    const { bytesRead } = await file.read(into, filled, into.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}
