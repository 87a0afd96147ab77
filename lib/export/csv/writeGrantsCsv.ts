import { readSnapshotFile } from "../../snapshot/readSnapshotFile";
import type { RecordKind } from "../../snapshot/records";
import { ExportFile } from "../ExportFile";
import { csvRow } from "./csvCells";
import { GrantRows } from "./GrantRows";

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

export interface CsvSummary {
  counts: Record<RecordKind, number>;
  rows: number;
}

/**
 * Writes one CSV row per grant of the snapshot at `snapshotPath` to `outPath` (RFC 4180, a header
 * row, CRLF line ends, UTF-8), in the snapshot's order. The snapshot is read once, checked whole
 * (a record twice found on disk, lib/snapshot) while `GrantRows` spreads its resources and grants
 * over temporary files; the rows come from joining those (memory flat in the snapshot's size, no
 * lookup a grant). A grant's principal is shown as the snapshot names it, whatever its type (a
 * team holding an entitlement is a row of its own with the team's name and no login).
 */
export async function writeGrantsCsv(snapshotPath: string, outPath: string): Promise<CsvSummary> {
  const grants = await GrantRows.open(snapshotPath, outPath);
  try {
    const read = await readSnapshotFile(snapshotPath, (record) => grants.add(record), {
      checkDuplicates: true,
    });
    await ExportFile.writeAtomically(outPath, async (file) => {
      await file.write(csvRow(GRANT_COLUMNS));
      for await (const rows of grants.rows()) await file.write(rows);
    });
    return { counts: read.counts, rows: read.counts.grant };
  } finally {
    await grants.close();
  }
}
