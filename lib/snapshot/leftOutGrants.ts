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
 * Grants held in one set at once while repeats are looked for, whatever the tenant's size: up to
 * this many, a set of their own (11 to 16 MB at most, `HashedIdSet`); beyond it, the written
 * resources' set, emptied.
 */
const PASS_GRANTS = 500_000;

/**
 * Which grants of the spool, by their place in it (0 for its first), the snapshot leaves out: those
 * that repeat the id of a grant before them, and those naming an entitlement or principal never
 * written (dangling): one bit a grant spooled. A grant both dangling and repeated counts as repeated.
 */
export class LeftOutGrants {
  readonly #bits: Uint8Array;
  #repeated = 0;
  #dangling = 0;

  constructor(grants: number) {
    this.#bits = new Uint8Array(Math.ceil(grants / 8));
  }

  /** How many grants, none of them a repeat, name something never written. */
  get dangling(): number {
    return this.#dangling;
  }

  /** How many grants are left out. */
  get count(): number {
    return this.#repeated + this.#dangling;
  }

  has(index: number): boolean {
    return ((this.#bits[index >>> 3] as number) & (1 << (index & 7))) !== 0;
  }

  /** Grant `index` is dangling; marked before it is judged a repeat or not. */
  addDangling(index: number): void {
    this.#set(index);
    this.#dangling++;
  }

  /** Grant `index` repeats an earlier grant's id (if it was marked dangling, it no longer counts so). */
  addRepeated(index: number): void {
    if (this.has(index)) this.#dangling--;
    else this.#set(index);
    this.#repeated++;
  }

  #set(index: number): void {
    this.#bits[index >>> 3] = (this.#bits[index >>> 3] as number) | (1 << (index & 7));
  }
}

export interface GrantSearch {
  spoolPath: string;
  /** The grants the spool holds. */
  grants: number;
  /** The spool, as write errors name it: the ids file is written beside it. */
  spoolFile: SyncFile;
  passGrants?: number | undefined;
  /** The entitlements written: a grant naming one not in it is dangling. */
  entitlements: HashedIdSet;
  /**
   * The resources written: a grant whose principal is not in it is dangling. Beyond `passGrants`
   * grants, its slots are then emptied and hold the ids looked for repeats (no second set of 11 to
   * 16 MB beside it): the caller is done with it.
   */
  resources: HashedIdSet;
}

/**
 * Finds the grants of the spool to leave out (`LeftOutGrants`): dangling ones, by the hashes of
 * their entitlement and principal, and those that repeat an earlier grant's id (a redelivered
 * job, a page served twice), by the 128-bit hashes of their ids (`SPOOL_ID_AT`), in memory that
 * does not grow with the tenant: at most `passGrants` hashes in a set at once. Up to that many
 * grants, one read of the spool; beyond it, one read of the spool judges dangling grants and
 * copies the ids to a temporary file beside it (16 bytes a grant, removed before this returns),
 * which is read once a pass, each pass taking the hashes of one slice of the hash space (by their
 * third word), so each id is judged in exactly one pass and, in it, in the spool's order: the
 * first grant of an id is kept, the later ones repeat it.
 */
export async function findLeftOutGrants(search: GrantSearch): Promise<LeftOutGrants> {
  const passGrants = search.passGrants ?? PASS_GRANTS;
  const leftOut = new LeftOutGrants(search.grants);
  const { entitlements, resources } = search;
  const dangles = (hashes: Uint32Array, at: number) =>
    !entitlements.hasHash(hashes, at) || !resources.hasHash(hashes, at + WORDS);
  if (search.grants <= passGrants) {
    const seen = new HashedIdSet(Math.ceil((search.grants * 4) / 3));
    let index = 0;
    try {
      for await (const { hashes } of readSpoolFrames(search.spoolPath)) {
        for (let at = 0; at < hashes.length; at += SPOOL_HASH_WORDS, index++) {
          if (dangles(hashes, at)) leftOut.addDangling(index);
          if (!seen.addHash(hashes, at + SPOOL_ID_AT)) leftOut.addRepeated(index);
        }
      }
    } finally {
      seen.release();
    }
    return leftOut;
  }
  const idsPath = `${search.spoolPath}.ids`;
  try {
    await copyIds(
      search.spoolPath,
      { ...search.spoolFile, what: "the grant ids", path: idsPath },
      (hashes, at, index) => {
        if (dangles(hashes, at)) leftOut.addDangling(index);
      },
    );
    const seen = resources;
    const passes = Math.ceil(search.grants / passGrants);
    for (let pass = 0; pass < passes; pass++) {
      seen.clear();
      let index = 0;
      for await (const words of readWords(idsPath)) {
        for (let at = 0; at < words.length; at += WORDS, index++) {
          const slice = Math.floor(((words[at + 2] as number) * passes) / 0x1_0000_0000);
          if (slice === pass && !seen.addHash(words, at)) leftOut.addRepeated(index);
        }
      }
    }
  } finally {
    await rm(idsPath, { force: true });
    unregisterTempFile(idsPath);
  }
  return leftOut;
}

/**
 * Writes the id hash of each spooled grant, in the spool's order, to `file`, and hands each grant's
 * spool hashes (at `at` of `hashes`) and its place in the spool to `judge`.
 */
async function copyIds(
  spoolPath: string,
  file: SyncFile,
  judge: (hashes: Uint32Array, at: number, index: number) => void,
): Promise<void> {
  const stream = createTempFile(file.path);
  let failed: unknown;
  stream.on("error", (error: Error) => {
    failed ??= writeFailure(error, file);
  });
  try {
    await once(stream, "open");
    const chunks = new ChunkCopier(stream, CHUNK_BYTES, true);
    let ids = new Uint32Array(1024 * WORDS);
    let index = 0;
    for await (const { grants, hashes } of readSpoolFrames(spoolPath)) {
      if (ids.length < grants * WORDS) ids = new Uint32Array(grants * WORDS);
      for (let grant = 0; grant < grants; grant++, index++) {
        judge(hashes, grant * SPOOL_HASH_WORDS, index);
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
