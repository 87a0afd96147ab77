import { dirname } from "node:path";
import { Readable } from "node:stream";
import type { SnapshotDigest } from "../guard";
import {
  type AssembledSnapshot,
  lineBatches,
  SnapshotAssembler,
  SnapshotFile,
  type SnapshotRecord,
} from "../snapshot";
import type { PreparedPage } from "../snapshot/preparedPage";
import { ShardWorkers, shardWorkerCount } from "./shardWorkers";

/** How a write error in finalize's temporary directory tells the fix. */
const FINALIZE_ELSEWHERE =
  "give the finalize function more ephemeral storage for /tmp (ephemeralStorageSize in serverless.yml; Lambda's default is 512 MB)";

/**
 * Shard reads in flight while the snapshot is written, at most. One after another, finalize waits
 * S3's time to first byte (20-50 ms) once per shard: 21,000 shards of a 1,000,000-user tenant were
 * 7 to 18 minutes of waiting against Lambda's 15. The window stays below the AWS SDK's default of
 * 50 sockets per client (`awsClients` sets none), so no read queues for a socket while in flight.
 */
export const SHARD_READS_IN_FLIGHT = 32;

/**
 * Bytes of shards read ahead of the one being written, about: the window is as many reads as
 * shards of the largest size seen so far fit in it (one before any is known, two at least). A
 * coarse job's shard is about 1.4 MB (7,200 records), so 32 of them held 45 MB, the largest part
 * of finalize's live memory at 100,000 users; 11 of them take about a second to write, far longer
 * than the 40 ms their reads wait for a first byte.
 */
export const SHARD_BYTES_AHEAD = 16 * 1024 * 1024;

/** Where the records of a run's snapshot come from: the resource types, then each shard's lines. */
export interface RunRecords {
  resourceTypes: readonly SnapshotRecord[];
  shardKeys: readonly string[];
  openShard: (key: string) => Promise<Readable>;
}

/**
 * How many worker threads make the shards ready (`ShardWorkers`) and from which script; 0 makes
 * them on the main thread. By default `shardWorkerCount()`: in finalize's package, one a vCPU but
 * the main thread's.
 */
export interface ShardWorkerOptions {
  count: number;
  script?: URL;
}

/**
 * Writes a run's snapshot as gzip at `path`, through the same assembler and file sink as the CLI
 * (`SnapshotFile`: a temporary file beside `path`, renamed onto it when complete). A write the
 * system refuses (a full /tmp) fails with `WriteFailedError` naming the file and the fix, and
 * leaves no file; it never escapes as an unheard stream error that would crash the function.
 * With the counts comes the removal guard's digest of the file, built as it was written.
 * Shards are read `SHARD_READS_IN_FLIGHT` at a time and written in the order of `shardKeys`, made
 * ready in `workers` threads when there are any (`shardWorkers` tells how many were).
 */
export async function writeRunSnapshot(
  path: string,
  run: { syncId: string; connector: string; startedAt: string },
  records: RunRecords,
  workers: ShardWorkerOptions = { count: shardWorkerCount() },
): Promise<AssembledSnapshot & { digest: SnapshotDigest; shardWorkers: number }> {
  const file = await SnapshotFile.open(path, run.syncId, FINALIZE_ELSEWHERE);
  let assembler: SnapshotAssembler | undefined;
  let pool: ShardWorkers | undefined;
  try {
    if (workers.count > 0) pool = new ShardWorkers(workers.count, workers.script);
    assembler = await SnapshotAssembler.open({
      out: file.stream,
      outFile: file.file,
      outReleasesChunks: true,
      spoolDir: dirname(path),
      compressSpool: true,
      spoolElsewhere: FINALIZE_ELSEWHERE,
      syncId: run.syncId,
      connector: run.connector,
      startedAt: new Date(run.startedAt),
    });
    await assembler.write(records.resourceTypes);
    if (pool) await writePrepared(assembler, records, pool, workers.count);
    else await writeInThread(assembler, records);
    const snapshot = await assembler.complete();
    await file.commit();
    return { ...snapshot, digest: assembler.digest, shardWorkers: pool ? workers.count : 0 };
  } catch (error) {
    await assembler?.abort();
    await file.abort();
    throw error;
  } finally {
    await pool?.close();
  }
}

/** Each shard's lines made ready and written on this thread. */
async function writeInThread(assembler: SnapshotAssembler, records: RunRecords): Promise<void> {
  // One page's writes (its spool frame compressed, its chunks written) go on while the next is
  // serialised: the assembler serialises a page when handed it and writes pages in order.
  let writing: Promise<void> = Promise.resolve();
  for await (const shard of shardsInOrder(records)) {
    for await (const lines of lineBatches(Readable.from(shard))) {
      const page = assembler.writeLines(lines);
      page.catch(() => {}); // heard below, or by `complete`
      await writing;
      writing = page;
    }
  }
  await writing;
}

/**
 * Each shard made ready in the workers (`ShardWorkers`), two a worker in flight, and written in
 * the order of `shardKeys`: this thread keeps the first of each identity and copies the bytes.
 */
async function writePrepared(
  assembler: SnapshotAssembler,
  records: RunRecords,
  pool: ShardWorkers,
  count: number,
): Promise<void> {
  const ready: Promise<PreparedPage>[] = [];
  let writing: Promise<void> = Promise.resolve();
  const writeNext = async () => {
    const page = assembler.writePrepared(await (ready.shift() as Promise<PreparedPage>));
    page.catch(() => {}); // heard below, or by `complete`
    await writing;
    writing = page;
  };
  for await (const shard of shardsInOrder(records)) {
    const page = pool.prepare(shard);
    page.catch(() => {}); // heard when its turn comes, or left when the snapshot stops early
    ready.push(page);
    if (ready.length >= 2 * count) await writeNext();
  }
  while (ready.length > 0) await writeNext();
  await writing;
}

/**
 * Each shard's chunks, in the order of `shardKeys`, with reads ahead of the one being written: up
 * to `SHARD_READS_IN_FLIGHT`, and as many as shards of the largest size seen fit in
 * `SHARD_BYTES_AHEAD`. Memory holds about that many bytes and the shard in hand, whatever the
 * run's size. A read that fails fails the snapshot when its turn comes; reads still in flight when
 * the snapshot stops early are left to finish unheard (their rejections are handled, never
 * unheard), and start no other: they stay in the window, which only the snapshot empties.
 */
async function* shardsInOrder(records: RunRecords): AsyncGenerator<(Buffer | string)[]> {
  const ahead: Promise<(Buffer | string)[]>[] = [];
  let next = 0;
  let largest = 0;
  const window = () =>
    largest === 0
      ? 1
      : Math.max(2, Math.min(SHARD_READS_IN_FLIGHT, Math.floor(SHARD_BYTES_AHEAD / largest)));
  // Called as each read ends too, so the window widens once the first shard's size is known.
  const readAhead = () => {
    while (next < records.shardKeys.length && ahead.length < window()) {
      const key = records.shardKeys[next++] as string;
      const read = records.openShard(key).then(async (stream) => {
        const chunks = (await stream.toArray()) as (Buffer | string)[];
        largest = Math.max(largest, byteLength(chunks));
        return chunks;
      });
      read.then(readAhead, () => {});
      ahead.push(read);
    }
  };
  readAhead();
  for (let read = ahead.shift(); read; read = ahead.shift()) {
    const shard = await read;
    readAhead();
    yield shard;
  }
}

const byteLength = (chunks: readonly (Buffer | string)[]) =>
  chunks.reduce((bytes, chunk) => bytes + Buffer.byteLength(chunk), 0);
