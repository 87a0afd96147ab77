/**
 * The grant spool of `SnapshotAssembler`: grants wait in it, a frame a page with their hashes,
 * until every entitlement and principal has been written; then its frames are read back in order
 * and the kept grants copied to the snapshot in chunks (`ChunkCopier`, which also writes the spool).
 */
import { createReadStream, type WriteStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Writable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { createDeflateRaw, createInflateRaw } from "node:zlib";
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
 * A spool whose name ends in `COMPRESSED_SPOOL` holds the frames through raw deflate
 * (`createSpool`): a grant's line, about 125 bytes, takes about 10 there, so finalize's /tmp at
 * 300,000 users is 95 MB, not about 260.
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

/** How the name of a compressed spool ends (`createSpool`, `readSpoolFrames`). */
export const COMPRESSED_SPOOL = ".deflate";

/**
 * A spool into `file` (a temporary file, `createTempFile`, at `path`): `stream` takes the frames,
 * compressed on the thread pool at zlib's fastest level when `path` ends in `COMPRESSED_SPOOL`
 * (its CPU is not the writer's), else written as they are; `written` settles once the stream has
 * ended and every byte is in the file, or fails as the file does.
 */
export function createSpool(
  file: WriteStream,
  path: string,
): { stream: Writable; written: Promise<void> } {
  if (!path.endsWith(COMPRESSED_SPOOL)) return { stream: file, written: finished(file) };
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
  const source = await openSpool(path);
  try {
    const blocks = new BlockReader(source.read);
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
    await source.close();
  }
}

/** Reads up to `length` bytes into `buffer` at `offset`; 0 at the end. */
type ReadInto = (buffer: Buffer, offset: number, length: number) => Promise<number>;

/**
 * A spool's bytes: the file read as it is, or, when its name ends in `COMPRESSED_SPOOL`, inflated
 * on the thread pool and copied out of the inflated chunks.
 */
async function openSpool(path: string): Promise<{ read: ReadInto; close: () => Promise<void> }> {
  if (!path.endsWith(COMPRESSED_SPOOL)) {
    const file = await open(path, "r");
    let position = 0;
    const read: ReadInto = async (buffer, offset, length) => {
      const { bytesRead } = await file.read(buffer, offset, length, position);
      position += bytesRead;
      return bytesRead;
    };
    return { read, close: () => file.close() };
  }
  const inflate = createInflateRaw({ chunkSize: INFLATED_CHUNK_BYTES });
  // A read error reaches the reads through the inflating stream too.
  pipeline(createReadStream(path), inflate).catch(() => {});
  const chunks = inflate[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let pending: Buffer | undefined;
  const read: ReadInto = async (buffer, offset, length) => {
    if (!pending) {
      const next = await chunks.next();
      if (next.done) return 0;
      pending = next.value;
    }
    const copied = pending.copy(buffer, offset, 0, Math.min(length, pending.length));
    pending = copied < pending.length ? pending.subarray(copied) : undefined;
    return copied;
  };
  return { read, close: async () => void inflate.destroy() };
}

/** The inflated bytes handed over at a time (zlib's default is 16 KiB). */
const INFLATED_CHUNK_BYTES = 128 * 1024;

function cutShort(path: string): Error {
  return new Error(`the grant spool ${path} ends inside a page: it was changed while the sync ran`);
}

const SPOOL_READ_BYTES = 512 * 1024;

/** A spool read in blocks, handed out in pieces that hold until the next piece is taken. */
class BlockReader {
  readonly #read: ReadInto;
  #buffer = Buffer.allocUnsafeSlow(SPOOL_READ_BYTES);
  /** The bytes read and not yet taken: `#buffer[#start, #end)`. */
  #start = 0;
  #end = 0;
  #aligned = new Uint32Array(0);

  constructor(read: ReadInto) {
    this.#read = read;
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

  /** Moves what is left to the front (into a larger buffer if `size` needs it), then reads on. */
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
    while (this.#end < size) {
      const read = await this.#read(this.#buffer, this.#end, this.#buffer.length - this.#end);
      if (read === 0) return;
      this.#end += read;
    }
  }
}
