/**
 * The capacity model of issue 37: from the runs bench/cloudScale.ts measured, each figure carried
 * to 1,000,000 and 10,000,000 users and to 1,000 and 10,000 tenants, printed as a table whose
 * every row says whether it was measured or projected and how. Projections are linear in what
 * grows: jobs and shards per user and the functions' costs per job and per shard from the largest
 * run, finalize's time and memory fitted through the runs (a line through the two largest).
 * The cost is the counted requests at the list prices of bench/awsPrices.ts.
 */
import {
  awsCost,
  LAMBDA_ARM64_USD_PER_GB_SECOND,
  LAMBDA_USD_PER_REQUEST,
  s3RequestClasses,
} from "./awsPrices";
import type { ScaleRun } from "./cloudScale";

/** DynamoDB's documented ceiling for one partition: 1,000 write units a second. */
const PARTITION_WRITE_UNITS_PER_SECOND = 1000;
/**
 * Round trips on AWS, for a wall time that this loaded machine cannot show: the upstream's
 * latency in these runs, S3's first byte, and DynamoDB, SQS and Secrets Manager in
 * single-digit milliseconds. Summed as if one after another: an upper bound.
 */
const UPSTREAM_MS = 40;
const S3_MS = 40;
const AWS_API_MS = 10;
const WORKERS_AT_ONCE = 10;
const BATCH = 10;
const SHARD_READS_IN_FLIGHT = 32;
/**
 * Lambda gives a function CPU in proportion to its memory, one vCPU at 1,769 MB (AWS Lambda
 * Developer Guide, "Configuring Lambda function memory"), and up to 6 at 10,240 MB.
 */
const ONE_VCPU_MB = 1769;
const HOUR_SECONDS = 3600;
const SMALL_TENANT_USERS = 500;
const MEAN_TENANT_USERS = 10_000;

export interface Row {
  figure: string;
  values: string[];
  limit: string;
  how: string;
}

/** What one run cost, per job, per shard and per user, from its counts. */
function perUnit(run: ScaleRun) {
  const counts = run.requests;
  const sum = (byOperation: Record<string, number>) =>
    Object.values(byOperation).reduce((total, n) => total + n, 0);
  const { put: s3Put, get: s3Get } = s3RequestClasses(counts);
  // Lambda's poller on AWS: a receive and a delete a batch, for the worker's and finalize's queues.
  const pollerRequests = 2 * (run.worker.invocations + run.finalize.invocations);
  const otherAws =
    sum(counts.dynamodb) + sum(counts.sqs) - (counts.sqs.billed ?? 0) + sum(counts.other);
  const sqs = (counts.sqs.billed ?? 0) + pollerRequests;
  // A job's wall on AWS: its CPU and its round trips (S3 GETs are finalize's).
  const jobMs =
    (run.worker.cpuMs +
      run.upstreamRequests * UPSTREAM_MS +
      s3Put * S3_MS +
      otherAws * AWS_API_MS) /
    run.jobs;
  const finalizeMs =
    finalizeOnAws(run.finalizeProcess, run.finalize.memoryMb) +
    (s3Get * S3_MS) / SHARD_READS_IN_FLIGHT;
  const gbSeconds =
    ((jobMs * run.jobs) / 1000) * (run.worker.memoryMb / 1024) +
    (finalizeMs / 1000) * (run.finalize.memoryMb / 1024);
  const requests = awsCost(counts, pollerRequests);
  const usd = {
    s3: requests.s3,
    dynamodb: requests.dynamodb,
    sqs: requests.sqs,
    secrets: requests.secrets,
    lambda:
      gbSeconds * LAMBDA_ARM64_USD_PER_GB_SECOND +
      (run.worker.invocations + run.finalize.invocations) * LAMBDA_USD_PER_REQUEST,
  };
  return {
    jobMs,
    finalizeMs,
    s3Gets: s3Get,
    perUser: {
      s3: (s3Put + s3Get) / run.users,
      dynamoRequests: sum(counts.dynamodb) / run.users,
      dynamoWriteUnits: counts.dynamodbUnits.write / run.users,
      sqs: sqs / run.users,
      usd: Object.fromEntries(
        Object.entries(usd).map(([service, value]) => [service, value / run.users]),
      ) as typeof usd,
    },
  };
}

/**
 * Finalize's CPU as wall ms on Lambda at `memoryMb`, which gives it `memoryMb / 1,769` vCPUs: its
 * main thread runs on one vCPU at most, the thread pool's work (gzip, the spool's compression,
 * file writes) beside it, so the wall is the longer of the main thread's CPU over its share of a
 * vCPU and all the CPU over all the vCPUs.
 */
function finalizeOnAws(cpu: { cpuMs: number; mainCpuMs: number }, memoryMb: number): number {
  const vcpus = Math.max(memoryMb, 1) / ONE_VCPU_MB;
  return Math.max(cpu.mainCpuMs / Math.min(1, vcpus), cpu.cpuMs / vcpus);
}

/** The AWS requests' cost (without Lambda's, which the cost row says apart). */
const requestsUsd = (usd: { s3: number; dynamodb: number; sqs: number; secrets: number }) =>
  usd.s3 + usd.dynamodb + usd.sqs + usd.secrets;

/** A line through the two last points, or through the origin and the one point there is. */
function lineThrough(points: [number, number][]) {
  const [a, b] = points.slice(-2);
  if (!a) return (_x: number) => Number.NaN;
  if (!b || b[0] === a[0]) return (x: number) => (a[1] / a[0]) * x;
  const slope = (b[1] - a[1]) / (b[0] - a[0]);
  return (x: number) => a[1] + slope * (x - a[0]);
}

const n = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits,
      })
    : "-";
const usd = (value: number) => `$${value.toFixed(value < 0.01 ? 4 : 3)}`;

type PerUser = ReturnType<typeof perUnit>["perUser"];
const perUserRequests = (p: PerUser) =>
  `${n(p.s3, 4)} / ${n(p.dynamoRequests, 3)}, ${n(p.dynamoWriteUnits, 3)} / ${n(p.sqs, 4)}`;

/** A sync's cost for `users`: the requests' parts and sum, then Lambda's apart. */
function syncCost(c: PerUser["usd"], users: number): string {
  const requests = `${usd(c.s3 * users)} + ${usd(c.dynamodb * users)} + ${usd(c.sqs * users)} + ${usd(c.secrets * users)} = ${usd(requestsUsd(c) * users)}`;
  return `${requests}; Lambda ${usd(c.lambda * users)}; in all ${usd((requestsUsd(c) + c.lambda) * users)}`;
}

export function capacityRows(measured: readonly ScaleRun[]): { sizes: string[]; rows: Row[] } {
  const runs = [...measured].sort((a, b) => a.users - b.users);
  const last = runs.at(-1);
  if (!last) return { sizes: [], rows: [] };
  const targets = [1_000_000, 10_000_000];
  const sizes = [
    ...runs.map((r) => `${n(r.users)} (measured)`),
    ...targets.map((u) => `${n(u)} (projected)`),
  ];

  const lastUnit = perUnit(last);
  const jobsPerUser = last.jobs / last.users;
  const shardsPerUser = last.shards / last.users;
  // By users, not shards: a finalize's CPU is its records', and shards' size changes with the jobs.
  const finalizeCpu = lineThrough(runs.map((r) => [r.users, r.finalizeProcess.cpuMs]));
  const finalizeMainCpu = lineThrough(runs.map((r) => [r.users, r.finalizeProcess.mainCpuMs]));
  const finalizeRss = lineThrough(runs.map((r) => [r.users, r.finalizeProcess.peakRssMiB]));
  const finalizeLive = lineThrough(runs.map((r) => [r.users, r.finalizeProcess.livePeakMiB]));
  // Finalize's /tmp alone in a process: the harness's finalize shares its directory with nothing,
  // but polls it in a busier process; both are in the table.
  const tmpBytes = lineThrough(runs.map((r) => [r.users, r.finalizeProcess.tmpPeakBytes]));
  const getsPerShard = lastUnit.s3Gets / last.shards;
  const finalizeAwsMs = (users: number) =>
    finalizeOnAws(
      { cpuMs: finalizeCpu(users), mainCpuMs: finalizeMainCpu(users) },
      last.finalize.memoryMb,
    ) +
    (users * shardsPerUser * getsPerShard * S3_MS) / SHARD_READS_IN_FLIGHT;
  const hottestPerJob = last.requests.dynamodbMostWritesPerKey / last.jobs;

  const at = (measuredValue: (r: ScaleRun) => string, projected: (users: number) => string) => [
    ...runs.map(measuredValue),
    ...targets.map(projected),
  ];
  const rows: Row[] = [
    {
      figure: "jobs / shards",
      values: at(
        (r) => `${n(r.jobs)} / ${n(r.shards)}`,
        (u) => `${n(u * jobsPerUser)} / ${n(u * shardsPerUser)}`,
      ),
      limit: "",
      how: "measured: the run's count; projected: per user of the largest run",
    },
    {
      figure: "worker: CPU per job, ms",
      values: at(
        (r) => n(r.worker.cpuMs / r.jobs),
        () => n(last.worker.cpuMs / last.jobs),
      ),
      limit: "",
      how: "the containers' thread CPU over jobs; a job's cost does not grow with the tenant",
    },
    {
      figure: "worker: wall per job, ms",
      values: at(
        (r) => `${n(r.worker.handlerMs / r.jobs)} here, ${n(perUnit(r).jobMs)} on AWS`,
        () => `${n(lastUnit.jobMs)} on AWS`,
      ),
      limit: "",
      how: `here: measured at the machine's load; on AWS: projected, CPU + round trips (upstream ${UPSTREAM_MS} ms, S3 ${S3_MS} ms, other AWS ${AWS_API_MS} ms) one after another`,
    },
    {
      figure: "worker: longest invocation, s",
      values: at(
        (r) => `${n(r.worker.longestMs / 1000, 1)} here`,
        () => `${n((BATCH * lastUnit.jobMs) / 1000, 1)} on AWS`,
      ),
      limit: `${last.worker.timeoutSeconds} s timeout`,
      how: "a batch of 10 jobs; on AWS at most 10 jobs' wall one after another; flat in the tenant",
    },
    {
      figure: "worker: peak memory, MiB",
      values: at(
        (r) => n(r.worker.peakMemoryMiB),
        () => n(last.worker.peakMemoryMiB),
      ),
      limit: `${last.worker.memoryMb} MB`,
      how: "V8 heap + external of a container, sampled every 20 ms (Lambda adds the runtime's own tens of MB)",
    },
    {
      figure: "a run's worker time at 10 at once, min",
      values: at(
        (r) => n((r.jobs * perUnit(r).jobMs) / WORKERS_AT_ONCE / 60_000, 1),
        (u) => n((u * jobsPerUser * lastUnit.jobMs) / WORKERS_AT_ONCE / 60_000, 1),
      ),
      limit: "60 min interval",
      how: "jobs times the wall per job on AWS, over the mapping's maximum concurrency (10)",
    },
    {
      figure: "finalize: wall here / CPU, main thread's / wall on AWS, s",
      values: at(
        (r) =>
          `${n(r.finalize.handlerMs / 1000, 1)} / ${n(r.finalizeProcess.cpuMs / 1000, 1)}, ${n(r.finalizeProcess.mainCpuMs / 1000, 1)} / ${n(perUnit(r).finalizeMs / 1000, 1)}`,
        (u) =>
          `- / ${n(finalizeCpu(u) / 1000, 0)}, ${n(finalizeMainCpu(u) / 1000, 0)} / ${n(finalizeAwsMs(u) / 1000, 0)}`,
      ),
      limit: `${last.finalize.timeoutSeconds} s timeout (a quarter: 225 s)`,
      how: `CPU of finalize's work alone in a process (the thread pool's gzip and spool compression in it) and of its main thread, on a line through the two largest runs by users; on AWS at ${n(last.finalize.memoryMb)} MB (${n(last.finalize.memoryMb / ONE_VCPU_MB, 1)} vCPUs, 1 at ${n(ONE_VCPU_MB)} MB): the longer of the main thread's CPU on one vCPU and all the CPU over all of them, + one 40 ms GET a shard, ${SHARD_READS_IN_FLIGHT} in flight`,
    },
    {
      figure: "finalize: peak RSS / live peak, MiB",
      values: at(
        (r) => `${n(r.finalizeProcess.peakRssMiB)} / ${n(r.finalizeProcess.livePeakMiB)}`,
        (u) => `${n(finalizeRss(u))} / ${n(finalizeLive(u))}`,
      ),
      limit: `${last.finalize.memoryMb} MB`,
      how: "finalize's work on the run's shards again, alone in a process (bench/finalizeProcess.ts), judged against the run's digest: VmHWM (Lambda's memory used; Node's own ~120 MiB in it) and V8 heap + external after a full collection each second (which can miss the peak); projected on a line through the two largest runs, by users, which below 1,000,000 users mostly measures noise over Node's own: --finalize-memory carries it further",
    },
    {
      figure: "finalize: /tmp, MB",
      values: at(
        (r) =>
          `${n(r.finalize.tmpPeakBytes / 1e6, 1)} / ${n(r.finalizeProcess.tmpPeakBytes / 1e6, 1)}`,
        (u) => `- / ${n(tmpBytes(u) / 1e6, 0)}`,
      ),
      limit: "10,240 MB ephemeral storage (half: 5,120)",
      how: "its TMPDIR at its largest, polled every 100 ms in the run / every 20 ms alone in a process; projected on a line through the runs alone",
    },
    {
      figure: "per user: S3 requests / DynamoDB requests, write units / SQS requests",
      values: at(
        (r) => perUserRequests(perUnit(r).perUser),
        () => perUserRequests(lastUnit.perUser),
      ),
      limit: "",
      how: "counted at the wire (test/aws/harness/awsRequests.ts); SQS: billed requests (64 KiB each) and Lambda's poller, a receive and a delete a batch",
    },
    {
      figure: "writes a second on the run's partition key",
      values: at(
        (r) => `${n(r.requests.dynamodbMostWritesPerKeyInOneSecond)} most in 1 s here`,
        () =>
          `${n(((WORKERS_AT_ONCE * 1000) / lastUnit.jobMs) * hottestPerJob)} at 10 workers on AWS`,
      ),
      limit: `${n(PARTITION_WRITE_UNITS_PER_SECOND)} WCU/s a partition`,
      how: "the most-written key's writes per job times the jobs 10 workers finish a second on AWS",
    },
    {
      figure: "cost of one sync: requests (S3 + DynamoDB + SQS + Secrets Manager); Lambda, USD",
      values: at(
        (r) => syncCost(perUnit(r).perUser.usd, r.users),
        (u) => syncCost(lastUnit.perUser.usd, u),
      ),
      limit: "target: $0.10 at 1M",
      how: "counted requests at list prices (bench/awsPrices.ts); Lambda GB-seconds from the wall on AWS",
    },
  ];
  return { sizes, rows };
}

/** Many tenants on one stage, all due in the same sweep: the stage's hour and a small tenant's wait. */
export function tenantRows(measured: readonly ScaleRun[]): Row[] {
  const last = [...measured].sort((a, b) => a.users - b.users).at(-1);
  if (!last) return [];
  const { jobMs } = perUnit(last);
  const jobsPerUser = last.jobs / last.users;
  const jobsOf = (users: number) => Math.max(3, users * jobsPerUser);
  return [1_000, 10_000].map((tenants) => {
    const stageMs = tenants * jobsOf(MEAN_TENANT_USERS) * jobMs;
    // Fair queues serve every tenant with work alike, so a small one gets 1/tenants of the workers.
    const smallWaitMs = jobsOf(SMALL_TENANT_USERS) * tenants * jobMs;
    return {
      figure: `${n(tenants)} tenants of ${n(MEAN_TENANT_USERS)} users, all due at once`,
      values: [
        `the stage's work ${n(stageMs / WORKERS_AT_ONCE / 60_000)} min at 10 workers`,
        `a ${SMALL_TENANT_USERS}-user tenant waits ${n(Math.min(smallWaitMs, stageMs) / WORKERS_AT_ONCE / 60_000)} min`,
        `${n(Math.ceil(stageMs / 1000 / HOUR_SECONDS))} workers at once would sync all hourly`,
      ],
      limit: "60 min interval",
      how: "projected from the wall per job on AWS; fair queues share the workers evenly",
    };
  });
}

export function renderCapacity(measured: readonly ScaleRun[]): string {
  const { sizes, rows } = capacityRows(measured);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const table = [
    line(["figure", ...sizes, "limit", "how"]),
    line(["---", ...sizes.map(() => "---:"), "---", "---"]),
    ...rows.map((r) => line([r.figure, ...r.values, r.limit, r.how])),
  ];
  const tenants = tenantRows(measured).map(
    (r) => `- ${r.figure}: ${r.values.join("; ")} (${r.how}).`,
  );
  return [...table, "", ...tenants, ""].join("\n");
}
