/**
 * Finalize's work on one run, alone in this process, so its memory is its own: the shards read
 * from S3 (`ShardStore`, as finalize reads them), the snapshot assembled and checked
 * (`writeRunSnapshot`), then the removal guard against the instance's last published digest and
 * the digest recorded (`publishGuarded` with `S3GuardStore`); the upload is a read of the file to
 * its end. Started by bench/finalizeMemory.ts with `--expose-gc` and bench/processProbe.mjs
 * preloaded (peak RSS, CPU); prints one JSON line, `FinalizeProcessMeasure`.
 */
import { createReadStream, readFileSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { finished } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { S3GuardStore } from "../lib/cloud/aws/guardStore";
import { ShardStore } from "../lib/cloud/aws/shards";
import { type ShardWorkerOptions, writeRunSnapshot } from "../lib/cloud/runSnapshot";
import { shardWorkerCount } from "../lib/cloud/shardWorkers";
import { parseRemovalLimit } from "../lib/guard";
import { publishGuarded } from "../lib/publish";
import type { SnapshotRecord } from "../lib/snapshot";

export interface FinalizeProcessSpec {
  bucket: string;
  connectorId: string;
  syncId: string;
  shardKeys: string[];
  resourceTypes: SnapshotRecord[];
}

/** V8 heap in use and memory outside it (buffers, typed arrays), MiB. */
export interface HeapFigures {
  heapMiB: number;
  externalMiB: number;
}

export interface FinalizeProcessMeasure {
  /** Live memory after a full collection, once the snapshot is written (its digest held). */
  afterAssembly: HeapFigures;
  /** The same once the guard has judged and the digest is recorded. */
  afterGuard: HeapFigures;
  /** V8 heap + external, sampled every 20 ms, garbage included (the harness's measure). */
  sampledPeakMiB: number;
  /** V8 heap + external after a full collection, the most seen (every `LIVE_EVERY_MS`). */
  livePeakMiB: number;
  records: number;
  snapshotBytes: number;
  guard: string;
  assemblyMs: number;
  guardMs: number;
  /**
   * CPU of the main thread alone, ms (the event loop's: the rest of the process's CPU is the
   * thread pool's gzip, spool compression and file writes, and V8's helper threads), while the
   * snapshot is written, and while the guard judges and the digest is recorded.
   */
  mainCpuMs: { assembly: number; guard: number };
  /** Worker threads that made the shards ready (`ShardWorkers`); 0: the main thread did. */
  shardWorkers: number;
}

const MIB = 1024 * 1024;
const round = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

/** The main thread's CPU so far, ms, from Linux's per-thread accounting (ticks of 10 ms). */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Finalize's shard workers as its package starts them: their script bundled beside this one
 * (scripts/bench.mjs), one a vCPU but the main thread's; BENCH_SHARD_WORKERS=<n> starts n (0: the
 * shards are made ready on the main thread, as on one vCPU), to measure what a larger finalize's
 * threads cost.
 */
function shardWorkers(): ShardWorkerOptions {
  const script = pathToFileURL(join(dirname(process.argv[1] as string), "shard-worker.mjs"));
  const asked = process.env.BENCH_SHARD_WORKERS;
  return { count: asked ? Number(asked) : shardWorkerCount(script), script };
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/**
 * Live memory: after a full collection, and another once the first's freed buffers are swept (V8
 * frees an ArrayBuffer's memory on a task after the collection that found it dead).
 */
async function liveHeap(): Promise<HeapFigures> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return { heapMiB: round(heapUsed), externalMiB: round(external) };
}

/** Live memory every `LIVE_EVERY_MS` (a full collection each, about 1% of the run's CPU). */
const LIVE_EVERY_MS = 1000;

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] as string) as FinalizeProcessSpec;
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    const { heapUsed, external } = process.memoryUsage();
    sampledPeak = Math.max(sampledPeak, heapUsed + external);
  }, 20);
  let livePeak = 0;
  const liveSampler = setInterval(() => {
    gc();
    const { heapUsed, external } = process.memoryUsage();
    livePeak = Math.max(livePeak, heapUsed + external);
  }, LIVE_EVERY_MS);
  const dir = await mkdtemp(join(tmpdir(), "finalize-"));
  try {
    const path = join(dir, `${spec.syncId}.jsonl.gz`);
    const shards = new ShardStore(spec.bucket);
    const began = performance.now();
    const mainAtStart = mainThreadCpuMs();
    const snapshot = await writeRunSnapshot(
      path,
      { syncId: spec.syncId, connector: "blackline", startedAt: new Date().toISOString() },
      {
        resourceTypes: spec.resourceTypes,
        shardKeys: spec.shardKeys,
        openShard: (key) => shards.openShard(key),
      },
      shardWorkers(),
    );
    const assembled = performance.now();
    const mainAssembled = mainThreadCpuMs();
    const snapshotBytes = (await stat(path)).size;
    const afterAssembly = await liveHeap();
    const outcome = await publishGuarded({
      snapshotFile: path,
      digest: snapshot.digest,
      syncId: spec.syncId,
      limit: parseRemovalLimit(undefined, "MAX_REMOVAL"),
      store: new S3GuardStore(spec.bucket, spec.connectorId),
      publish: async (file) => {
        const read = createReadStream(file);
        read.resume();
        await finished(read);
      },
    });
    const guardMs = performance.now() - assembled;
    const mainCpuMs = {
      assembly: mainAssembled - mainAtStart,
      guard: mainThreadCpuMs() - mainAssembled,
    };
    const afterGuard = await liveHeap();
    clearInterval(sampler);
    clearInterval(liveSampler);
    const measure: FinalizeProcessMeasure = {
      afterAssembly,
      afterGuard,
      sampledPeakMiB: round(sampledPeak),
      livePeakMiB: round(livePeak),
      records: Object.values(snapshot.counts).reduce((a, b) => a + b, 0),
      snapshotBytes,
      guard: outcome.verdict.basis,
      assemblyMs: Math.round(assembled - began),
      guardMs: Math.round(guardMs),
      mainCpuMs,
      shardWorkers: snapshot.shardWorkers,
    };
    process.stdout.write(`${JSON.stringify(measure)}\n`);
  } finally {
    clearInterval(sampler);
    clearInterval(liveSampler);
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
