import { stat } from "node:fs/promises";
import type { PrivilegedEntitlements } from "../connectors";
import { readLines } from "../snapshot/jsonLines";
import { openSnapshot } from "../snapshot/readSnapshot";
import { snapshotLine } from "../snapshot/records";

/** What an index was built from: it is rebuilt when any of these differs. */
export interface IndexKey {
  size: number;
  mtimeMs: number;
  syncId: string;
  /** The connector's privileged rules (the privileged counts are computed with them). */
  rules: string;
}

/** The snapshot's key now, or undefined when its first line is not a sync_start (a build says why). */
export async function snapshotKey(
  snapshot: string,
  privilegedFor: (connector: string) => PrivilegedEntitlements,
): Promise<IndexKey | undefined> {
  let size: number;
  let mtimeMs: number;
  let input: Awaited<ReturnType<typeof openSnapshot>>;
  try {
    ({ size, mtimeMs } = await stat(snapshot));
    input = await openSnapshot(snapshot);
  } catch {
    return undefined;
  }
  try {
    for await (const text of readLines(input)) {
      const first = snapshotLine.safeParse(JSON.parse(text));
      if (!first.success || first.data.kind !== "sync_start") return undefined;
      const rules = JSON.stringify(privilegedFor(first.data.connector));
      return { size, mtimeMs, syncId: first.data.syncId, rules };
    }
  } catch {
    return undefined;
  } finally {
    input.destroy();
  }
  return undefined;
}
