import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Writable } from "node:stream";
import type { SnapshotDigest } from "../guard/SnapshotDigest";
import { type SyncFile, writeFailure } from "../sync/errors";
import { CHUNK_BYTES, ChunkCopier } from "./ChunkCopier";
import {
  COMPRESSED_SPOOL,
  createSpool,
  readSpoolFrames,
  SPOOL_DIGEST_AT,
  SPOOL_HASH_WORDS,
  type SpoolFrame,
} from "./grantSpool";
import { endStream, jsonLine, NEWLINE, writeChunk, writeJsonLine } from "./jsonLines";
import { findLeftOutGrants, type GrantSearch, type LeftOutGrants } from "./leftOutGrants";
import { type PreparedPage, parseLines } from "./preparedPage";
import {
  SNAPSHOT_VERSION,
  type SnapshotRecord,
  type SyncEndRecord,
  type SyncStartRecord,
} from "./records";
import { createTempFile, unregisterTempFile } from "./tempFiles";
import { type PageBytes, WrittenRecords } from "./WrittenRecords";

export interface AssembledSnapshot {
  counts: SyncEndRecord["counts"];
  skipped: SyncEndRecord["skipped"];
}

export interface AssemblerOptions {
  /** Where the snapshot's lines go (a file sink, an upload, a gzip stream); ended by `complete`. */
  out: Writable;
  /** The file `out` writes to, if it is one: a write error then names it (`WriteFailedError`). */
  outFile?: SyncFile;
  /**
   * `out` is done with a chunk once its write's callback has run (a file, gzip into a file:
   * `SnapshotFile.stream`), so the buffers grants are copied in are reused. Any other stream (one
   * that hands chunks on, as a PassThrough does) gets a fresh buffer for each.
   */
  outReleasesChunks?: boolean;
  /** A directory for the grant spool, a temporary file removed by `complete` and `abort`. */
  spoolDir: string;
  /**
   * Compress the spool (`createSpool`): finalize's, whose /tmp bounds the largest tenant. The
   * command line and the service write theirs as it is, spending no CPU on it.
   */
  compressSpool?: boolean;
  /** Grants held in memory at once while repeated ones are looked for (`findRepeatedGrants`). */
  passGrants?: number;
  /** How to put the spool on another filesystem, for a write error's message. */
  spoolElsewhere?: string;
  syncId: string;
  connector: string;
  startedAt?: Date;
}

/**
 * Assembles one snapshot (docs/snapshot-format.md) from records in any order, to any stream:
 * `sync_start` first, each record once (a redelivered job or a page served twice is written
 * once), and `sync_end` with the counts last.
 *
 * Memory holds the sets of written resources and entitlements, as 128-bit hashes (`HashedIdSet`:
 * about 25 bytes an id), and the page in hand. Grants, usually most of the records, are spooled to
 * a temporary file and copied after every other record, so each grant is checked against the
 * complete set of entitlements and principals (referential integrity); a grant naming anything
 * missing is left out and counted as `dangling_grant`. A grant whose id an earlier grant had is
 * left out too, found from the spool in memory that does not grow with the tenant, not in a set
 * held while the sync runs. Both are judged from the spool before any grant is copied
 * (`findLeftOutGrants`), so the sets of written ids are done with (and their slots reused) before
 * the copy fills the digest. Each record is serialised once: the spool holds a page's grants as
 * the bytes of their snapshot lines, beside the hashes of what they name and of their ids, so
 * completing the snapshot checks and copies them without decoding or parsing them.
 *
 * It also builds the removal guard's digest of what it writes (`SnapshotDigestBuilder`, 8 bytes
 * a user and a grant written), handed out by `digest` once complete: the guard then need not read
 * the new snapshot back (at 100,000 users, about 1.5 s of CPU).
 */
export class SnapshotAssembler {
  readonly #out: Writable;
  readonly #spoolPath: string;
  readonly #spoolFile: WriteStream;
  /** Takes the spool's frames into `#spoolFile` (`createSpool`). */
  readonly #spool: Writable;
  /** Settles once the spool is ended and in its file. */
  readonly #spoolWritten: Promise<void>;
  /** The spool's frames and the snapshot's lines, in chunks: see `write`. */
  readonly #spoolChunks: ChunkCopier;
  /** Where `findLeftOutGrants` looks once the spool is complete. */
  readonly #grantSearch: Pick<GrantSearch, "spoolPath" | "spoolFile" | "passGrants">;
  readonly #outChunks: ChunkCopier;
  readonly #syncId: string;
  readonly #connector: string;
  /** What was written: sets, counts, digest; each page's bytes made there. */
  readonly #written = new WrittenRecords();
  #finished: SnapshotDigest | undefined;
  #closed = false;
  /**
   * The first error of either stream, as `writeFailure` names its file (a full disk, say); the
   * snapshot then fails with it, whichever write noticed.
   */
  #streamError: unknown;
  /** Writes are serialised on this chain, so callers may write from concurrent jobs. */
  #chain: Promise<void> = Promise.resolve();

  private constructor(options: AssemblerOptions) {
    this.#out = options.out;
    this.#outChunks = new ChunkCopier(this.#out, CHUNK_BYTES, options.outReleasesChunks ?? false);
    this.#syncId = options.syncId;
    this.#connector = options.connector;
    const name = `.grants.${options.syncId}.${process.pid}.spool`;
    this.#spoolPath = join(
      options.spoolDir,
      name + (options.compressSpool ? COMPRESSED_SPOOL : ""),
    );
    this.#spoolFile = createTempFile(this.#spoolPath);
    const spool = createSpool(this.#spoolFile, this.#spoolPath);
    this.#spool = spool.stream;
    this.#spoolWritten = spool.written;
    this.#spoolChunks = new ChunkCopier(this.#spool, CHUNK_BYTES, true);
    const spoolFile: SyncFile = {
      what: "the grant spool",
      path: this.#spoolPath,
      elsewhere: options.spoolElsewhere ?? "run the sync where that directory has room",
    };
    this.#grantSearch = { spoolPath: this.#spoolPath, spoolFile, passGrants: options.passGrants };
    // The file's error comes first (a compressing stream's pipeline then fails with it).
    this.#spoolFile.on("error", (error: Error) => {
      this.#streamError ??= writeFailure(error, spoolFile);
    });
    this.#spoolWritten.catch((error: unknown) => {
      this.#streamError ??= writeFailure(error, spoolFile);
    });
    const { outFile } = options;
    this.#out.on("error", (error: Error) => {
      this.#streamError ??= outFile ? writeFailure(error, outFile) : error;
    });
  }

  static async open(options: AssemblerOptions): Promise<SnapshotAssembler> {
    const assembler = new SnapshotAssembler(options);
    try {
      await once(assembler.#spoolFile, "open");
    } catch (error) {
      throw assembler.#streamError ?? error;
    }
    const start: SyncStartRecord = {
      kind: "sync_start",
      syncId: options.syncId,
      connector: options.connector,
      startedAt: (options.startedAt ?? new Date()).toISOString(),
      version: SNAPSHOT_VERSION,
    };
    try {
      await writeJsonLine(assembler.#out, start);
    } catch (error) {
      await assembler.abort();
      throw assembler.#streamError ?? error;
    }
    return assembler;
  }

  /**
   * Writes a page's records. They are checked against what was written, turned into bytes and
   * copied into the chunks of the spool and the snapshot at once, in the order of the calls; only
   * the chunks they fill wait for the writes before them. A page's records and bytes then die
   * young: held across the writes of other pages, they outlived V8's young generation and were
   * collected by full collections (see `WrittenRecords.serialise` and `ChunkCopier`).
   */
  write(records: readonly SnapshotRecord[]): Promise<void> {
    return this.#enqueue(() => this.#written.serialise(records));
  }

  /**
   * Writes a page of snapshot lines (JSON Lines as `jsonLine` writes records: a run's shards), as
   * `write` writes the records they parse to, byte for byte. A grant's or a resource's line in the
   * exact form `JSON.stringify` writes (`grantLine`, `resourceLine`: nine in ten of a run's lines)
   * is taken as it is, neither parsed nor serialised again (JSON.parse and JSON.stringify were
   * most of finalize's CPU). Any other line is parsed; one that is no JSON fails the write.
   */
  writeLines(lines: readonly string[]): Promise<void> {
    return this.#enqueue(() => {
      const { records, texts } = parseLines(lines);
      return this.#written.serialise(records, texts);
    });
  }

  /**
   * Writes a page `preparePage` made ready (in a worker thread: finalize's shard workers), as
   * `writeLines` writes its lines, byte for byte: here its records are only looked up by the hashes
   * it carries (the first of each identity kept), counted, added to the digest and their bytes
   * copied; its grants' spool frame is copied as it is.
   */
  writePrepared(page: PreparedPage): Promise<void> {
    return this.#enqueue(() => this.#written.prepared(page));
  }

  /**
   * Makes a page's bytes and copies them into the chunks in hand now (see `write`), and queues the
   * writes of the chunks they filled after the pages before.
   */
  #enqueue(page: () => PageBytes): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the snapshot is closed"));
    let filled: FilledChunks | undefined;
    let failed: { error: unknown } | undefined;
    if (this.#streamError === undefined) {
      try {
        const bytes = page();
        filled = {
          spool: bytes.spool ? this.#spoolChunks.fill(bytes.spool) : [],
          out: bytes.out ? this.#outChunks.fill(bytes.out) : [],
        };
      } catch (error) {
        failed = { error };
      }
    }
    this.#chain = this.#chain.then(async () => {
      this.#throwIfFailed();
      if (failed) throw failed.error;
      try {
        if (filled) {
          await this.#spoolChunks.write(filled.spool);
          await this.#outChunks.write(filled.out);
        }
      } catch (error) {
        throw this.#streamError ?? error;
      }
    });
    return this.#chain;
  }

  /** Checks integrity, writes the grants and `sync_end`, and ends the output stream. */
  async complete(): Promise<AssembledSnapshot> {
    this.#closed = true;
    await this.#chain;
    try {
      return await this.#complete();
    } catch (error) {
      throw this.#streamError ?? error;
    }
  }

  async #complete(): Promise<AssembledSnapshot> {
    this.#throwIfFailed();
    await this.#spoolChunks.flush();
    this.#spool.end();
    await this.#spoolWritten;
    const leftOut = await findLeftOutGrants({
      ...this.#grantSearch,
      grants: this.#written.spooled,
      entitlements: this.#written.entitlements,
      resources: this.#written.resources,
    });
    // Every grant is judged: the sets' memory (their slots reused by the search) goes back now.
    this.#written.releaseSets();
    let first = 0;
    this.#written.digest.expectGrants(this.#written.spooled - leftOut.count);
    for await (const frame of readSpoolFrames(this.#spoolPath)) {
      this.#written.counts.grant += await this.#copyKeptGrants(frame, first, leftOut);
      first += frame.grants;
    }
    await this.#outChunks.flush();
    const end: SyncEndRecord = {
      kind: "sync_end",
      syncId: this.#syncId,
      status: "complete",
      finishedAt: new Date().toISOString(),
      counts: { ...this.#written.counts },
      skipped: { dangling_grant: leftOut.dangling },
    };
    await writeChunk(this.#out, jsonLine(end));
    await endStream(this.#out);
    this.#throwIfFailed();
    await rm(this.#spoolPath, { force: true });
    unregisterTempFile(this.#spoolPath);
    this.#finished = this.#written.digest.finish({
      syncId: this.#syncId,
      connector: this.#connector,
    });
    return { counts: end.counts, skipped: end.skipped };
  }

  /**
   * The removal guard's digest of the snapshot written, exactly what `digestSnapshotFile` reads
   * from it (lib/guard), once `complete` has succeeded.
   */
  get digest(): SnapshotDigest {
    if (!this.#finished) throw new Error("the snapshot is not complete: it has no digest yet");
    return this.#finished;
  }

  /** Stops and removes the spool; the output stream is destroyed, not ended. */
  async abort(): Promise<void> {
    this.#closed = true;
    await this.#chain.catch(() => {});
    this.#spool.destroy();
    this.#spoolFile.destroy();
    this.#out.destroy();
    this.#written.releaseSets();
    await rm(this.#spoolPath, { force: true });
    unregisterTempFile(this.#spoolPath);
  }

  #throwIfFailed(): void {
    if (this.#streamError !== undefined) throw this.#streamError;
  }

  /**
   * Copies a spooled page's grants, the first of which is the spool's grant `first`, that are not
   * left out (`leftOut`), adds them to the digest, and returns how many it copied.
   */
  async #copyKeptGrants(frame: SpoolFrame, first: number, leftOut: LeftOutGrants): Promise<number> {
    const { hashes, lines } = frame;
    let kept = 0;
    for (let at = 0, index = first; at < hashes.length; at += SPOOL_HASH_WORDS, index++) {
      if (leftOut.has(index)) continue;
      kept++;
      this.#written.digest.addGrantHash(hashes, at + SPOOL_DIGEST_AT);
    }
    if (kept === frame.grants) {
      await this.#outChunks.append(lines);
      return kept;
    }
    let start = 0;
    for (let index = first; index < first + frame.grants; index++) {
      const end = lines.indexOf(NEWLINE, start) + 1;
      if (!leftOut.has(index)) await this.#outChunks.append(lines.subarray(start, end));
      start = end;
    }
    return kept;
  }
}

/** The chunks a page's bytes filled, to write in order: the spool's, then the snapshot's. */
interface FilledChunks {
  spool: Buffer[];
  out: Buffer[];
}
