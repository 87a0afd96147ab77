/**
 * One BlackLine sync through the cloud runtime on moto_server, with test/aws's harness: the
 * packaged stack deployed, the instance registered with the operator command, the scheduler
 * invoked, and the packaged worker and finalize handlers fed from the real queues the way Lambda
 * feeds them (moto cannot run Lambda code): up to each mapping's maximum concurrency of
 * invocations at once (10 workers), warm containers reused. The functions' AWS requests pass
 * the harness's counting proxy, which holds S3 GETs 40 ms (S3's first byte). The upstream simulator
 * runs in a process of its own; the upload is compared with a command-line sync of the same
 * tenant (bench/exactness.ts).
 */
import { readFile } from "node:fs/promises";
import { RunStore } from "../lib/cloud";
import { startPlatformSimulator } from "../lib/simulators/platform";
import {
  type AwsRequestCounts,
  runOperator,
  type Stack,
  startStackOnMoto,
} from "../test/aws/harness";
import {
  type AwsCost,
  awsCost,
  LAMBDA_ARM64_USD_PER_GB_SECOND,
  LAMBDA_USD_PER_REQUEST,
} from "./awsPrices";
import type { BenchPaths } from "./cliSync";
import { driveToEnd } from "./cloudDrive";
import { S3_FIRST_BYTE_MS } from "./cloudFinalize";
import { sameRecords } from "./exactness";
import { startHostedSimulator } from "./processes";
import type { Scenario } from "./scenarios";
import type { MinimumRequests, SimulatorStats } from "./simulatorHost";

/** Lambda on arm64 (us-east-1): per GB-second of handler time, and per request. */

export interface CloudRun {
  ok: boolean;
  /** From `cloud sync` to the end of finalize. */
  syncMs: number;
  requests: number;
  server: SimulatorStats;
  minimum: MinimumRequests;
  records: number;
  /** The upload has exactly the records of a command-line sync of the same tenant. */
  exact: boolean;
  jobs: number;
  messages: number;
  shards: number;
  invocations: { scheduler: number; syncWorker: number; finalize: number };
  /** The most worker invocations at once, and the worker containers started (cold starts). */
  workerConcurrency: { peak: number; containers: number };
  handlerMs: { scheduler: number; syncWorker: number; finalize: number };
  memoryMb: { scheduler: number; syncWorker: number; finalize: number };
  gbSeconds: number;
  lambdaUsd: number;
  /**
   * CPU time of the run, whatever the machine's load: the emulator (moto_server, one request at a
   * time) and this process (the harness and the handlers' containers, threads of it).
   */
  cpuSeconds: { emulator: number; harness: number };
  /** What the functions asked of AWS during the run (counted at the harness's proxy). */
  aws: AwsRequestCounts;
  /** Their cost at list prices (bench/awsPrices.ts), with the poller's receives and deletes. */
  awsUsd: AwsCost;
  error?: string;
}

/** What a bench adds to a cloud run: after the deploy and the instance, before the sync. */
export interface CloudSyncHooks {
  deployed?(stack: Stack): Promise<void>;
  /** Settings of the instance beside the upstream's (`CONNECTOR_..._REQUESTS_PER_SECOND`). */
  instanceEnv?: Record<string, string>;
}

export async function runCloudSync(
  scenario: Scenario,
  paths: BenchPaths,
  hooks: CloudSyncHooks = {},
): Promise<CloudRun> {
  const { moto, stack } = await startStackOnMoto({
    stage: "bench",
    countAwsRequests: { getDelayMs: S3_FIRST_BYTE_MS },
  });
  const closers: (() => Promise<unknown>)[] = [() => moto.stop(), () => stack.close()];
  try {
    const platform = await startPlatformSimulator();
    closers.push(() => platform.close());
    const upstream = await startHostedSimulator(paths.simulatorHost, scenario.simulator);
    let server: SimulatorStats | undefined;
    closers.push(async () => {
      server ??= await upstream.stop();
    });

    const operator = (argv: string[], env: Record<string, string> = {}) =>
      runOperator(stack, argv, env);

    const env = { ...upstream.ready.env, ...platform.env(), ...hooks.instanceEnv };
    const put = await operator(["put-instance", "bench", "blackline", "--no-sync"], env);
    if (put.code !== 0) throw new Error(`put-instance: ${put.stderr.trim()}`);
    await hooks.deployed?.(stack);

    stack.awsRequests?.take();
    const cpuBefore = { emulator: await processCpuSeconds(moto.pid), harness: ownCpuSeconds() };
    const started = performance.now();
    const schedulerStarted = performance.now();
    const sync = await operator(["sync", "bench"]);
    const schedulerMs = performance.now() - schedulerStarted;
    const { syncId } = JSON.parse(sync.stdout.trim().split("\n").at(-1) ?? "{}") as {
      syncId?: string;
    };
    if (!syncId) throw new Error(`cloud sync: ${sync.stderr.trim() || sync.stdout.trim()}`);
    const runs = new RunStore(stack.outputs.RunsTableName as string);
    const { worker, finalize } = await driveToEnd(stack, runs, () => [syncId], scenario.name);
    const syncMs = performance.now() - started;
    const cpuSeconds = {
      emulator: (await processCpuSeconds(moto.pid)) - cpuBefore.emulator,
      harness: ownCpuSeconds() - cpuBefore.harness,
    };
    server = await upstream.stop();
    const aws = stack.awsRequests?.take() as AwsRequestCounts;

    const run = await runs.get(syncId);
    const shards = (await runs.markers(syncId)).filter((m) => m.shardKey).length;
    const text = platform.uploads.get(syncId)?.text ?? "";
    const records = text.split("\n").filter((line) => line.length > 0).length - 2;
    const memoryMb = memoryOf(stack);
    const handlerMs = {
      scheduler: schedulerMs,
      syncWorker: worker.handlerMs,
      finalize: finalize.handlerMs,
    };
    const invocations = {
      scheduler: 1,
      syncWorker: worker.invocations,
      finalize: finalize.invocations,
    };
    const gbSeconds = (Object.keys(handlerMs) as (keyof typeof handlerMs)[]).reduce(
      (sum, key) => sum + (handlerMs[key] / 1000) * (memoryMb[key] / 1024),
      0,
    );
    const invocationCount = invocations.scheduler + invocations.syncWorker + invocations.finalize;
    const exact =
      run?.status === "complete" &&
      (await sameRecords(paths, scenario.simulator, text, scenario.name));
    const ok = exact && records > 0;
    return {
      ok,
      syncMs,
      requests: run?.requests ?? 0,
      server,
      minimum: upstream.ready.minimum,
      records,
      exact,
      jobs: run?.jobsDone ?? 0,
      messages: worker.messages,
      shards,
      invocations,
      workerConcurrency: { peak: worker.peakConcurrency, containers: worker.containers },
      handlerMs,
      memoryMb,
      gbSeconds,
      cpuSeconds,
      aws,
      // Lambda's poller: a receive and a delete for each batch it delivered.
      awsUsd: awsCost(aws, 2 * (worker.invocations + finalize.invocations)),
      lambdaUsd:
        gbSeconds * LAMBDA_ARM64_USD_PER_GB_SECOND + invocationCount * LAMBDA_USD_PER_REQUEST,
      ...(ok
        ? {}
        : {
            error: `run ${run?.status ?? "missing"}${exact ? "" : ", not exact"}: ${[...worker.errors, ...finalize.errors].slice(0, 3).join(" | ")}`,
          }),
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

/** User and system CPU seconds of a process so far (Linux: /proc/<pid>/stat, in clock ticks). */
export async function processCpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

/** This process's CPU seconds, every thread (the handlers' containers are worker threads). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

function memoryOf(stack: Stack) {
  return {
    scheduler: stack.functions.scheduler?.memoryMb ?? 0,
    syncWorker: stack.functions.syncWorker?.memoryMb ?? 0,
    finalize: stack.functions.finalize?.memoryMb ?? 0,
  };
}
