/**
 * `npm run bench -- --cloud-scale [--users 10000,20000]`: the capacity model's measurements.
 * Each size is one BlackLine sync through the packaged stack on moto_server (issue 37's shape: a
 * team per 50 users, 50 roles, pages of 1,000, the upstream at 40 ms and no rate limit), with the
 * harness's workers (each mapping's maximum concurrency at once, warm containers), and every AWS
 * request of the functions through the harness's counting proxy (test/aws/harness/awsRequests.ts):
 * S3 GETs held 40 ms (S3's first byte), each request counted by what AWS bills. It measures per
 * job and per shard what
 * bench/capacity.ts projects; the job model is lib/cloud's, whatever it is, since the counts are
 * taken at the wire.
 */
import { mkdir, readdir, stat } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { RunStore } from "../lib/cloud";
import { startPlatformSimulator } from "../lib/simulators/platform";
import { type AwsRequestCounts, runOperator, startStackOnMoto } from "../test/aws/harness";
import type { BenchPaths } from "./cliSync";
import { driveToEnd } from "./cloudDrive";
import { S3_FIRST_BYTE_MS } from "./cloudFinalize";
import { ownCpuSeconds, processCpuSeconds } from "./cloudSync";
import { sameRecords } from "./exactness";
import { finalizeInProcess } from "./finalizeMemory";
import { startHostedSimulator } from "./processes";
import type { SimulatorSpec } from "./scenarios";

export const WORKERS = 10;
const UPSTREAM_LATENCY_MS = 40;

/** One function's cost over a run, as the harness measured its invocations. */
export interface FunctionCost {
  invocations: number;
  messages: number;
  /** Summed handler wall time, ms. */
  handlerMs: number;
  /** Summed CPU time of the containers' threads, ms (libuv's pool, e.g. gzip, not in it). */
  cpuMs: number;
  longestMs: number;
  /**
   * V8 heap in use plus external memory, the most one container held (sampled every 20 ms,
   * garbage included), MiB.
   */
  peakMemoryMiB: number;
  /** Its temporary directory at its largest (polled every 100 ms), bytes. */
  tmpPeakBytes: number;
  /** Its configured limits. */
  memoryMb: number;
  timeoutSeconds: number;
}

export interface ScaleRun {
  users: number;
  teams: number;
  status: string;
  /** The uploaded snapshot has exactly the records a command-line sync of the same tenant writes. */
  exact: boolean | "not checked";
  records: number;
  jobs: number;
  shards: number;
  /** Requests the workers sent upstream (the run's count). */
  upstreamRequests: number;
  /** From `cloud sync` to the run's end, s (wall, on this machine's load). */
  syncSeconds: number;
  worker: FunctionCost;
  finalize: FunctionCost;
  /**
   * Finalize's work on this run's shards again, alone in a process (bench/finalizeProcess.ts),
   * judged by the guard against the digest the run published: its peak RSS (VmHWM, what Lambda
   * reports as memory used) and the most memory live after a full collection, MiB; its CPU, ms
   * (gzip's threads in it, the harness's process not), and its main thread's alone (the part that
   * one vCPU bounds; the rest runs on the thread pool beside it).
   */
  finalizeProcess: {
    peakRssMiB: number;
    livePeakMiB: number;
    cpuMs: number;
    mainCpuMs: number;
    tmpPeakBytes: number;
  };
  /** The functions' AWS requests (the harness's own polling not among them). */
  requests: AwsRequestCounts;
  /** The emulator's and this process's CPU seconds over the run (the load does not change them). */
  cpuSeconds: { emulator: number; harness: number };
  /** The machine's 1-minute load average when the run ended (2 cores). */
  loadAverage: number;
}

export function blacklineShape(users: number): SimulatorSpec {
  return {
    connector: "blackline",
    size: { users, teams: Math.ceil(users / 50), roles: 50, maxTeamsPerUser: 6 },
    upstream: { latencyMs: UPSTREAM_LATENCY_MS },
  };
}

export async function runCloudScale(
  paths: BenchPaths,
  sizes: readonly number[],
  options: { exact: boolean },
): Promise<ScaleRun[]> {
  const { moto, stack } = await startStackOnMoto({
    stage: "bench",
    countAwsRequests: { getDelayMs: S3_FIRST_BYTE_MS },
  });
  const closers: (() => Promise<unknown>)[] = [() => moto.stop(), () => stack.close()];
  const counter = stack.awsRequests as NonNullable<typeof stack.awsRequests>;
  try {
    const platform = await startPlatformSimulator();
    closers.push(() => platform.close());
    const tmp = {
      syncWorker: join(paths.work, "worker-tmp"),
      finalize: join(paths.work, "fin-tmp"),
    };
    for (const [key, dir] of Object.entries(tmp)) {
      await mkdir(dir, { recursive: true });
      await stack.updateEnvironment(key, { TMPDIR: dir });
    }
    const runs = new RunStore(stack.outputs.RunsTableName as string);

    const measured: ScaleRun[] = [];
    for (const users of sizes) {
      const spec = blacklineShape(users);
      const upstream = await startHostedSimulator(paths.simulatorHost, spec);
      try {
        const id = `scale-${users}`;
        const env = { ...upstream.ready.env, ...platform.env() };
        const put = await runOperator(stack, ["put-instance", id, "blackline", "--no-sync"], env);
        if (put.code !== 0) throw new Error(`put-instance: ${put.stderr.trim()}`);
        counter.take();
        const cpuBefore = { emulator: await processCpuSeconds(moto.pid), harness: ownCpuSeconds() };
        const peaks = Object.fromEntries(
          Object.entries(tmp).map(([key, dir]) => [key, watchPeak(dir)]),
        );
        const started = performance.now();
        const sync = await runOperator(stack, ["sync", id]);
        const { syncId } = JSON.parse(sync.stdout.trim().split("\n").at(-1) ?? "{}") as {
          syncId?: string;
        };
        if (!syncId) throw new Error(`cloud sync: ${sync.stderr.trim() || sync.stdout.trim()}`);
        const { worker, finalize } = await driveToEnd(
          stack,
          runs,
          () => [syncId],
          `${users} users`,
        );
        const syncSeconds = (performance.now() - started) / 1000;
        const requests = counter.take();
        const cpuSeconds = {
          emulator: (await processCpuSeconds(moto.pid)) - cpuBefore.emulator,
          harness: ownCpuSeconds() - cpuBefore.harness,
        };
        const tmpPeaks = {
          syncWorker: await peaks.syncWorker?.stop(),
          finalize: await peaks.finalize?.stop(),
        };
        const run = await runs.get(syncId);
        const text = platform.uploads.get(syncId)?.text ?? "";
        const markers = await runs.markers(syncId);
        const shardKeys = markers.flatMap((m) => (m.shardKey ? [m.shardKey] : []));
        const alone = await finalizeInProcess(paths, moto.endpoint, {
          bucket: stack.outputs.ShardsBucketName as string,
          connectorId: id,
          syncId: `${syncId}-again`,
          shardKeys,
          resourceTypes: text
            .split("\n")
            .filter((line) => line.includes('"kind":"resource_type"'))
            .map((line) => JSON.parse(line)),
        });
        const cost = (key: "syncWorker" | "finalize", d: typeof worker): FunctionCost => ({
          invocations: d.invocations,
          messages: d.messages,
          handlerMs: Math.round(d.handlerMs),
          cpuMs: Math.round(d.handlerCpuMs),
          longestMs: Math.round(d.longestMs),
          peakMemoryMiB: Math.round(d.peakMemoryBytes / 1048576),
          tmpPeakBytes: tmpPeaks[key] ?? 0,
          memoryMb: stack.functions[key]?.memoryMb ?? 0,
          timeoutSeconds: stack.functions[key]?.timeoutSeconds ?? 0,
        });
        const result: ScaleRun = {
          users,
          teams: spec.connector === "blackline" ? spec.size.teams : 0,
          status: run?.status ?? "missing",
          exact: options.exact
            ? await sameRecords(paths, spec, text, `scale-${users}`)
            : "not checked",
          records: text.split("\n").filter((line) => line.length > 0).length - 2,
          jobs: run?.jobsDone ?? 0,
          upstreamRequests: run?.requests ?? 0,
          shards: shardKeys.length,
          syncSeconds: Math.round(syncSeconds),
          worker: cost("syncWorker", worker),
          finalize: cost("finalize", finalize),
          finalizeProcess: {
            peakRssMiB: alone.peakRssMiB,
            livePeakMiB: alone.livePeakMiB,
            cpuMs: alone.cpuMs,
            mainCpuMs: alone.mainCpuMs.assembly + alone.mainCpuMs.guard,
            tmpPeakBytes: alone.tmpPeakBytes,
          },
          requests,
          cpuSeconds: {
            emulator: Math.round(cpuSeconds.emulator),
            harness: Math.round(cpuSeconds.harness),
          },
          loadAverage: loadavg()[0] ?? 0,
        };
        process.stdout.write(`${JSON.stringify({ cloudScale: result })}\n`);
        measured.push(result);
      } finally {
        await upstream.stop();
      }
    }
    return measured;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

/** Polls the bytes under `dir` until stopped; resolves with the most seen. */
export function watchPeak(dir: string, everyMs = 100) {
  let peak = 0;
  let stopped = false;
  const poll = (async () => {
    while (!stopped) {
      peak = Math.max(peak, await bytesUnder(dir));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await poll;
      return peak;
    },
  };
}

async function bytesUnder(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    total += await stat(join(entry.parentPath, entry.name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}
