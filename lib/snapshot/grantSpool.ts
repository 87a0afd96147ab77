/**
 * The grant spool of `SnapshotAssembler`: grants wait in it, a frame a page with their hashes,
 * until every entitlement and principal has been written; then its frames are read back in order
 * and the kept grants copied to the snapshot in chunks (`ChunkCopier`, which also writes the spool).
 */
import { createReadStream, type WriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { createDeflateRaw, createInflateRaw, type DeflateRaw } from "node:zlib";
import { ID_HASH_WORDS } from "../guard/SnapshotDigest";
import { grantLinesBytes } from "./grantLines";
import { WORDS } from "./HashedIdSet";
import type { GrantRecord } from "./records";

/**
 * The grant spool: a frame a page, `[grants, bytes]` (two 32-bit little-endian words), then each
 * grant's hashes (`SPOOL_HASH_WORDS` words: its entitlement's, then its principal's, as `hashId`
 * writes them, then the guard's hash of the grant at `SPOOL_DIGEST_AT`, as
 * `SnapshotDigestBuilder.grantHash` writes it, then the hash of the grant's id at `SPOOL_ID_AT`, as
 * `hashId` writes it, all in this machine's byte order: the file never leaves the process), then
 * `bytes` bytes: the grants' snapshot lines, UTF-8, in the same order. A line holds no raw newline
 * byte (JSON escapes it, and no byte of a multi-byte UTF-8 character is one), so `\n` splits them.
 * The file holds the frames through raw deflate (`createSpool`): a grant's line, about 125 bytes,
 * takes about 10 there, so finalize's /tmp at 300,000 users is 95 MB, not about 260.
 */
const SPOOL_HEADER_BYTES = 8;
export const SPOOL_DIGEST_AT = 2 * WORDS;
export const SPOOL_ID_AT = SPOOL_DIGEST_AT + ID_HASH_WORDS;
export const SPOOL_HASH_WORDS = SPOOL_ID_AT + WORDS;

export interface SpoolFrame {
  grants: number;
  hashes: Uint32Array;
  lines: Buffer;
}

/** A page's frame; `texts[i]`, when there, is grant `i`'s line as it is (see `grantLinesBytes`). */
export function spoolFrame(
  grants: readonly GrantRecord[],
  hashes: Uint32Array,
  texts?: readonly (string | undefined)[],
): Buffer {
  const hashBytes = grants.length * SPOOL_HASH_WORDS * 4;
  const frame = grantLinesBytes(grants, SPOOL_HEADER_BYTES + hashBytes, texts);
  frame.writeUInt32LE(grants.length, 0);
  frame.writeUInt32LE(frame.length - SPOOL_HEADER_BYTES - hashBytes, 4);
  frame.set(new Uint8Array(hashes.buffer, hashes.byteOffset, hashBytes), SPOOL_HEADER_BYTES);
  return frame;
}

/**
 * A spool at `file` (a temporary file, `createTempFile`): `stream` takes the frames, compressed on
 * the thread pool at zlib's fastest level (its CPU is not the writer's); `written` settles once
 * the stream has ended and every byte is in the file, or fails as either stream does.
 */
export function createSpool(file: WriteStream): { stream: DeflateRaw; written: Promise<void> } {
  const stream = createDeflateRaw({ level: 1 });
  return { stream, written: pipeline(stream, file) };
}

/**
 * The spool's frames in order, read in blocks of `SPOOL_READ_BYTES` (one read for many frames; a
 * read for each frame's header and another for its body were 4,000 round trips through the thread
 * pool at 100,000 users) into one buffer, grown only for a frame larger than it. A frame's bytes
 * hold until the next frame is asked for: one buffer for the whole spool, not one a frame (buffers
 * that V8 frees only when it collects, which a phase that allocates little on its heap makes rare:
 * they raised the peak RSS by tens of MB).
 */
export async function* readSpoolFrames(path: string): AsyncGenerator<SpoolFrame> {
  const inflate = createInflateRaw({ chunkSize: INFLATED_CHUNK_BYTES });
  const read = pipeline(createReadStream(path), inflate);
  read.catch(() => {}); // A read error reaches the loop through `inflate` too.
  try {
    const blocks = new BlockReader(inflate[Symbol.asyncIterator]());
    for (;;) {
      const header = await blocks.take(SPOOL_HEADER_BYTES);
      if (header.length === 0) return;
      if (header.length < SPOOL_HEADER_BYTES) throw cutShort(path);
      const grants = header.readUInt32LE(0);
      const hashBytes = grants * SPOOL_HASH_WORDS * 4;
      const size = hashBytes + header.readUInt32LE(4);
      const body = await blocks.take(size);
      if (body.length < size) throw cutShort(path);
      yield { grants, hashes: blocks.words(body, hashBytes), lines: body.subarray(hashBytes) };
    }
  } finally {
    inflate.destroy();
  }
}

/** The inflated bytes handed over at a time (zlib's default is 16 KiB). */
const INFLATED_CHUNK_BYTES = 128 * 1024;

function cutShort(path: string): Error {
  return new Error(`the grant spool ${path} ends inside a page: it was changed while the sync ran`);
}

const SPOOL_READ_BYTES = 512 * 1024;

/** A stream read in blocks, handed out in pieces that hold until the next piece is taken. */
class BlockReader {
  readonly #chunks: AsyncIterator<Buffer>;
  /** What is left of the last chunk taken from the stream, when the buffer had no room for it. */
  #pending: Buffer | undefined;
  #buffer = Buffer.allocUnsafeSlow(SPOOL_READ_BYTES);
  /** The bytes read and not yet taken: `#buffer[#start, #end)`. */
  #start = 0;
  #end = 0;
  #aligned = new Uint32Array(0);

  constructor(chunks: AsyncIterator<Buffer>) {
    this.#chunks = chunks;
  }

  /** The next `size` bytes; fewer only at the end of the file. */
  async take(size: number): Promise<Buffer> {
    if (this.#end - this.#start < size) await this.#fill(size);
    const piece = this.#buffer.subarray(this.#start, Math.min(this.#start + size, this.#end));
    this.#start += piece.length;
    return piece;
  }

  /**
   * The first `bytes` of `piece` as 32-bit words: a view where the piece starts on a multiple of
   * 4 (frames follow each other unaligned in a block), else a copy that holds as the piece does.
   */
  words(piece: Buffer, bytes: number): Uint32Array {
    if (piece.byteOffset % 4 === 0)
      return new Uint32Array(piece.buffer, piece.byteOffset, bytes / 4);
    if (this.#aligned.byteLength < bytes) this.#aligned = new Uint32Array(bytes / 4);
    const words = this.#aligned.subarray(0, bytes / 4);
    new Uint8Array(words.buffer, 0, bytes).set(piece.subarray(0, bytes));
    return words;
  }

  /**
   * Moves what is left to the front (into a larger buffer if `size` needs it), then copies the
   * stream's chunks in until the buffer is full or the stream ends.
   */
  async #fill(size: number): Promise<void> {
    const left = this.#buffer.subarray(this.#start, this.#end);
    if (size > this.#buffer.length) {
      const larger = Buffer.allocUnsafeSlow(size);
      left.copy(larger);
      this.#buffer = larger;
    } else {
      left.copy(this.#buffer);
    }
    this.#start = 0;
    this.#end = left.length;
    while (this.#end < this.#buffer.length) {
      let chunk = this.#pending;
      if (!chunk) {
        const next = await this.#chunks.next();
        if (next.done) return;
        chunk = next.value;
      }
      const copied = chunk.copy(this.#buffer, this.#end);
      this.#end += copied;
      this.#pending = copied < chunk.length ? chunk.subarray(copied) : undefined;
    }
  }
}
