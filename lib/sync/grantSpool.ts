/**
 * The grant spool of `SnapshotAssembler`: grants wait in it, a frame a page with their hashes,
 * until every entitlement and principal has been written; then its frames are read back in order
 * and the kept grants copied to the snapshot in chunks.
 */
import { type FileHandle, open } from "node:fs/promises";
import type { Writable } from "node:stream";
import { ID_HASH_WORDS } from "../guard/SnapshotDigest";
import { grantLinesBytes } from "./grantLines";
import { WORDS } from "./HashedIdSet";
import { writeChunk } from "./jsonLines";
import type { GrantRecord } from "./records";

/** Grants are copied from the spool in writes of this many bytes. */
export const COPY_CHUNK_BYTES = 256 * 1024;

/**
 * Bytes copied to a stream in chunks of `size`: each chunk a buffer of its own, so the stream
 * may keep it, filled from buffers that are reused as soon as `append` returns.
 */
export class ChunkCopier {
  readonly #out: Writable;
  readonly #size: number;
  #chunk: Buffer;
  #used = 0;

  constructor(out: Writable, size: number) {
    this.#out = out;
    this.#size = size;
    this.#chunk = Buffer.allocUnsafeSlow(size);
  }

  async append(bytes: Buffer): Promise<void> {
    let from = 0;
    while (from < bytes.length) {
      if (this.#used === this.#size) await this.flush();
      const copied = bytes.copy(this.#chunk, this.#used, from);
      this.#used += copied;
      from += copied;
    }
  }

  async flush(): Promise<void> {
    if (this.#used === 0) return;
    const full = this.#chunk.subarray(0, this.#used);
    this.#chunk = Buffer.allocUnsafeSlow(this.#size);
    this.#used = 0;
    await writeChunk(this.#out, full);
  }
}

/**
 * The grant spool: a frame a page, `[grants, bytes]` (two 32-bit little-endian words), then each
 * grant's hashes (`SPOOL_HASH_WORDS` words: its entitlement's, then its principal's, as `hashId`
 * writes them, then the guard's hash of the grant at `SPOOL_DIGEST_AT`, as
 * `SnapshotDigestBuilder.grantHash` writes it, all in this machine's byte order: the file never
 * leaves the process), then `bytes`
 * bytes: the grants' snapshot lines, UTF-8, in the same order. A line holds no raw newline byte
 * (JSON escapes it, and no byte of a multi-byte UTF-8 character is one), so `\n` splits them.
 */
const SPOOL_HEADER_BYTES = 8;
export const SPOOL_DIGEST_AT = 2 * WORDS;
export const SPOOL_HASH_WORDS = SPOOL_DIGEST_AT + ID_HASH_WORDS;
export const NEWLINE = 0x0a;

export interface SpoolFrame {
  grants: number;
  hashes: Uint32Array;
  lines: Buffer;
}

export function spoolFrame(grants: readonly GrantRecord[], hashes: Uint32Array): Buffer {
  const hashBytes = grants.length * SPOOL_HASH_WORDS * 4;
  const frame = grantLinesBytes(grants, SPOOL_HEADER_BYTES + hashBytes);
  frame.writeUInt32LE(grants.length, 0);
  frame.writeUInt32LE(frame.length - SPOOL_HEADER_BYTES - hashBytes, 4);
  frame.set(new Uint8Array(hashes.buffer, hashes.byteOffset, hashBytes), SPOOL_HEADER_BYTES);
  return frame;
}

/**
 * The spool's frames in order, each read into one buffer (grown to the largest frame), so a frame
 * holds until the next is asked for: reading 50 MB of spool then allocates one buffer, not one a
 * frame (buffers that V8 frees only when it collects, which a phase that allocates little on its
 * heap makes rare: they raised the peak RSS by tens of MB).
 */
export async function* readSpoolFrames(path: string): AsyncGenerator<SpoolFrame> {
  const file = await open(path, "r");
  try {
    const header = Buffer.alloc(SPOOL_HEADER_BYTES);
    let buffer = Buffer.allocUnsafeSlow(COPY_CHUNK_BYTES);
    let position = 0;
    for (;;) {
      const got = await readFully(file, header, position);
      if (got === 0) return;
      const grants = header.readUInt32LE(0);
      const hashBytes = grants * SPOOL_HASH_WORDS * 4;
      const size = hashBytes + header.readUInt32LE(4);
      if (size > buffer.length) buffer = Buffer.allocUnsafeSlow(size);
      const body = buffer.subarray(0, size);
      position += got;
      if (got < SPOOL_HEADER_BYTES || (await readFully(file, body, position)) < body.length) {
        throw new Error(
          `the grant spool ${path} ends inside a page: it was changed while the sync ran`,
        );
      }
      position += body.length;
      yield {
        grants,
        hashes: new Uint32Array(body.buffer, body.byteOffset, grants * SPOOL_HASH_WORDS),
        lines: body.subarray(hashBytes),
      };
    }
  } finally {
    await file.close();
  }
}

/** Reads into all of `buffer` from `position`; fewer bytes only at the end of the file. */
async function readFully(file: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await file.read(
      buffer,
      filled,
      buffer.length - filled,
      position + filled,
    );
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}
