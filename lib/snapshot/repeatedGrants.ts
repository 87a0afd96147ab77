import { once } from "node:events";
import { open, rm } from "node:fs/promises";
import { type SyncFile, writeFailure } from "../sync/errors";
import { CHUNK_BYTES, ChunkCopier } from "./ChunkCopier";
import { readSpoolFrames, SPOOL_HASH_WORDS, SPOOL_ID_AT } from "./grantSpool";
import { HashedIdSet, WORDS } from "./HashedIdSet";
import { endStream } from "./jsonLines";
import { readFull } from "./readFull";
import { createTempFile, unregisterTempFile } from "./tempFiles";

/**
 * Grants held in one set at once while repeats are looked for: a set of this many takes 11 to
 * 16 MB (`HashedIdSet`), whatever the tenant's size.
 */
const PASS_GRANTS = 500_000;

/**
 * Which grants of the spool, by their place in it (0 for its first), repeat the id of a grant
 * before them: one bit a grant spooled.
 */
export class RepeatedGrants {
  readonly #bits: Uint8Array;
  #count = 0;

  constructor(grants: number) {
    this.#bits = new Uint8Array(Math.ceil(grants / 8));
  }

  /** How many grants repeat an earlier one. */
  get count(): number {
    return this.#count;
  }

  has(index: number): boolean {
    return ((this.#bits[index >>> 3] as number) & (1 << (index & 7))) !== 0;
  }

  add(index: number): void {
    this.#bits[index >>> 3] = (this.#bits[index >>> 3] as number) | (1 << (index & 7));
    this.#count++;
  }
}

export interface RepeatSearch {
  spoolPath: string;
  /** The grants the spool holds. */
  grants: number;
  /** The spool, as write errors name it: the ids file is written beside it. */
  spoolFile: SyncFile;
  passGrants?: number | undefined;
}

/**
 * Finds the grants of the spool that repeat an earlier grant's id (a redelivered job, a page
 * served twice), by the 128-bit hashes of their ids (`SPOOL_ID_AT`), in memory that does not grow
 * with the tenant: at most `passGrants` hashes in a set at once. Up to that many grants, one read
 * of the spool; beyond it, the ids are copied once to a temporary file beside the spool (16 bytes
 * a grant, removed before this returns), which is read once a pass, each pass taking the hashes of
 * one slice of the hash space (by their third word), so each id is judged in exactly one pass and,
 * in it, in the spool's order: the first grant of an id is kept, the later ones repeat it.
 */
export async function findRepeatedGrants(search: RepeatSearch): Promise<RepeatedGrants> {
  const passGrants = search.passGrants ?? PASS_GRANTS;
  const repeated = new RepeatedGrants(search.grants);
  const seen = new HashedIdSet(Math.ceil((Math.min(search.grants, passGrants) * 4) / 3));
  if (search.grants <= passGrants) {
    let index = 0;
    for await (const { hashes } of readSpoolFrames(search.spoolPath)) {
      for (let at = SPOOL_ID_AT; at < hashes.length; at += SPOOL_HASH_WORDS, index++) {
        if (!seen.addHash(hashes, at)) repeated.add(index);
      }
    }
    return repeated;
  }
  const idsPath = `${search.spoolPath}.ids`;
  try {
    await copyIds(search.spoolPath, { ...search.spoolFile, what: "the grant ids", path: idsPath });
    const passes = Math.ceil(search.grants / passGrants);
    for (let pass = 0; pass < passes; pass++) {
      seen.clear();
      let index = 0;
      for await (const words of readWords(idsPath)) {
        for (let at = 0; at < words.length; at += WORDS, index++) {
          const slice = Math.floor(((words[at + 2] as number) * passes) / 0x1_0000_0000);
          if (slice === pass && !seen.addHash(words, at)) repeated.add(index);
        }
      }
    }
  } finally {
    await rm(idsPath, { force: true });
    unregisterTempFile(idsPath);
  }
  return repeated;
}

/** Writes the id hash of each spooled grant, in the spool's order, to `file`. */
async function copyIds(spoolPath: string, file: SyncFile): Promise<void> {
  const stream = createTempFile(file.path);
  let failed: unknown;
  stream.on("error", (error: Error) => {
    failed ??= writeFailure(error, file);
  });
  try {
    await once(stream, "open");
    const chunks = new ChunkCopier(stream, CHUNK_BYTES, true);
    let ids = new Uint32Array(1024 * WORDS);
    for await (const { grants, hashes } of readSpoolFrames(spoolPath)) {
      if (ids.length < grants * WORDS) ids = new Uint32Array(grants * WORDS);
      for (let grant = 0; grant < grants; grant++) {
        const from = grant * SPOOL_HASH_WORDS + SPOOL_ID_AT;
        for (let word = 0; word < WORDS; word++) {
          ids[grant * WORDS + word] = hashes[from + word] as number;
        }
      }
      await chunks.append(Buffer.from(ids.buffer, 0, grants * WORDS * 4));
    }
    await chunks.flush();
    await endStream(stream);
  } catch (error) {
    stream.destroy();
    throw failed ?? error;
  }
  if (failed !== undefined) throw failed;
}

/** Bytes read at once from the ids file: a multiple of a hash's 16. */
const READ_BYTES = 256 * 1024;

/** The ids file in blocks of whole hashes, each valid until the next is asked for. */
async function* readWords(path: string): AsyncGenerator<Uint32Array> {
  const file = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
    const words = new Uint32Array(buffer.buffer, buffer.byteOffset, READ_BYTES / 4);
    for (let position = 0; ; ) {
      const filled = await readFull(file, buffer, position);
      position += filled;
      if (filled === 0) return;
      yield words.subarray(0, Math.floor(filled / (WORDS * 4)) * WORDS);
      if (filled < READ_BYTES) return;
    }
  } finally {
    await file.close();
  }
}
