import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";

export type Line = Record<string, unknown> & { kind: string; id?: string };

/** Reads a snapshot file (plain or gzip) into its records. */
export async function readSnapshot(path: string): Promise<Line[]> {
  const raw = await readFile(path);
  const text = path.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return text
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
}

/** The records between sync_start and sync_end, as a sorted list of JSON strings: comparable across runs. */
export function canonicalRecords(lines: readonly Line[]): string[] {
  return lines
    .filter((line) => line.kind !== "sync_start" && line.kind !== "sync_end")
    .map((line) => JSON.stringify(line))
    .sort();
}
