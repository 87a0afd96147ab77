import { dirname } from "node:path";
import type { Readable } from "node:stream";
import type { SnapshotDigest } from "../guard";
import {
  type AssembledSnapshot,
  readLines,
  SnapshotAssembler,
  SnapshotFile,
  type SnapshotRecord,
} from "../sync";

/** How a write error in finalize's temporary directory tells the fix. */
const FINALIZE_ELSEWHERE =
  "give the finalize function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml; Lambda's default is 512 MB)";

/** Where the records of a run's snapshot come from: the resource types, then each shard's lines. */
export interface RunRecords {
  resourceTypes: readonly SnapshotRecord[];
  shardKeys: readonly string[];
  openShard: (key: string) => Promise<Readable>;
}

/**
 * Writes a run's snapshot as gzip at `path`, through the same assembler and file sink as the CLI
 * (`SnapshotFile`: a temporary file beside `path`, renamed onto it when complete). A write the
 * system refuses (a full /tmp) fails with `WriteFailedError` naming the file and the fix, and
 * leaves no file; it never escapes as an unheard stream error that would crash the function.
 * With the counts comes the removal guard's digest of the file, built as it was written.
 */
export async function writeRunSnapshot(
  path: string,
  run: { syncId: string; connector: string; startedAt: string },
  records: RunRecords,
): Promise<AssembledSnapshot & { digest: SnapshotDigest }> {
  const file = await SnapshotFile.open(path, run.syncId, FINALIZE_ELSEWHERE);
  let assembler: SnapshotAssembler | undefined;
  try {
    assembler = await SnapshotAssembler.open({
      out: file.stream,
      outFile: file.file,
      outReleasesChunks: true,
      spoolDir: dirname(path),
      spoolElsewhere: FINALIZE_ELSEWHERE,
      syncId: run.syncId,
      connector: run.connector,
      startedAt: new Date(run.startedAt),
    });
    await assembler.write(records.resourceTypes);
    for (const shardKey of records.shardKeys) {
      let batch: SnapshotRecord[] = [];
      for await (const line of readLines(await records.openShard(shardKey))) {
        batch.push(JSON.parse(line) as SnapshotRecord);
        if (batch.length >= 1_000) {
          await assembler.write(batch);
          batch = [];
        }
      }
      await assembler.write(batch);
    }
    const snapshot = await assembler.complete();
    await file.commit();
    return { ...snapshot, digest: assembler.digest };
  } catch (error) {
    await assembler?.abort();
    await file.abort();
    throw error;
  }
}
