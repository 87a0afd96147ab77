import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Zstd } from "@hpcc-js/wasm-zstd";
import type { Database, Statement } from "node-sqlite3-wasm";
import type { RepeatedRecord } from "../../snapshot/DuplicateCheck";
import { SnapshotInputError } from "../../snapshot/errors";
import { duplicateRecordError, readSnapshotFile } from "../../snapshot/readSnapshotFile";
import type {
  EntitlementRecord,
  GrantRecord,
  RecordKind,
  ResourceRecord,
  ResourceRef,
  SnapshotRecord,
  Trait,
} from "../../snapshot/records";
import { ExportFile } from "../ExportFile";
import { TempDatabase } from "../TempDatabase";
import { entitlementMessage, grantMessage, resourceMessage, resourceTypeMessage } from "./messages";
import { batonTime, C1Z_MAGIC, INDEXES, INSERT, TABLES } from "./schema";

/** Rows inserted per transaction. */
const BATCH_ROWS = 10_000;
/** The database goes to zstd in slices of this size, so zstd's memory stays small. */
const COMPRESS_SLICE = 4 * 1024 * 1024;
/** zstd's default level (baton writes with klauspost's fastest, about level 1). */
const ZSTD_LEVEL = 3;

export interface C1zSummary {
  counts: Record<RecordKind, number>;
  /** The SQLite database's size, before compression. */
  databaseBytes: number;
  /** The c1z file's size. */
  fileBytes: number;
}

/**
 * Writes the snapshot at `snapshotPath` as baton's c1z v1 file at `outPath` (docs/review-tools.md):
 * the records stream into an SQLite database in a temporary file beside OUT (`TempDatabase`:
 * memory holds its page cache, not the database) in transactions of `BATCH_ROWS`, into tables
 * whose indexes exist from the start (SQLite here sorts in memory only, so no index is built
 * over rows already in); then the file is compressed as one zstd frame in slices straight into
 * OUT's temporary file, and the database removed. A record twice is found by the unique indexes
 * and refused in the snapshot reader's words once the rest of the file is found whole. A grant
 * needs its entitlement's resource and a resource its type's traits: records that come before the
 * record they need (the snapshot's order is free; a sync writes types first and grants last) wait
 * in memory until the end, so a sync's snapshot holds nothing there but the entitlements' resources.
 */
export async function writeC1z(snapshotPath: string, outPath: string): Promise<C1zSummary> {
  const database = TempDatabase.open(outPath, "c1z");
  try {
    const { db } = database;
    let rows: RowWriter | undefined;
    let read: Awaited<ReturnType<typeof readSnapshotFile>>;
    try {
      db.exec(`${TABLES}; ${INDEXES}`);
      rows = new RowWriter(db, (error) => database.failure(error));
      let syncId = "";
      let discoveredAt = "";
      const writer = rows;
      read = await readSnapshotFile(snapshotPath, (record) => writer.add(record), {
        start: (start) => {
          syncId = start.syncId;
          discoveredAt = timeOf(snapshotPath, start.startedAt, "sync_start's startedAt");
          writer.begin(syncId, discoveredAt);
        },
      });
      writer.finish(snapshotPath);
      if (writer.repeated)
        throw await duplicateRecordError(snapshotPath, writer.repeated.kind, writer.repeated.key);
      const endedAt = timeOf(snapshotPath, read.end.finishedAt, "sync_end's finishedAt");
      db.run(INSERT.sync_run, [syncId, discoveredAt, endedAt]);
    } catch (error) {
      throw database.failure(error);
    } finally {
      rows?.free();
    }
    database.db.close();
    const databaseBytes = (await stat(database.path)).size;
    let fileBytes = 0;
    await ExportFile.writeAtomically(outPath, async (file) => {
      fileBytes = await writeCompressed(file, database.path);
    });
    return { counts: read.counts, databaseBytes, fileBytes };
  } finally {
    database.close();
  }
}

function timeOf(path: string, iso: unknown, what: string): string {
  if (typeof iso !== "string" || Number.isNaN(Date.parse(iso)))
    throw SnapshotInputError.notComplete(
      path,
      `${what} is not an ISO 8601 time (${JSON.stringify(iso)})`,
    );
  return batonTime(iso);
}

/** The magic, then the database file at `path` as one zstd frame; returns the file's size. */
async function writeCompressed(file: ExportFile, path: string): Promise<number> {
  const zstd = await Zstd.load();
  copyOutputQuickly(zstd);
  zstd.reset();
  zstd.setCompressionLevel(ZSTD_LEVEL);
  await file.write(C1Z_MAGIC);
  let size = C1Z_MAGIC.length;
  for await (const slice of createReadStream(path, { highWaterMark: COMPRESS_SLICE })) {
    const chunk = zstd.compressChunk(slice as Buffer);
    size += chunk.length;
    if (chunk.length > 0) await file.write(Buffer.from(chunk));
  }
  const last = zstd.compressEnd();
  size += last.length;
  await file.write(Buffer.from(last));
  return size;
}

interface HeapBlock {
  ptr: number;
  size: number;
}
interface ZstdInternals {
  _mainModule?: {
    heapView?: (block: HeapBlock) => Uint8Array;
    heapToUint8Array?: (block: HeapBlock) => Uint8Array;
  };
}

/**
 * @hpcc-js/wasm-zstd 1.12.5 copies each output out of its wasm heap as
 * `new Uint8Array([...view])`, a JS array of one number a byte: 12 of the 62 CPU seconds of a
 * 100,000-user export. Its own `heapView` sliced is the same bytes in one copy. Only when the
 * library has the two methods (the version is pinned; the c1z test decodes the output).
 */
function copyOutputQuickly(zstd: Zstd): void {
  const module = (zstd as unknown as ZstdInternals)._mainModule;
  const view = module?.heapView;
  if (!module || typeof view !== "function" || typeof module.heapToUint8Array !== "function")
    return;
  module.heapToUint8Array = (block) => view.call(module, block).slice();
}

/**
 * The rows of the four record tables, inserted in transactions of `BATCH_ROWS`. A row a unique
 * index ignores is a record twice: the first is kept in `repeated`, and reading goes on.
 */
class RowWriter {
  repeated: RepeatedRecord | undefined;
  readonly #db: Database;
  readonly #failure: (error: unknown) => unknown;
  readonly #insert: Record<RecordKind, Statement>;
  readonly #traits = new Map<string, Trait[]>();
  readonly #entitlementResource = new Map<string, ResourceRef>();
  #waitingResources: ResourceRecord[] = [];
  #waitingGrants: GrantRecord[] = [];
  #syncId = "";
  #discoveredAt = "";
  #inBatch = 0;

  /** `failure` turns an error of the database's file into the error to throw (a full disk). */
  constructor(db: Database, failure: (error: unknown) => unknown) {
    this.#db = db;
    this.#failure = failure;
    this.#insert = {
      resource_type: db.prepare(INSERT.resource_type),
      resource: db.prepare(INSERT.resource),
      entitlement: db.prepare(INSERT.entitlement),
      grant: db.prepare(INSERT.grant),
    };
  }

  begin(syncId: string, discoveredAt: string): void {
    this.#syncId = syncId;
    this.#discoveredAt = discoveredAt;
    this.#db.exec("begin");
  }

  add(record: SnapshotRecord): void {
    switch (record.kind) {
      case "resource_type":
        this.#traits.set(record.id, record.traits);
        this.#row("resource_type", record.id, [record.id, resourceTypeMessage(record)]);
        break;
      case "resource":
        if (this.#traits.has(record.type)) this.#resource(record);
        else this.#waitingResources.push(record);
        break;
      case "entitlement":
        this.#entitlementResource.set(record.id, record.resource);
        this.#entitlement(record);
        break;
      case "grant":
        if (this.#entitlementResource.has(record.entitlement)) this.#grant(record);
        else this.#waitingGrants.push(record);
        break;
    }
  }

  /** Inserts the records that waited and commits. */
  finish(path: string): void {
    for (const record of this.#waitingResources) this.#resource(record);
    for (const record of this.#waitingGrants) {
      if (!this.#entitlementResource.has(record.entitlement))
        throw SnapshotInputError.notComplete(
          path,
          `grant ${record.id} names entitlement ${record.entitlement}, which it does not hold`,
        );
      this.#grant(record);
    }
    this.#waitingResources = [];
    this.#waitingGrants = [];
    this.#db.exec("commit");
  }

  /** Frees the statements (also after a failure). */
  free(): void {
    for (const statement of Object.values(this.#insert))
      if (!statement.isFinalized) statement.finalize();
  }

  #resource(record: ResourceRecord): void {
    const data = resourceMessage(record, this.#traits.get(record.type) ?? []);
    const key = `${record.type}:${record.id}`;
    this.#row("resource", key, [record.type, key, data]);
  }

  #entitlement(record: EntitlementRecord): void {
    const { type, id } = record.resource;
    this.#row("entitlement", record.id, [type, id, record.id, entitlementMessage(record)]);
  }

  #grant(record: GrantRecord): void {
    const resource = this.#entitlementResource.get(record.entitlement) as ResourceRef;
    const { principal } = record;
    const data = grantMessage(record, resource);
    this.#row("grant", record.id, [
      resource.type,
      resource.id,
      record.entitlement,
      principal.type,
      principal.id,
      record.id,
      data,
    ]);
  }

  /** Inserts a row of the record `kind` `key` (its external id, as a refusal names it). */
  #row(kind: RecordKind, key: string, values: (string | Uint8Array)[]): void {
    let inserted: number;
    try {
      inserted = this.#insert[kind].run([...values, this.#syncId, this.#discoveredAt]).changes;
    } catch (error) {
      throw this.#failure(error);
    }
    if (inserted === 0) this.repeated ??= { kind, key };
    if (++this.#inBatch >= BATCH_ROWS) {
      this.#inBatch = 0;
      try {
        this.#db.exec("commit; begin");
      } catch (error) {
        throw this.#failure(error);
      }
    }
  }
}
