/**
 * `npm run bench -- --cloud-finalize [--users 10000,20000]`: the finalize function of the
 * packaged stack on moto_server, its shard GETs slowed to S3's time to first byte (40 ms, by
 * the harness's counting proxy, test/aws/harness/awsRequests.ts), at a few tenant sizes. Each size is one BlackLine sync (the shape of
 * issue 37: a team per 50 users, pages of 1,000, no rate limit) run by the harness's worker, then
 * finalize alone through the proxy. Prints one JSON line a size; measures, asserts nothing.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { RunStore } from "../lib/cloud";
import { startPlatformSimulator } from "../lib/simulators/platform";
import {
  awsEnv,
  deployStack,
  runOperator,
  startAwsRequestCounter,
  startMoto,
} from "../test/aws/harness";
import type { BenchPaths } from "./cliSync";
import { watchPeak } from "./cloudScale";
import { startHostedSimulator } from "./processes";

export const S3_FIRST_BYTE_MS = 40;

export interface FinalizeMeasure {
  users: number;
  shards: number;
  records: number;
  /** Finalize's handler time, ms (the drain of the finalize queue: one invocation). */
  finalizeMs: number;
  /** GETs through the proxy during finalize (the shards, the guard's objects). */
  gets: number;
  /** The most GETs in flight at once: 1 when shards are read one after another. */
  mostGetsInFlight: number;
  /**
   * CPU time of this process during finalize, ms: the handler's thread, the proxy and the
   * harness (moto is a process of its own). A figure that holds on a loaded machine, unlike wall time.
   */
  cpuMs: number;
  /** The largest the function's temporary directory was seen (polled every 20 ms), bytes. */
  tmpPeakBytes: number;
  status: string;
}

export async function runFinalizeBench(
  paths: BenchPaths,
  sizes: readonly number[],
): Promise<FinalizeMeasure[]> {
  const moto = await startMoto();
  const closers: (() => Promise<unknown>)[] = [() => moto.stop()];
  try {
    const proxy = await startAwsRequestCounter(moto.endpoint, { getDelayMs: S3_FIRST_BYTE_MS });
    closers.push(() => proxy.close());
    const stack = await deployStack(moto, { stage: "bench" });
    closers.push(() => stack.close());
    Object.assign(process.env, awsEnv(moto.endpoint));
    const platform = await startPlatformSimulator();
    closers.push(() => platform.close());
    const tmp = join(paths.work, "finalize-tmp");
    await mkdir(tmp, { recursive: true });
    await stack.updateEnvironment("finalize", { AWS_ENDPOINT_URL_S3: proxy.endpoint, TMPDIR: tmp });
    const runs = new RunStore(stack.outputs.RunsTableName as string);

    const measures: FinalizeMeasure[] = [];
    for (const users of sizes) {
      const size = { users, teams: Math.ceil(users / 50), roles: 50, maxTeamsPerUser: 6 };
      const upstream = await startHostedSimulator(paths.simulatorHost, {
        connector: "blackline",
        size,
        upstream: { latencyMs: 0 },
      });
      try {
        const id = `fin-${users}`;
        const env = { ...upstream.ready.env, ...platform.env() };
        const put = await runOperator(stack, ["put-instance", id, "blackline", "--no-sync"], env);
        if (put.code !== 0) throw new Error(`put-instance: ${put.stderr.trim()}`);
        const sync = await runOperator(stack, ["sync", id]);
        const { syncId } = JSON.parse(sync.stdout.trim().split("\n").at(-1) ?? "{}") as {
          syncId?: string;
        };
        if (!syncId) throw new Error(`cloud sync: ${sync.stderr.trim() || sync.stdout.trim()}`);
        await stack.drainQueue("syncWorker");
        proxy.take();
        const peak = watchPeak(tmp, 20);
        const cpu = process.cpuUsage();
        const finalize = await stack.drainQueue("finalize");
        const { user, system } = process.cpuUsage(cpu);
        const tmpPeakBytes = await peak.stop();
        const { s3, mostGetsInFlight } = proxy.take();
        const run = await runs.get(syncId);
        const text = platform.uploads.get(syncId)?.text ?? "";
        const measure: FinalizeMeasure = {
          users,
          shards: (await runs.markers(syncId)).filter((m) => m.shardKey).length,
          records: text.split("\n").filter((line) => line.length > 0).length - 2,
          finalizeMs: Math.round(finalize.handlerMs),
          gets: s3.GET ?? 0,
          mostGetsInFlight,
          cpuMs: Math.round((user + system) / 1000),
          tmpPeakBytes,
          status: run?.status ?? "missing",
        };
        process.stdout.write(`${JSON.stringify({ finalize: measure })}\n`);
        measures.push(measure);
      } finally {
        await upstream.stop();
      }
    }
    return measures;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}
