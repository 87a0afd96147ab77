import { Zstd } from "@hpcc-js/wasm-zstd";
import initSqlJs, { type Database, type Statement } from "sql.js";
import { messageOf } from "../../errors";
import { SnapshotInputError } from "../../snapshot/errors";
import { readSnapshotFile } from "../../snapshot/snapshotFile";
import type {
  EntitlementRecord,
  GrantRecord,
  RecordKind,
  ResourceRecord,
  ResourceRef,
  SnapshotRecord,
  Trait,
} from "../../sync/records";
import { ExportFile } from "../ExportFile";
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
 * the records stream into an SQLite database (sql.js, in memory) in transactions of
 * `BATCH_ROWS`, the indexes are built once at the end, and the database is compressed as one zstd
 * frame in slices straight into the file. A grant needs its entitlement's resource and a resource
 * its type's traits: records that come before the record they need (the snapshot's order is free;
 * a sync writes types first and grants last) wait in memory until the end.
 */
export async function writeC1z(snapshotPath: string, outPath: string): Promise<C1zSummary> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  try {
    db.exec(`pragma journal_mode = off; pragma synchronous = off; ${TABLES}`);
    const rows = new RowWriter(db);
    let syncId = "";
    let discoveredAt = "";
    const read = await readSnapshotFile(snapshotPath, (record) => rows.add(record), {
      start: (start) => {
        syncId = start.syncId;
        discoveredAt = timeOf(snapshotPath, start.startedAt, "sync_start's startedAt");
        rows.begin(syncId, discoveredAt);
      },
      checkDuplicates: true,
    });
    rows.finish(snapshotPath);
    const endedAt = timeOf(snapshotPath, read.end.finishedAt, "sync_end's finishedAt");
    db.run(INSERT.sync_run, [syncId, discoveredAt, endedAt]);
    buildIndexes(db, snapshotPath);
    const database = db.export();
    db.close();
    let fileBytes = 0;
    await ExportFile.writeAtomically(outPath, async (file) => {
      fileBytes = await writeCompressed(file, database);
    });
    return { counts: read.counts, databaseBytes: database.length, fileBytes };
  } finally {
    // close() again after export's close is a no-op; on a failure it frees the database.
    db.close();
  }
}

/** The indexes; a unique one that cannot be built means the snapshot holds a record twice. */
function buildIndexes(db: Database, path: string): void {
  try {
    db.exec(INDEXES);
  } catch (error) {
    const message = messageOf(error);
    if (!message.startsWith("UNIQUE constraint failed")) throw error;
    throw SnapshotInputError.notComplete(path, `it holds a record twice (${message})`);
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

/** The magic, then the database as one zstd frame; returns the file's size. */
async function writeCompressed(file: ExportFile, database: Uint8Array): Promise<number> {
  const zstd = await Zstd.load();
  copyOutputQuickly(zstd);
  zstd.reset();
  zstd.setCompressionLevel(ZSTD_LEVEL);
  await file.write(C1Z_MAGIC);
  let size = C1Z_MAGIC.length;
  for (let at = 0; at < database.length; at += COMPRESS_SLICE) {
    const chunk = zstd.compressChunk(database.subarray(at, at + COMPRESS_SLICE));
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

/** The rows of the four record tables, inserted in transactions of `BATCH_ROWS`. */
class RowWriter {
  readonly #db: Database;
  readonly #insert: Record<RecordKind, Statement>;
  readonly #traits = new Map<string, Trait[]>();
  readonly #entitlementResource = new Map<string, ResourceRef>();
  #waitingResources: ResourceRecord[] = [];
  #waitingGrants: GrantRecord[] = [];
  #syncId = "";
  #discoveredAt = "";
  #inBatch = 0;

  constructor(db: Database) {
    this.#db = db;
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
        this.#row("resource_type", [record.id, resourceTypeMessage(record)]);
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

  /** Inserts the records that waited, commits, and frees the statements. */
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
    for (const statement of Object.values(this.#insert)) statement.free();
  }

  #resource(record: ResourceRecord): void {
    const data = resourceMessage(record, this.#traits.get(record.type) ?? []);
    this.#row("resource", [record.type, `${record.type}:${record.id}`, data]);
  }

  #entitlement(record: EntitlementRecord): void {
    const { type, id } = record.resource;
    this.#row("entitlement", [type, id, record.id, entitlementMessage(record)]);
  }

  #grant(record: GrantRecord): void {
    const resource = this.#entitlementResource.get(record.entitlement) as ResourceRef;
    const { principal } = record;
    const data = grantMessage(record, resource);
    this.#row("grant", [
      resource.type,
      resource.id,
      record.entitlement,
      principal.type,
      principal.id,
      record.id,
      data,
    ]);
  }

  #row(kind: RecordKind, values: (string | Uint8Array)[]): void {
    this.#insert[kind].run([...values, this.#syncId, this.#discoveredAt]);
    if (++this.#inBatch >= BATCH_ROWS) {
      this.#db.exec("commit; begin");
      this.#inBatch = 0;
    }
  }
}
