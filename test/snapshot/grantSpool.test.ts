/**
 * The grant spool read back as written, as it is and compressed (`createSpool`): frames copied into
 * chunks and read in blocks, so frames straddle blocks, start at offsets that are no multiple of
 * 4, and one is larger than a block; a spool cut short fails, whether cut inside a frame or inside
 * its compressed stream; and
 * `ChunkCopier`, which writes the spool and the snapshot, byte for byte.
 */
import { createWriteStream } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CHUNK_BYTES, ChunkCopier } from "../../lib/snapshot/ChunkCopier";
import {
  COMPRESSED_SPOOL,
  createSpool,
  readSpoolFrames,
  SPOOL_HASH_WORDS,
  spoolFrame,
} from "../../lib/snapshot/grantSpool";
import { endStream } from "../../lib/snapshot/jsonLines";
import { type GrantRecord, grant } from "../../lib/snapshot/records";
import { makeTempDir } from "../helpers/tempDir";

/** A page of `count` grants whose ids have lengths that vary with `seed`, and their hashes. */
function page(count: number, seed: number): { grants: GrantRecord[]; hashes: Uint32Array } {
  const grants: GrantRecord[] = [];
  const hashes = new Uint32Array(count * SPOOL_HASH_WORDS);
  for (let i = 0; i < count; i++) {
    grants.push(
      grant(`team:t${seed}:member`, {
        type: "user",
        id: `u${seed}-${i}${"x".repeat((seed + i) % 7)}`,
      }),
    );
    for (let w = 0; w < SPOOL_HASH_WORDS; w++) {
      hashes[i * SPOOL_HASH_WORDS + w] = (seed * 7919 + i * 31 + w) >>> 0;
    }
  }
  return { grants, hashes };
}

describe("the grant spool", () => {
  it.each([
    ["as it is", ""],
    ["compressed", COMPRESSED_SPOOL],
  ])(
    "reads back every frame as written (%s), across blocks, unaligned, and larger than a block",
    async (_, suffix) => {
      const path = join(await makeTempDir(), `grants.spool${suffix}`);
      const spool = createSpool(createWriteStream(path, { flags: "wx" }), path);
      const writer = new ChunkCopier(spool.stream, CHUNK_BYTES, true);
      // 1 to 400 grants a page, then one of 6,000 (about 0.7 MB, more than a 512 KiB block).
      const sizes = [...Array.from({ length: 60 }, (_, i) => 1 + ((i * 97) % 400)), 6_000, 3];
      const pages = sizes.map((count, seed) => page(count, seed));
      for (const { grants, hashes } of pages) await writer.append(spoolFrame(grants, hashes));
      await writer.flush();
      spool.stream.end();
      await spool.written;
      // Compressed, these frames take less than half their bytes.
      const bytes = pages.reduce((sum, p) => sum + spoolFrame(p.grants, p.hashes).length, 0);
      const written = (await readFile(path)).length;
      if (suffix === "") expect(written).toBe(bytes);
      else expect(written).toBeLessThan(bytes / 2);

      let read = 0;
      for await (const frame of readSpoolFrames(path)) {
        const expected = pages[read] as { grants: GrantRecord[]; hashes: Uint32Array };
        expect(frame.grants).toBe(expected.grants.length);
        expect([...frame.hashes]).toEqual([...expected.hashes]);
        const lines = frame.lines.toString("utf8").split("\n").slice(0, -1);
        expect(lines.map((line) => JSON.parse(line))).toEqual(expected.grants);
        read++;
      }
      expect(read).toBe(pages.length);
    },
  );

  it("fails a spool that ends inside a frame, in its header or in its body, or inside its compressed stream", async () => {
    const dir = await makeTempDir();
    const frames = [3, 700, 5].map((count, seed) => {
      const { grants, hashes } = page(count, seed);
      return spoolFrame(grants, hashes);
    });
    const whole = Buffer.concat(frames);
    const first = (frames[0] as Buffer).length;
    const writeSpool = async (path: string, bytes: Buffer) => {
      const spool = createSpool(createWriteStream(path, { flags: "wx" }), path);
      const writer = new ChunkCopier(spool.stream, CHUNK_BYTES, true);
      await writer.append(bytes);
      await writer.flush();
      spool.stream.end();
      await spool.written;
    };
    const readAll = async (path: string, read: number[]) => {
      for await (const frame of readSpoolFrames(path)) read.push(frame.grants);
    };
    // Cut 3 bytes into the second frame's header, then 1,000 bytes into its body.
    for (const cut of [first + 3, first + 1_000]) {
      const cutPath = join(dir, `cut-${cut}.spool${COMPRESSED_SPOOL}`);
      await writeSpool(cutPath, whole.subarray(0, cut));
      const read: number[] = [];
      await expect(readAll(cutPath, read)).rejects.toThrow(
        `the grant spool ${cutPath} ends inside a page`,
      );
      expect(read).toEqual([3]);
    }
    // The whole spool, its compressed file cut short.
    const path = join(dir, `whole.spool${COMPRESSED_SPOOL}`);
    await writeSpool(path, whole);
    const compressed = await readFile(path);
    const cutPath = join(dir, `cut-compressed.spool${COMPRESSED_SPOOL}`);
    await writeFile(cutPath, compressed.subarray(0, compressed.length - 20));
    await expect(readAll(cutPath, [])).rejects.toThrow("unexpected end of file");
  });
});

describe("ChunkCopier", () => {
  it("writes its pieces byte for byte in chunks of its size, filling a chunk again only once written", async () => {
    const path = join(await makeTempDir(), "chunks");
    const out = createWriteStream(path, { flags: "wx" });
    const sizes = Array.from({ length: 300 }, (_, i) => (i * 37) % 150);
    const pieces = sizes.map((size, i) => Buffer.alloc(size, i + 1));
    const expected = Buffer.concat(pieces);
    const copier = new ChunkCopier(out, 64, true);
    const buffers = new Set<ArrayBufferLike>();
    let writes = 0;
    let done = 0;
    const write = out.write.bind(out);
    out.write = ((chunk: Buffer, callback?: (error?: Error | null) => void) => {
      writes++;
      buffers.add(chunk.buffer);
      return write(chunk, (error) => {
        done++;
        callback?.(error);
      });
    }) as typeof out.write;

    // As the assembler does: each piece copied in when handed over, while the chunks before it are
    // being written (handed to the stream, not yet written), and now and then all written.
    for (const [i, piece] of pieces.entries()) {
      const chunks = copier.fill(piece);
      piece.fill(0); // the piece may change or die before its chunk is written
      await copier.write(chunks);
      if (i % 25 === 24) await vi.waitFor(() => expect(done).toBe(writes));
    }
    await copier.flush();
    await endStream(out);

    expect((await readFile(path)).equals(expected)).toBe(true);
    expect(writes).toBe(Math.ceil(expected.length / 64));
    // Written chunks were filled again: far fewer buffers than writes.
    expect(buffers.size).toBeLessThan(writes / 4);
  });
});
