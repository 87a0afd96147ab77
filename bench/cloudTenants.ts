/**
 * Two tenants on one cloud stage (`npm run bench -- --tenants`): a small BlackLine instance's
 * run alone, then again while a large instance's run has a backlog on the shared queue, through
 * the packaged stack on moto_server with the harness's workers (10 at once, the mapping's maximum
 * concurrency). Each instance has its own upstream simulator, in a process of its own. Besides the
 * small run's wall time it sums its jobs' time on the queue, in the worker and on the CPU, alone
 * and beside, so a ratio can be split into waiting for a worker and the machine's 2 shared cores.
 * Measures; asserts nothing.
 */
import { loadavg } from "node:os";
import type { SQSRecord } from "aws-lambda";
import { RunStore } from "../lib/cloud";
import type { TenantSize } from "../lib/simulators/blackline";
import { startPlatformSimulator } from "../lib/simulators/platform";
import { runOperator, startStackOnMoto } from "../test/aws/harness";
import type { InvocationCost } from "../test/aws/harness/lambda";
import type { BenchPaths } from "./cliSync";
import { driveToEnd, runEnded } from "./cloudDrive";
import { ownCpuSeconds, processCpuSeconds } from "./cloudSync";
import { startHostedSimulator } from "./processes";

/** What a run's job deliveries spent, summed over them: waiting on the queue, and in the worker. */
export interface JobTimes {
  deliveries: number;
  /** From each message's send to its receive (SQS's dwell time), s. */
  queueSeconds: number;
  /** The invocations' handler wall time, s (one job an invocation at batch size 1). */
  handlerSeconds: number;
  /** The invocations' thread CPU, s: the same work alone and beside; what the wall adds is waiting. */
  cpuSeconds: number;
  /**
   * Each delivery (the run's jobs, then finalize's), s from the run's start: sent, received,
   * answered, and its CPU; where the run's time goes on its critical path.
   */
  steps: { what: string; sent: number; received: number; ended: number; cpu: number }[];
}

export interface TenantsRun {
  large: {
    users: number;
    jobs: number;
    seconds: number;
    backlogAtSmallStart: number;
    /** Its deliveries held for its cap of jobs in flight (the worker's `jobsHeld`). */
    held: number;
  };
  small: {
    users: number;
    jobs: number;
    aloneSeconds: number;
    togetherSeconds: number;
    alone: JobTimes;
    together: JobTimes;
  };
  /** The small run's time beside the large one over its time alone (the target: at most 2). */
  ratio: number;
  invocations: number;
  peakConcurrency: number;
  cpuSeconds: { emulator: number; harness: number };
  /** The machine's 1-minute load average at the start of the small run alone and at the end (2 cores). */
  loadAverage: { alone: number; end: number };
}

const LATENCY_MS = 40;

const noTimes = (): JobTimes => ({
  deliveries: 0,
  queueSeconds: 0,
  handlerSeconds: 0,
  cpuSeconds: 0,
  steps: [],
});

/**
 * Notes each delivery's queue wait, handler time and CPU under its run (the drains' hooks): the
 * worker's jobs in the sums and the steps, finalize's in the steps only.
 */
function jobTimesByRun() {
  const byRun = new Map<string, JobTimes>();
  // Steps in epoch ms until read, when they are taken from the run's start.
  const received = new Map<string, JobTimes["steps"][number]>();
  const of = (record: SQSRecord) => {
    const { syncId } = JSON.parse(record.body) as { syncId: string };
    let times = byRun.get(syncId);
    if (!times) {
      times = noTimes();
      byRun.set(syncId, times);
    }
    return times;
  };
  const hooksFor = (jobs: boolean) => ({
    onBatch: (records: SQSRecord[]) => {
      const at = Date.now();
      for (const record of records) {
        const times = of(record);
        const sentAt = Number(record.attributes.SentTimestamp);
        const body = JSON.parse(record.body) as { resourceType?: string; op?: string };
        const step = {
          what: jobs ? `${body.resourceType}/${body.op}` : "finalize",
          sent: sentAt,
          received: at,
          ended: Number.NaN,
          cpu: Number.NaN,
        };
        times.steps.push(step);
        received.set(record.receiptHandle, step);
        if (!jobs) continue;
        times.deliveries++;
        times.queueSeconds += (at - sentAt) / 1000;
      }
    },
    onInvoked: (records: SQSRecord[], cost: InvocationCost) => {
      // A batch's cost is its records' together: each is given an equal part.
      for (const record of records) {
        const times = of(record);
        const step = received.get(record.receiptHandle);
        if (step) {
          step.ended = Date.now();
          step.cpu = cost.cpuMs / 1000 / records.length;
        }
        if (!jobs) continue;
        times.handlerSeconds += cost.ms / 1000 / records.length;
        times.cpuSeconds += cost.cpuMs / 1000 / records.length;
      }
    },
  });
  return {
    worker: hooksFor(true),
    finalize: hooksFor(false),
    /** The run's times, its steps in seconds from `startedAt` (epoch ms). */
    of: (syncId: string, startedAt: number): JobTimes => {
      const times = byRun.get(syncId) ?? noTimes();
      const since = (ms: number) => Math.round(ms - startedAt) / 1000;
      const steps = times.steps.map((step) => ({
        ...step,
        sent: since(step.sent),
        received: since(step.received),
        ended: since(step.ended),
      }));
      return { ...times, steps };
    },
  };
}

/**
 * The small run starts once the large one has this many jobs outstanding: twice the 10 workers,
 * so jobs wait on the queue. With coarse jobs a 50,000-user run has only ~35 jobs in all, so a
 * larger mark would be reached never, and the small run would start after the large one ended.
 */
const BACKLOG = 20;

export async function runCloudTenants(
  paths: BenchPaths,
  sizes: { large: TenantSize; small: TenantSize },
): Promise<TenantsRun> {
  const { moto, stack } = await startStackOnMoto({ stage: "bench" });
  const closers: (() => Promise<unknown>)[] = [() => moto.stop(), () => stack.close()];
  try {
    const runs = new RunStore(stack.outputs.RunsTableName as string);
    for (const [connectorId, size] of Object.entries(sizes)) {
      const upstream = await startHostedSimulator(paths.simulatorHost, {
        connector: "blackline",
        size,
        upstream: { latencyMs: LATENCY_MS },
      });
      closers.push(() => upstream.stop());
      const platform = await startPlatformSimulator();
      closers.push(() => platform.close());
      const env = { ...upstream.ready.env, ...platform.env() };
      const put = await runOperator(
        stack,
        ["put-instance", connectorId, "blackline", "--no-sync"],
        env,
      );
      if (put.code !== 0) throw new Error(`put-instance ${connectorId}: ${put.stderr.trim()}`);
    }
    const sync = async (connectorId: string) => {
      const { stdout, stderr } = await runOperator(stack, ["sync", connectorId]);
      const { syncId } = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
        syncId?: string;
      };
      if (!syncId) throw new Error(`cloud sync ${connectorId}: ${stderr.trim()}`);
      return syncId;
    };
    const ended = (syncId: string) => runEnded(runs, syncId);
    const timeToEnd = async (syncId: string, startedMs: number) => {
      while (!(await ended(syncId))) await new Promise((r) => setTimeout(r, 200));
      return (performance.now() - startedMs) / 1000;
    };

    // Alone (its containers warm afterwards, as they are beside the large run).
    const loadAlone = loadavg()[0] ?? 0;
    const aloneStarted = performance.now();
    const aloneAt = Date.now();
    const aloneId = await sync("small");
    const times = jobTimesByRun();
    await driveToEnd(stack, runs, () => [aloneId], "small alone", times.worker, times.finalize);
    const aloneSeconds = (performance.now() - aloneStarted) / 1000;

    // Together: the small run starts once the large run's backlog is on the queue.
    const cpuBefore = { emulator: await processCpuSeconds(moto.pid), harness: ownCpuSeconds() };
    const largeStarted = performance.now();
    const largeId = await sync("large");
    // Until the small run is started, the drains go on even if the large one has ended.
    let watched: string[] | undefined;
    const draining = driveToEnd(
      stack,
      runs,
      () => watched,
      "large, then small beside it",
      times.worker,
      times.finalize,
    );
    let backlog = 0;
    while (backlog < BACKLOG && !(await ended(largeId))) {
      backlog = (await runs.get(largeId))?.outstanding ?? 0;
      await new Promise((r) => setTimeout(r, 200));
    }
    const smallStarted = performance.now();
    const smallAt = Date.now();
    const smallId = await sync("small");
    watched = [largeId, smallId];
    const togetherSeconds = await timeToEnd(smallId, smallStarted);
    process.stderr.write(
      `bench: the small run ended ${togetherSeconds.toFixed(1)} s after its start (alone ${aloneSeconds.toFixed(1)} s): ${(togetherSeconds / aloneSeconds).toFixed(2)} x\n`,
    );
    const { worker } = await draining;
    const largeSeconds = (performance.now() - largeStarted) / 1000;
    const [large, small] = [await runs.get(largeId), await runs.get(smallId)];
    return {
      large: {
        users: sizes.large.users,
        jobs: large?.jobsDone ?? 0,
        seconds: largeSeconds,
        backlogAtSmallStart: backlog,
        held: stack
          .logs("syncWorker")
          .filter(({ line }) => line.includes("cap of jobs in flight") && line.includes(largeId))
          .length,
      },
      small: {
        users: sizes.small.users,
        jobs: small?.jobsDone ?? 0,
        aloneSeconds,
        togetherSeconds,
        alone: times.of(aloneId, aloneAt),
        together: times.of(smallId, smallAt),
      },
      ratio: togetherSeconds / aloneSeconds,
      invocations: worker.invocations,
      peakConcurrency: worker.peakConcurrency,
      cpuSeconds: {
        emulator: (await processCpuSeconds(moto.pid)) - cpuBefore.emulator,
        harness: ownCpuSeconds() - cpuBefore.harness,
      },
      loadAverage: { alone: loadAlone, end: loadavg()[0] ?? 0 },
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}
