import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { HashedIdSet, hashHex } from "./HashedIdSet";
import { endStream, jsonLine, readLines, writeJsonLine, writeText } from "./jsonLines";
import {
  type GrantRecord,
  type RecordKind,
  SNAPSHOT_VERSION,
  type SnapshotRecord,
  type SyncEndRecord,
  type SyncStartRecord,
} from "./records";
import { registerTempFile, unregisterTempFile } from "./tempFiles";

export interface AssembledSnapshot {
  counts: SyncEndRecord["counts"];
  skipped: SyncEndRecord["skipped"];
}

export interface AssemblerOptions {
  /** Where the snapshot's lines go (a file sink, an upload, a gzip stream); ended by `complete`. */
  out: Writable;
  /** A directory for the grant spool, a temporary file removed by `complete` and `abort`. */
  spoolDir: string;
  syncId: string;
  connector: string;
  startedAt?: Date;
}

/**
 * Assembles one snapshot (CONTRACTS.md section 3) from records in any order, to any stream:
 * `sync_start` first, each record once (a redelivered job or a page served twice is written
 * once), and `sync_end` with the counts last.
 *
 * Memory holds only the sets of written ids, as 128-bit hashes (`HashedIdSet`: about 25 bytes an
 * id), and the page in hand. Grants are spooled to a temporary file and copied after every other
 * record, so each grant is checked against the complete set of entitlements and principals
 * (referential integrity); a grant naming anything missing is left out and counted as
 * `dangling_grant`.
 */
export class SnapshotAssembler {
  readonly #out: Writable;
  readonly #spoolPath: string;
  readonly #spool: WriteStream;
  readonly #syncId: string;
  readonly #resources = new HashedIdSet();
  readonly #entitlements = new HashedIdSet();
  readonly #resourceTypes = new HashedIdSet(8);
  readonly #grants = new HashedIdSet();
  readonly #counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  #closed = false;
  /** The first error of either stream (a full disk, say); the snapshot then fails. */
  #streamError: Error | undefined;
  /** Writes are serialised on this chain, so callers may write from concurrent jobs. */
  #chain: Promise<void> = Promise.resolve();

  private constructor(options: AssemblerOptions) {
    this.#out = options.out;
    this.#syncId = options.syncId;
    this.#spoolPath = join(options.spoolDir, `.grants.${options.syncId}.${process.pid}.jsonl`);
    this.#spool = createWriteStream(this.#spoolPath, { flags: "wx" });
    for (const stream of [this.#out, this.#spool]) {
      stream.on("error", (error: Error) => {
        this.#streamError ??= error;
      });
    }
  }

  static async open(options: AssemblerOptions): Promise<SnapshotAssembler> {
    const assembler = new SnapshotAssembler(options);
    await once(assembler.#spool, "open");
    registerTempFile(assembler.#spoolPath);
    const start: SyncStartRecord = {
      kind: "sync_start",
      syncId: options.syncId,
      connector: options.connector,
      startedAt: (options.startedAt ?? new Date()).toISOString(),
      version: SNAPSHOT_VERSION,
    };
    await writeJsonLine(assembler.#out, start);
    return assembler;
  }

  write(records: readonly SnapshotRecord[]): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#closed) throw new Error("the snapshot is closed");
      await this.#writePage(records);
    });
    return this.#chain;
  }

  /** Checks integrity, writes the grants and `sync_end`, and ends the output stream. */
  async complete(): Promise<AssembledSnapshot> {
    await this.#chain;
    this.#closed = true;
    this.#throwIfFailed();
    await endStream(this.#spool);
    let dangling = 0;
    let chunk = "";
    for await (const line of readLines(createReadStream(this.#spoolPath, "utf8"))) {
      if (
        this.#entitlements.hasHex(line, SPOOL_ENTITLEMENT_AT) &&
        this.#resources.hasHex(line, SPOOL_PRINCIPAL_AT)
      ) {
        this.#counts.grant++;
        chunk += `${line.slice(SPOOL_RECORD_AT)}\n`;
        if (chunk.length >= COPY_CHUNK_CHARS) {
          await writeText(this.#out, chunk);
          chunk = "";
        }
      } else {
        dangling++;
      }
    }
    if (chunk.length > 0) await writeText(this.#out, chunk);
    const end: SyncEndRecord = {
      kind: "sync_end",
      syncId: this.#syncId,
      status: "complete",
      finishedAt: new Date().toISOString(),
      counts: { ...this.#counts },
      skipped: { dangling_grant: dangling },
    };
    await writeText(this.#out, jsonLine(end));
    await endStream(this.#out);
    this.#throwIfFailed();
    await rm(this.#spoolPath, { force: true });
    unregisterTempFile(this.#spoolPath);
    return { counts: end.counts, skipped: end.skipped };
  }

  /** Stops and removes the spool; the output stream is destroyed, not ended. */
  async abort(): Promise<void> {
    this.#closed = true;
    await this.#chain.catch(() => {});
    this.#spool.destroy();
    this.#out.destroy();
    await rm(this.#spoolPath, { force: true });
    unregisterTempFile(this.#spoolPath);
  }

  #throwIfFailed(): void {
    if (this.#streamError) {
      throw new Error(`cannot write the snapshot: ${this.#streamError.message}`, {
        cause: this.#streamError,
      });
    }
  }

  /** Writes a page's new records with one write to each stream (a write a record cost a third of the CPU). */
  async #writePage(records: readonly SnapshotRecord[]): Promise<void> {
    let out = "";
    let spool = "";
    for (const record of records) {
      switch (record.kind) {
        case "resource_type":
          if (!this.#resourceTypes.add(record.id)) continue;
          break;
        case "resource":
          if (!this.#resources.add(resourceKey(record))) continue;
          break;
        case "entitlement":
          if (!this.#entitlements.add(record.id)) continue;
          break;
        case "grant":
          if (this.#grants.add(record.id)) spool += spoolLine(record);
          continue;
      }
      this.#counts[record.kind]++;
      out += jsonLine(record);
    }
    if (spool.length > 0) await writeText(this.#spool, spool);
    if (out.length > 0) await writeText(this.#out, out);
  }
}

/**
 * A spool line: the hashes of the grant's entitlement and principal (`hashHex`, 32 hex digits
 * each), then the grant's snapshot line; `complete` checks the hashes without parsing the record.
 */
const SPOOL_ENTITLEMENT_AT = 0;
const SPOOL_PRINCIPAL_AT = 32;
const SPOOL_RECORD_AT = 64;

function spoolLine(record: GrantRecord): string {
  return `${hashHex(record.entitlement)}${hashHex(resourceKey(record.principal))}${jsonLine(record)}`;
}

/** Grants are copied from the spool in writes of about this many characters. */
const COPY_CHUNK_CHARS = 64 * 1024;

function resourceKey(ref: { type: string; id: string }): string {
  return `${ref.type}\u0000${ref.id}`;
}
