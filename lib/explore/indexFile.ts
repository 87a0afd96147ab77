import { createHash, type Hash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import * as z from "zod";
import { registerTempFile, unregisterTempFile } from "../snapshot/tempFiles";

/**
 * The file an index is kept in: byte regions written one after another (a region of records, then
 * typed arrays, each at an 8-byte boundary), then a JSON trailer naming each region, then a fixed
 * footer (MAGIC, the trailer's offset and length, and a SHA-256 of every byte before the footer).
 * It is written under a temporary name and renamed when whole, so a reader sees a whole file or
 * none; a file cut short, damaged or of another format fails `readIndexFile`'s checks and is
 * rebuilt. The temporary file is registered (lib/snapshot/tempFiles) while it exists, so a signal
 * that ends a start while it builds removes it. Readable by its owner only (it holds names, logins
 * and emails).
 */
export class IndexFileWriter {
  #offset = 0;
  readonly #hash: Hash = createHash("sha256");
  readonly #regions: Record<string, Region> = {};
  #side: SideFile | undefined;

  private constructor(
    private readonly file: FileHandle,
    private readonly temp: string,
    private readonly path: string,
  ) {}

  static async create(path: string): Promise<IndexFileWriter> {
    const temp = tempPathOf(path);
    await rm(temp, { force: true });
    try {
      createRegistered(temp, "wx");
      return new IndexFileWriter(await open(temp, "r+"), temp, path);
    } catch (error) {
      unregisterTempFile(temp);
      throw error;
    }
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.#hash.update(bytes);
    await writeFull(this.file, bytes, this.#offset);
    this.#offset += bytes.length;
  }

  /** Names the bytes written from `from` to here as a region. */
  mark(name: string, from: number): void {
    this.#regions[name] = { offset: from, length: this.#offset - from };
  }

  /** Writes a typed array, or bytes in parts, as a region of its own, at an 8-byte boundary. */
  async array(name: string, values: ArrayBufferView | AsyncIterable<Uint8Array>): Promise<void> {
    const pad = (8 - (this.#offset % 8)) % 8;
    if (pad) await this.write(new Uint8Array(pad));
    const from = this.#offset;
    const parts = Symbol.asyncIterator in values ? values : [values];
    for await (const part of parts)
      await this.write(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    this.mark(name, from);
  }

  /**
   * A file beside the temporary one (registered alike, removed with it) for bytes written while
   * the region before them is still being written; `array(name, side.pieces())` copies them in.
   */
  async sideFile(): Promise<SideFile> {
    const path = tempPathsOf(this.path)[1] as string;
    createRegistered(path, "w");
    this.#side = new SideFile(await open(path, "r+"), path);
    return this.#side;
  }

  /**
   * Reads back `length` bytes at `offset` of a region already written (the file is open for
   * reading too), into `into` when they fit.
   */
  readBack(name: string, offset: number, length: number, into: Buffer): Buffer {
    const region = this.#regions[name] as Region;
    const bytes = length <= into.length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
    for (let done = 0; done < length; ) {
      const read = readSync(
        this.file.fd,
        bytes,
        done,
        length - done,
        region.offset + offset + done,
      );
      if (read === 0) throw new Error(`the index being written ends inside ${name}`);
      done += read;
    }
    return bytes;
  }

  /** Writes the trailer and footer, and puts the file in its place. */
  async finish(about: unknown): Promise<void> {
    const trailer = Buffer.from(JSON.stringify({ format: FORMAT, regions: this.#regions, about }));
    this.#hash.update(trailer);
    const footer = Buffer.alloc(FOOTER);
    footer.write(MAGIC, 0, "latin1");
    footer.writeDoubleLE(this.#offset, 8);
    footer.writeDoubleLE(trailer.length, 16);
    this.#hash.digest().copy(footer, 24);
    const at = this.#offset;
    await this.file.write(trailer, 0, trailer.length, at);
    await this.file.write(footer, 0, FOOTER, at + trailer.length);
    await this.file.close();
    await rename(this.temp, this.path);
    unregisterTempFile(this.temp);
    await this.#side?.remove();
  }

  /** Closes and removes the temporary file (a build that failed leaves nothing behind). */
  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
    await rm(this.temp, { force: true });
    unregisterTempFile(this.temp);
    await this.#side?.remove();
  }
}

/** Bytes appended to a file of their own, then read back in pieces (`IndexFileWriter.sideFile`). */
export class SideFile {
  #length = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly path: string,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    await writeFull(this.file, bytes, this.#length);
    this.#length += bytes.length;
  }

  /** Everything written, in pieces of 4 MiB (one buffer, reused: each piece valid until the next). */
  async *pieces(): AsyncGenerator<Uint8Array> {
    const piece = Buffer.allocUnsafe(1 << 22);
    for (let at = 0; at < this.#length; ) {
      const { bytesRead } = await this.file.read(
        piece,
        0,
        Math.min(piece.length, this.#length - at),
        at,
      );
      if (bytesRead === 0) throw new Error("the index's side file ends early");
      yield piece.subarray(0, bytesRead);
      at += bytesRead;
    }
  }

  async remove(): Promise<void> {
    await this.file.close().catch(() => undefined);
    await rm(this.path, { force: true });
    unregisterTempFile(this.path);
  }
}

/**
 * Creates a temporary file registered, synchronously: a signal's removal then finds it. Opened
 * asynchronously, a signal while the open was in flight removed nothing, and the open then made
 * the file (a side file left behind by SIGTERM in CI).
 */
function createRegistered(path: string, flags: "w" | "wx"): void {
  registerTempFile(path);
  closeSync(openSync(path, flags, 0o600));
}

/** Where the index for `path` is written until it is whole: this process's own name. */
export const tempPathOf = (path: string) => `${path}.${process.pid}.tmp`;

/** The files a build of the index for `path` may leave while it runs: the temporary one and its side file. */
export const tempPathsOf = (path: string) => [tempPathOf(path), `${tempPathOf(path)}.side`];

interface Region {
  offset: number;
  length: number;
}

const region = z.strictObject({
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
});
const trailerSchema = z.strictObject({
  format: z.literal(1),
  regions: z.record(z.string(), region),
  about: z.unknown(),
});

/** An index file opened for reading: its regions read by name, whole or in part, on demand. */
export interface IndexFile {
  about: unknown;
  /** A region's length in bytes, or undefined when the file has no such region. */
  size(region: string): number | undefined;
  /** A region read whole, into a buffer of its own (so any typed array can view it). */
  region(name: string): Buffer;
  /** Reads `length` bytes at `offset` within a region (into the start of `into` when given). */
  read(region: string, offset: number, length: number, into?: Buffer): Buffer;
  close(): void;
}

/**
 * Opens the index file at `path` and checks it whole: footer, trailer, every region inside the
 * file and, with `verify`, the SHA-256 of every byte before the footer (a pass over the file that
 * keeps nothing; a file this process just wrote needs none). Nothing is read into memory: the
 * caller reads the regions it needs. Undefined when there is no such file or it fails a check:
 * the caller rebuilds it.
 */
export function readIndexFile(
  path: string,
  { verify }: { verify: boolean },
): IndexFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const file = checked(fd, verify);
    if (file) return file;
  } catch {
    // unreadable or cut short: the same as damaged
  }
  closeSync(fd);
  return undefined;
}

function checked(fd: number, verify: boolean): IndexFile | undefined {
  const read = (bytes: Buffer, at: number) => {
    if (readSync(fd, bytes, 0, bytes.length, at) !== bytes.length) throw new Error("short read");
    return bytes;
  };
  const fileSize = fstatSync(fd).size;
  if (fileSize < FOOTER) return undefined;
  const footer = read(Buffer.alloc(FOOTER), fileSize - FOOTER);
  if (footer.toString("latin1", 0, 8) !== MAGIC) return undefined;
  const trailerAt = footer.readDoubleLE(8);
  const trailerLength = footer.readDoubleLE(16);
  if (trailerAt + trailerLength + FOOTER !== fileSize) return undefined;
  const trailerBytes = read(Buffer.alloc(trailerLength), trailerAt);
  const trailer = trailerSchema.safeParse(JSON.parse(trailerBytes.toString()));
  if (!trailer.success) return undefined;
  const { regions, about } = trailer.data;
  if (Object.values(regions).some((r) => r.offset + r.length > trailerAt)) return undefined;
  if (verify) {
    const hash = createHash("sha256");
    const chunk = Buffer.allocUnsafe(1 << 22);
    for (let at = 0; at < trailerAt; ) {
      const n = read(chunk.subarray(0, Math.min(chunk.length, trailerAt - at)), at).length;
      hash.update(chunk.subarray(0, n));
      at += n;
    }
    hash.update(trailerBytes);
    if (!hash.digest().equals(footer.subarray(24))) return undefined;
  }
  const regionNamed = (name: string) => {
    const r = regions[name];
    if (!r) throw new Error(`the index has no ${name}`);
    return r;
  };
  return {
    about,
    size: (name) => regions[name]?.length,
    region: (name) => {
      const r = regionNamed(name);
      return read(Buffer.allocUnsafeSlow(r.length), r.offset);
    },
    read: (name, offset, length, into) => {
      const r = regionNamed(name);
      if (offset < 0 || offset + length > r.length)
        throw new Error(`${name} ${offset}+${length} is outside the index`);
      const bytes = into && length <= into.length ? into.subarray(0, length) : undefined;
      return read(bytes ?? Buffer.allocUnsafe(length), r.offset + offset);
    },
    close: () => closeSync(fd),
  };
}

const MAGIC = "ACXIDX01";
const FORMAT = 1;
const FOOTER = 56;

/** Writes all of `bytes` at `position` (a write may take fewer bytes than it is given). */
async function writeFull(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
