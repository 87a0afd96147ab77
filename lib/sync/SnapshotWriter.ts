import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Writable } from "node:stream";
import { createGzip } from "node:zlib";
import {
  type GrantRecord,
  type RecordKind,
  SNAPSHOT_VERSION,
  type SnapshotRecord,
  type SyncEndRecord,
  type SyncStartRecord,
} from "./records";

export interface SnapshotResult {
  path: string;
  counts: SyncEndRecord["counts"];
  skipped: SyncEndRecord["skipped"];
}

/**
 * Streams a snapshot (CONTRACTS.md section 3) to a temporary file beside `path` and renames it
 * onto `path` only when complete, so a failed sync never replaces a good snapshot.
 *
 * Memory holds only the sets of written ids. Grants are spooled to a second temporary file and
 * copied after every other record, so each grant is checked against the complete set of
 * entitlements and principals (referential integrity); a grant naming anything missing is left
 * out and counted as `dangling_grant`. A record written twice (a redelivered job, a page the
 * upstream served twice) is written once.
 */
export class SnapshotWriter {
  readonly path: string;
  readonly #tempPath: string;
  readonly #grantSpoolPath: string;
  readonly #file: WriteStream;
  readonly #out: Writable;
  readonly #grantSpool: WriteStream;
  readonly #syncId: string;
  readonly #resources = new Set<string>();
  readonly #entitlements = new Set<string>();
  readonly #resourceTypes = new Set<string>();
  readonly #grants = new Set<string>();
  readonly #counts: Record<RecordKind, number> = {
    resource_type: 0,
    resource: 0,
    entitlement: 0,
    grant: 0,
  };
  #closed = false;
  /** The first error of any of the streams (a full disk, say); the snapshot then fails. */
  #streamError: Error | undefined;
  /** Writes are serialised on this chain, so callers may write from concurrent jobs. */
  #chain: Promise<void> = Promise.resolve();

  private constructor(path: string, syncId: string) {
    this.path = path;
    this.#syncId = syncId;
    const prefix = join(dirname(path), `.${basename(path)}.${syncId}`);
    this.#tempPath = `${prefix}.partial`;
    this.#grantSpoolPath = `${prefix}.grants`;
    this.#file = createWriteStream(this.#tempPath, { flags: "wx" });
    this.#grantSpool = createWriteStream(this.#grantSpoolPath, { flags: "wx" });
    if (path.endsWith(".gz")) {
      const gzip = createGzip();
      gzip.pipe(this.#file);
      this.#out = gzip;
    } else {
      this.#out = this.#file;
    }
    for (const stream of new Set([this.#out, this.#file, this.#grantSpool])) {
      stream.on("error", (error: Error) => {
        this.#streamError ??= error;
      });
    }
  }

  static async open(options: {
    path: string;
    syncId: string;
    connector: string;
    startedAt?: Date;
  }): Promise<SnapshotWriter> {
    const writer = new SnapshotWriter(options.path, options.syncId);
    await Promise.all([once(writer.#file, "open"), once(writer.#grantSpool, "open")]);
    const start: SyncStartRecord = {
      kind: "sync_start",
      syncId: options.syncId,
      connector: options.connector,
      startedAt: (options.startedAt ?? new Date()).toISOString(),
      version: SNAPSHOT_VERSION,
    };
    await writeLine(writer.#out, start);
    return writer;
  }

  write(records: readonly SnapshotRecord[]): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      if (this.#closed) throw new Error("snapshot writer is closed");
      for (const record of records) await this.#writeOne(record);
    });
    return this.#chain;
  }

  /** Checks integrity, writes the grants and `sync_end`, and renames the file onto `path`. */
  async complete(): Promise<SnapshotResult> {
    await this.#chain;
    this.#closed = true;
    this.#throwIfFailed();
    await endStream(this.#grantSpool);
    let dangling = 0;
    const lines = createInterface({ input: createReadStream(this.#grantSpoolPath, "utf8") });
    for await (const line of lines) {
      const record = JSON.parse(line) as GrantRecord;
      if (
        this.#entitlements.has(record.entitlement) &&
        this.#resources.has(resourceKey(record.principal))
      ) {
        this.#counts.grant++;
        await writeRaw(this.#out, `${line}\n`);
      } else {
        dangling++;
      }
    }
    const end: SyncEndRecord = {
      kind: "sync_end",
      syncId: this.#syncId,
      status: "complete",
      finishedAt: new Date().toISOString(),
      counts: { ...this.#counts },
      skipped: { dangling_grant: dangling },
    };
    await writeLine(this.#out, end);
    await endStream(this.#out);
    if (!this.#file.closed) await once(this.#file, "close");
    this.#throwIfFailed();
    await rm(this.#grantSpoolPath, { force: true });
    await rename(this.#tempPath, this.path);
    return { path: this.path, counts: end.counts, skipped: end.skipped };
  }

  /** Drops the temporary files; the snapshot at `path`, if any, is left as it was. */
  async abort(): Promise<void> {
    this.#closed = true;
    await this.#chain.catch(() => {});
    for (const stream of [this.#out, this.#file, this.#grantSpool]) stream.destroy();
    await rm(this.#tempPath, { force: true });
    await rm(this.#grantSpoolPath, { force: true });
  }

  #throwIfFailed(): void {
    if (this.#streamError) {
      throw new Error(`cannot write the snapshot ${this.path}: ${this.#streamError.message}`, {
        cause: this.#streamError,
      });
    }
  }

  async #writeOne(record: SnapshotRecord): Promise<void> {
    switch (record.kind) {
      case "resource_type":
        if (!addNew(this.#resourceTypes, record.id)) return;
        break;
      case "resource":
        if (!addNew(this.#resources, resourceKey(record))) return;
        break;
      case "entitlement":
        if (!addNew(this.#entitlements, record.id)) return;
        break;
      case "grant":
        if (addNew(this.#grants, record.id)) await writeLine(this.#grantSpool, record);
        return;
    }
    this.#counts[record.kind]++;
    await writeLine(this.#out, record);
  }
}

function resourceKey(ref: { type: string; id: string }): string {
  return `${ref.type}\u0000${ref.id}`;
}

function addNew(set: Set<string>, key: string): boolean {
  if (set.has(key)) return false;
  set.add(key);
  return true;
}

function writeLine(stream: Writable, record: object): Promise<void> {
  return writeRaw(stream, `${JSON.stringify(record)}\n`);
}

async function writeRaw(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, "drain");
}

async function endStream(stream: Writable): Promise<void> {
  const finished = once(stream, "finish");
  stream.end();
  await finished;
}
