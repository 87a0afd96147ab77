import { SnapshotInputError } from "../../snapshot/errors";
import { readSnapshotFile } from "../../snapshot/snapshotFile";
import type { RecordKind } from "../../sync/records";
import { ExportFile } from "../ExportFile";
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

/** What a row shows of a resource: display name, login, first email, status. */
type Holder = [displayName: string, login: string, email: string, status: string];

export interface CsvSummary {
  counts: Record<RecordKind, number>;
  rows: number;
}

/**
 * Writes one CSV row per grant of the snapshot at `snapshotPath` to `outPath` (RFC 4180, a header
 * row, CRLF line ends, UTF-8). Two passes over the file: the first checks that it is a complete
 * snapshot and keeps, for each resource and entitlement, what a row shows of it; the second streams
 * the grants into rows. Memory holds those names (accounts and entitlements), never the grants. A
 * grant's principal is shown as the snapshot names it, whatever its type (a team holding an
 * entitlement is a row of its own with the team's name and no login).
 */
export async function writeGrantsCsv(snapshotPath: string, outPath: string): Promise<CsvSummary> {
  const holders = new Map<string, Holder>();
  const entitlements = new Map<string, [displayName: string, resourceKey: string]>();
  const read = await readSnapshotFile(
    snapshotPath,
    (record) => {
      if (record.kind === "resource") {
        const user = record.user;
        holders.set(key(record.type, record.id), [
          record.displayName,
          user?.login ?? "",
          user?.emails[0] ?? "",
          record.status ?? "",
        ]);
      } else if (record.kind === "entitlement") {
        entitlements.set(record.id, [
          record.displayName,
          key(record.resource.type, record.resource.id),
        ]);
      }
    },
    { checkDuplicates: true },
  );
  let rows = 0;
  await ExportFile.writeAtomically(outPath, async (file) => {
    let pending = csvRow(GRANT_COLUMNS);
    await readSnapshotFile(
      snapshotPath,
      async (record) => {
        if (record.kind !== "grant") return;
        const holder = holders.get(key(record.principal.type, record.principal.id));
        const entitlement = entitlements.get(record.entitlement);
        const resource = entitlement && holders.get(entitlement[1]);
        if (!holder || !entitlement || !resource)
          throw SnapshotInputError.notComplete(
            snapshotPath,
            `grant ${record.id} names a principal or an entitlement the snapshot does not hold`,
          );
        const [account, login, email, status] = holder;
        pending += csvRow([
          account,
          login,
          email,
          status,
          entitlement[0],
          resource[0],
          record.principal.id,
          record.entitlement,
        ]);
        rows++;
        if (pending.length >= FLUSH_CHARS) {
          await file.write(pending);
          pending = "";
        }
      },
      { checkDuplicates: false }, // the first pass checked for a record twice
    );
    await file.write(pending);
  });
  return { counts: read.counts, rows };
}

function key(type: string, id: string): string {
  return `${type}\u0000${id}`;
}
