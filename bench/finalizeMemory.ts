/**
 * `npm run bench -- --finalize-memory [--users 10000,50000,100000]`: finalize's memory measured
 * honestly, a process of its own a run (bench/finalizeProcess.ts): its peak RSS (VmHWM, what
 * Lambda's "Max Memory Used" reports, the Node runtime's own included) and its live memory after a
 * full collection, where the harness's figure (V8 heap + external sampled in a worker thread of
 * the test process) counts garbage and cannot tell it from growth. Each size is a BlackLine
 * tenant of issue 37's shape synced by the command line; its records, in the snapshot's order, cut
 * into shards of `SHARD_RECORDS` (a coarse job's, as the cloud-scale runs write them) and put in
 * an S3 bucket on moto_server. Each size is finalized twice for one instance: the first run has
 * nothing to compare with, the second is judged by the removal guard against the first's digest
 * (the steady state of an instance). Prints one JSON line a run; measures, asserts nothing.
 */
import { createReadStream } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { SnapshotRecord } from "../lib/snapshot";
import { awsClientConfig, awsEnv, startMoto } from "../test/aws/harness";
import { type BenchPaths, cleanEnv } from "./cliSync";
import { blacklineShape, watchPeak } from "./cloudScale";
import type { FinalizeProcessMeasure, FinalizeProcessSpec } from "./finalizeProcess";
import { runToEnd, startHostedSimulator } from "./processes";

/** Records a shard: 517,391 records in 72 shards at 100,000 users through the packaged stack. */
export const SHARD_RECORDS = 7_200;
const BUCKET = "finalize-memory";

export interface FinalizeMemory extends FinalizeProcessMeasure {
  users: number;
  shards: number;
  /** "first" (nothing to compare with) or the guard's basis against the run before. */
  run: string;
  peakRssMiB: number;
  cpuMs: number;
  /** memoryUsage() at the highest RSS sampled (bench/processProbe.mjs). */
  atPeak: unknown;
  tmpPeakBytes: number;
}

export async function measureFinalizeMemory(
  paths: BenchPaths,
  sizes: readonly number[],
): Promise<FinalizeMemory[]> {
  const moto = await startMoto();
  try {
    const s3 = new S3Client({ ...awsClientConfig(moto.endpoint), forcePathStyle: true });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const measures: FinalizeMemory[] = [];
    for (const users of sizes) {
      const snapshot = await cliSnapshot(paths, users);
      const { shardKeys, resourceTypes } = await putShards(s3, snapshot, `runs/${users}`);
      await rm(snapshot, { force: true });
      for (const run of [1, 2]) {
        const spec: FinalizeProcessSpec = {
          bucket: BUCKET,
          connectorId: `memory-${users}`,
          syncId: `memory-${users}-${run}`,
          shardKeys,
          resourceTypes,
        };
        const measure = await finalizeInProcess(paths, moto.endpoint, spec);
        const row: FinalizeMemory = { users, shards: shardKeys.length, ...measure };
        process.stdout.write(`${JSON.stringify({ finalizeMemory: row })}\n`);
        measures.push(row);
      }
    }
    return measures;
  } finally {
    await moto.stop();
  }
}

/** A command-line BlackLine sync of `users` (the upstream without latency); its snapshot's path. */
async function cliSnapshot(paths: BenchPaths, users: number): Promise<string> {
  const spec = { ...blacklineShape(users), upstream: { latencyMs: 0 } };
  const simulator = await startHostedSimulator(paths.simulatorHost, spec);
  const out = join(paths.work, `memory-${users}.jsonl`);
  try {
    const sync = await runToEnd(
      join(paths.root, "bin", "access-connectors.js"),
      ["sync", "blackline", "--json", "--out", out],
      { cwd: paths.work, timeoutMs: 30 * 60_000, env: { ...cleanEnv(), ...simulator.ready.env } },
    );
    if (sync.code !== 0) throw new Error(`sync of ${users} users: ${sync.stderr.trim()}`);
  } finally {
    await simulator.stop();
  }
  return out;
}

/** The snapshot's body records, in its order, as shards of `SHARD_RECORDS` under `prefix`. */
async function putShards(s3: S3Client, snapshot: string, prefix: string) {
  const shardKeys: string[] = [];
  const resourceTypes: SnapshotRecord[] = [];
  let lines: string[] = [];
  const put = async () => {
    const key = `${prefix}/${shardKeys.length}.jsonl`;
    await s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `${lines.join("\n")}\n` }),
    );
    shardKeys.push(key);
    lines = [];
  };
  for await (const line of createInterface({ input: createReadStream(snapshot) })) {
    const kind = (JSON.parse(line) as { kind: string }).kind;
    if (kind === "sync_start" || kind === "sync_end") continue;
    if (kind === "resource_type") resourceTypes.push(JSON.parse(line) as SnapshotRecord);
    else lines.push(line);
    if (lines.length === SHARD_RECORDS) await put();
  }
  if (lines.length > 0) await put();
  return { shardKeys, resourceTypes };
}

/** Runs bench/finalizeProcess.ts on `spec` in a process of its own, against S3 at `endpoint`. */
export async function finalizeInProcess(
  paths: BenchPaths,
  endpoint: string,
  spec: FinalizeProcessSpec,
): Promise<Omit<FinalizeMemory, "users" | "shards">> {
  const tmp = join(paths.work, `${spec.syncId}-tmp`);
  await mkdir(tmp, { recursive: true });
  const probeFile = join(paths.work, `${spec.syncId}.process.json`);
  const peak = watchPeak(tmp, 20);
  // BENCH_CPU_PROF=<dir>: each finalize's main thread profiled there (node --cpu-prof).
  const profile = process.env.BENCH_CPU_PROF;
  const done = await runToEnd(
    process.execPath,
    [
      "--expose-gc",
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
      join(paths.root, "dist", "bench", "finalizeProcess.mjs"),
      JSON.stringify(spec),
    ],
    {
      timeoutMs: 30 * 60_000,
      env: {
        ...cleanEnv(),
        ...awsEnv(endpoint),
        TMPDIR: tmp,
        // As serverless.yml's provider environment sets them for every function.
        MALLOC_ARENA_MAX: "2",
        MALLOC_MMAP_THRESHOLD_: "131072",
        NODE_OPTIONS: `--max-semi-space-size=4 --import=${pathToFileURL(paths.processProbe).href}`,
        BENCH_PROCESS_FILE: probeFile,
      },
    },
  );
  const tmpPeakBytes = await peak.stop();
  await rm(tmp, { recursive: true, force: true });
  if (done.code !== 0) throw new Error(`finalize of ${spec.syncId}: ${done.stderr.trim()}`);
  const probe = JSON.parse(await readFile(probeFile, "utf8")) as {
    peakRssBytes: number;
    cpuMs: number;
    atPeak: unknown;
  };
  const measure = JSON.parse(done.stdout.trim().split("\n").at(-1) as string);
  return {
    run: measure.guard === "first" ? "first" : `judged (${measure.guard})`,
    peakRssMiB: Math.round(probe.peakRssBytes / 1048576),
    cpuMs: Math.round(probe.cpuMs),
    atPeak: probe.atPeak,
    tmpPeakBytes,
    ...(measure as FinalizeProcessMeasure),
  };
}
