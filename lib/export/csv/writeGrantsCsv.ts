import type { Database, Statement } from "node-sqlite3-wasm";
import { SnapshotInputError } from "../../snapshot/errors";
import type { BodyLine } from "../../snapshot/records";
import { readSnapshotFile } from "../../snapshot/snapshotFile";
import type { RecordKind } from "../../sync/records";
import { ExportFile } from "../ExportFile";
import { TempDatabase } from "../TempDatabase";
import { csvRow } from "./csvCells";

/** The sheet's columns: who holds what, then the ids that name them exactly. */
export const GRANT_COLUMNS = [
  "account",
  "login",
  "email",
  "status",
  "entitlement",
  "resource",
  "account_id",
  "entitlement_id",
] as const;

/** Rows are written to the file in pieces of about this many characters. */
const FLUSH_CHARS = 64 * 1024;

export interface CsvSummary {
  counts: Record<RecordKind, number>;
  rows: number;
}

/** What a row shows of a resource and of an entitlement, by key, in `TempDatabase`'s file. */
const NAMES = `
create table holder (type text, id text, name text, login text, email text, status text, primary key (type, id)) without rowid;
create table entitlement (id text primary key, name text, resource_type text, resource_id text) without rowid;`;
const INSERT_HOLDER = "insert or ignore into holder values (?, ?, ?, ?, ?, ?)";
const INSERT_ENTITLEMENT = "insert or ignore into entitlement values (?, ?, ?, ?)";
/** A grant's row: its principal's names, its entitlement's, and the entitlement's resource's. */
const ROW = `select h.name, h.login, h.email, h.status, e.name as entitlement, r.name as resource
  from holder h, entitlement e, holder r
  where h.type = ? and h.id = ? and e.id = ? and r.type = e.resource_type and r.id = e.resource_id`;
/** Names inserted per transaction. */
const BATCH_ROWS = 10_000;

/**
 * Writes one CSV row per grant of the snapshot at `snapshotPath` to `outPath` (RFC 4180, a header
 * row, CRLF line ends, UTF-8). Two passes over the file: the first checks that it is a complete
 * snapshot (a record twice found on disk, lib/snapshot) and keeps, for each resource and
 * entitlement, what a row shows of it, in an SQLite file beside OUT (`TempDatabase`: memory holds
 * its page cache, whatever the tenant's size); the second streams the grants into rows, in the
 * snapshot's order, each looked up by key. A grant's principal is shown as the snapshot names it,
 * whatever its type (a team holding an entitlement is a row of its own with the team's name and
 * no login).
 */
export async function writeGrantsCsv(snapshotPath: string, outPath: string): Promise<CsvSummary> {
  const names = TempDatabase.open(outPath, "csv");
  try {
    const read = await keepNames(snapshotPath, names);
    let rows = 0;
    await ExportFile.writeAtomically(outPath, async (file) => {
      let pending = csvRow(GRANT_COLUMNS);
      const row = names.db.prepare(ROW);
      try {
        await readSnapshotFile(snapshotPath, async (record) => {
          if (record.kind !== "grant") return;
          const { principal } = record;
          const found = row.get([principal.type, principal.id, record.entitlement]) as Record<
            "name" | "login" | "email" | "status" | "entitlement" | "resource",
            string
          > | null;
          if (!found)
            throw SnapshotInputError.notComplete(
              snapshotPath,
              `grant ${record.id} names a principal or an entitlement the snapshot does not hold`,
            );
          pending += csvRow([
            found.name,
            found.login,
            found.email,
            found.status,
            found.entitlement,
            found.resource,
            principal.id,
            record.entitlement,
          ]);
          rows++;
          if (pending.length >= FLUSH_CHARS) {
            await file.write(pending);
            pending = "";
          }
        });
      } finally {
        row.finalize();
      }
      await file.write(pending);
    });
    return { counts: read.counts, rows };
  } finally {
    names.close();
  }
}

/** The first pass: checks the snapshot and writes each resource's and entitlement's names to `names`. */
async function keepNames(snapshotPath: string, names: TempDatabase) {
  names.db.exec(NAMES);
  const writer = new NameWriter(names.db);
  try {
    const read = await readSnapshotFile(
      snapshotPath,
      (record) => {
        try {
          writer.add(record);
        } catch (error) {
          throw names.failure(error); // else the reader would say the snapshot cannot be read
        }
      },
      { checkDuplicates: true },
    );
    writer.commit();
    return read;
  } catch (error) {
    throw names.failure(error);
  } finally {
    writer.free();
  }
}

/** The names of resources and entitlements, inserted in transactions of `BATCH_ROWS`. */
class NameWriter {
  readonly #db: Database;
  readonly #holder: Statement;
  readonly #entitlement: Statement;
  #inBatch = 0;

  constructor(db: Database) {
    this.#db = db;
    this.#holder = db.prepare(INSERT_HOLDER);
    this.#entitlement = db.prepare(INSERT_ENTITLEMENT);
    db.exec("begin");
  }

  add(record: BodyLine): void {
    if (record.kind === "resource") {
      const user = record.user;
      this.#holder.run([
        record.type,
        record.id,
        record.displayName,
        user?.login ?? "",
        user?.emails[0] ?? "",
        record.status ?? "",
      ]);
    } else if (record.kind === "entitlement") {
      const { resource } = record;
      this.#entitlement.run([record.id, record.displayName, resource.type, resource.id]);
    } else return;
    if (++this.#inBatch < BATCH_ROWS) return;
    this.#inBatch = 0;
    this.#db.exec("commit; begin");
  }

  commit(): void {
    this.#db.exec("commit");
  }

  free(): void {
    this.#holder.finalize();
    this.#entitlement.finalize();
  }
}
