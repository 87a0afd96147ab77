/**
 * The capacity model of issue 37: from the runs bench/cloudScale.ts measured, each figure carried
 * to 1,000,000 and 10,000,000 users and to 1,000 and 10,000 tenants, printed as a table whose
 * every row says whether it was measured or projected and how. Projections are linear in what
 * grows: jobs and shards per user and the functions' costs per job and per shard from the largest
 * run, finalize's time and memory fitted through the runs (a line through the two largest).
 *
 * List prices, us-east-1, as cited in docs/pending/cloudscale.md: S3 Standard PUT/LIST $0.005
 * and GET $0.0004 per 1,000 requests; DynamoDB on-demand $0.625 per million write request units
 * and $0.125 per million read request units (a transactional write costs 2); SQS $0.40 per
 * million requests (each 64 KiB a request) plus $0.10 per million on a fair queue; Lambda on Arm
 * $0.0000133334 per GB-second and $0.20 per million requests.
 */
import type { FunctionCost, ScaleRun } from "./cloudScale";

const PRICE = {
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  dynamoWrite: 0.625 / 1e6,
  dynamoRead: 0.125 / 1e6,
  sqs: (0.4 + 0.1) / 1e6,
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
};
/** DynamoDB's documented ceiling for one partition: 1,000 write units a second. */
const PARTITION_WRITE_UNITS_PER_SECOND = 1000;
const WORKERS_AT_ONCE = 10;
const HOUR_SECONDS = 3600;
const SMALL_TENANT_USERS = 500;
const MEAN_TENANT_USERS = 10_000;

export interface Row {
  figure: string;
  values: string[];
  limit: string;
  how: string;
}

/** Requests of one run, by what they cost. */
function requestClasses(run: ScaleRun) {
  const ops = run.requests.byOperation;
  const sum = (pattern: RegExp) =>
    Object.entries(ops)
      .filter(([name]) => pattern.test(name))
      .reduce((total, [, n]) => total + n, 0);
  // Lambda's poller on AWS: a receive and a delete a batch, for the worker's and finalize's queues.
  const pollerSqs = 2 * (run.worker.invocations + run.finalize.invocations);
  const dynamoWriteUnits = run.requests.dynamoItemsWritten + run.requests.dynamoTransactionItems;
  return {
    s3Put: sum(/^s3:(Put|List|Post|Copy)/),
    s3Get: sum(/^s3:(Get|Head)/),
    dynamoWriteUnits,
    dynamoReads: sum(/^dynamodb:(GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/),
    sqs: run.requests.sqsBilledRequests + pollerSqs,
  };
}

function lambdaUsd(cost: FunctionCost) {
  return (
    (cost.handlerMs / 1000) * (cost.memoryMb / 1024) * PRICE.lambdaGbSecond +
    cost.invocations * PRICE.lambdaRequest
  );
}

/** A line through (x1, y1) and (x2, y2), or through the origin and the one point there is. */
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

export function capacityRows(measured: readonly ScaleRun[]): { sizes: string[]; rows: Row[] } {
  const runs = [...measured].sort((a, b) => a.users - b.users);
  const last = runs.at(-1);
  if (!last) return { sizes: [], rows: [] };
  const targets = [1_000_000, 10_000_000];
  const sizes = [
    ...runs.map((r) => `${n(r.users)} (measured)`),
    ...targets.map((u) => `${n(u)} (projected)`),
  ];

  const jobsPerUser = last.jobs / last.users;
  const shardsPerUser = last.shards / last.users;
  const workerMsPerJob = last.worker.handlerMs / last.jobs;
  const workerCpuPerJob = last.worker.cpuMs / last.jobs;
  const finalizeMs = lineThrough(runs.map((r) => [r.shards, r.finalize.handlerMs]));
  const finalizeCpu = lineThrough(runs.map((r) => [r.shards, r.finalize.cpuMs]));
  const finalizeMemory = lineThrough(runs.map((r) => [r.users, r.finalize.peakMemoryMiB]));
  const tmpBytes = lineThrough(runs.map((r) => [r.users, r.finalize.tmpPeakBytes]));
  const perUser = (r: ScaleRun) => {
    const c = requestClasses(r);
    return {
      s3: (c.s3Put + c.s3Get) / r.users,
      dynamoWriteUnits: c.dynamoWriteUnits / r.users,
      sqs: c.sqs / r.users,
      usd:
        (c.s3Put * PRICE.s3Put +
          c.s3Get * PRICE.s3Get +
          c.dynamoWriteUnits * PRICE.dynamoWrite +
          c.dynamoReads * PRICE.dynamoRead +
          c.sqs * PRICE.sqs +
          lambdaUsd(r.worker) +
          lambdaUsd(r.finalize)) /
        r.users,
    };
  };
  const lastPerUser = perUser(last);
  const hottestPerJob = (last.requests.hottestKey?.writes ?? 0) / last.jobs;
  const jobsPerSecond = WORKERS_AT_ONCE / (workerMsPerJob / 1000);

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
      figure: "worker: wall / CPU per job, ms",
      values: at(
        (r) => `${n(r.worker.handlerMs / r.jobs)} / ${n(r.worker.cpuMs / r.jobs)}`,
        () => `${n(workerMsPerJob)} / ${n(workerCpuPerJob)}`,
      ),
      limit: "",
      how: "handler time over jobs; a job's cost does not grow with the tenant",
    },
    {
      figure: "worker: longest invocation, s",
      values: at(
        (r) => n(r.worker.longestMs / 1000, 1),
        () => n(last.worker.longestMs / 1000, 1),
      ),
      limit: `${last.worker.timeoutSeconds} s timeout`,
      how: "a batch of 10 jobs; flat in the tenant's size",
    },
    {
      figure: "worker: peak memory, MiB",
      values: at(
        (r) => n(r.worker.peakMemoryMiB),
        () => n(last.worker.peakMemoryMiB),
      ),
      limit: `${last.worker.memoryMb} MB`,
      how: "V8 heap + external of a container, sampled every 20 ms (Lambda adds the runtime's ~40 MB)",
    },
    {
      figure: "run's worker time at 10 at once, min",
      values: at(
        (r) => n(r.worker.handlerMs / WORKERS_AT_ONCE / 60_000, 1),
        (u) => n((u * jobsPerUser * workerMsPerJob) / WORKERS_AT_ONCE / 60_000, 1),
      ),
      limit: "60 min interval",
      how: "worker handler time over the mapping's maximum concurrency (10)",
    },
    {
      figure: "finalize: wall / CPU, s",
      values: at(
        (r) => `${n(r.finalize.handlerMs / 1000, 1)} / ${n(r.finalize.cpuMs / 1000, 1)}`,
        (u) =>
          `${n(finalizeMs(u * shardsPerUser) / 1000, 1)} / ${n(finalizeCpu(u * shardsPerUser) / 1000, 1)}`,
      ),
      limit: `${last.finalize.timeoutSeconds} s timeout`,
      how: "measured with S3 GETs held 40 ms; projected on a line through the runs, by shards",
    },
    {
      figure: "finalize: peak memory, MiB",
      values: at(
        (r) => n(r.finalize.peakMemoryMiB),
        (u) => n(finalizeMemory(u)),
      ),
      limit: `${last.finalize.memoryMb} MB`,
      how: "V8 heap + external, sampled; projected on a line through the runs, by users",
    },
    {
      figure: "finalize: /tmp, MB",
      values: at(
        (r) => n(r.finalize.tmpPeakBytes / 1e6, 1),
        (u) => n(tmpBytes(u) / 1e6, 0),
      ),
      limit: "10,240 MB ephemeral storage",
      how: "its TMPDIR polled every 100 ms; projected on a line through the runs",
    },
    {
      figure: "S3 / DynamoDB write units / SQS requests per user",
      values: at(
        (r) => {
          const p = perUser(r);
          return `${n(p.s3, 3)} / ${n(p.dynamoWriteUnits, 3)} / ${n(p.sqs, 3)}`;
        },
        () =>
          `${n(lastPerUser.s3, 3)} / ${n(lastPerUser.dynamoWriteUnits, 3)} / ${n(lastPerUser.sqs, 3)}`,
      ),
      limit: "",
      how: "counted at the wire (bench/delayingProxy.ts); SQS adds Lambda's poller, a receive and a delete a batch",
    },
    {
      figure: "writes per second on the run's partition key",
      values: at(
        (r) => `${n(r.requests.hottestKey?.mostInOneSecond ?? 0)} (most in 1 s)`,
        () => `${n(jobsPerSecond * hottestPerJob)} at 10 workers`,
      ),
      limit: `${n(PARTITION_WRITE_UNITS_PER_SECOND)} WCU/s a partition`,
      how: "the most-written key's writes per job times the jobs 10 workers finish a second",
    },
    {
      figure: "cost of one sync, USD",
      values: at(
        (r) => usd(perUser(r).usd * r.users),
        (u) => usd(lastPerUser.usd * u),
      ),
      limit: "target $0.10 at 1M",
      how: "requests and Lambda GB-seconds at list prices (bench/capacity.ts)",
    },
  ];
  return { sizes, rows };
}

/** Many tenants on one stage, all due in the same sweep: the stage's hour and a small tenant's wait. */
export function tenantRows(measured: readonly ScaleRun[]): Row[] {
  const last = [...measured].sort((a, b) => a.users - b.users).at(-1);
  if (!last) return [];
  const workerMsPerJob = last.worker.handlerMs / last.jobs;
  const jobsPerUser = last.jobs / last.users;
  const jobsOf = (users: number) => Math.max(3, users * jobsPerUser);
  return [1_000, 10_000].map((tenants) => {
    const stageMinutes =
      (tenants * jobsOf(MEAN_TENANT_USERS) * workerMsPerJob) / WORKERS_AT_ONCE / 60_000;
    // Fair queues serve every tenant with work alike, so a small one gets 1/tenants of the workers.
    const smallWaitMinutes =
      (jobsOf(SMALL_TENANT_USERS) * tenants * workerMsPerJob) / WORKERS_AT_ONCE / 60_000;
    const workersForTheHour = Math.ceil(
      (tenants * jobsOf(MEAN_TENANT_USERS) * workerMsPerJob) / 1000 / HOUR_SECONDS,
    );
    return {
      figure: `${n(tenants)} tenants of ${n(MEAN_TENANT_USERS)} users`,
      values: [
        `stage's work ${n(stageMinutes)} min at 10 workers`,
        `a ${SMALL_TENANT_USERS}-user tenant waits ${n(Math.min(smallWaitMinutes, stageMinutes))} min`,
        `${n(workersForTheHour)} workers at once to sync all hourly`,
      ],
      limit: "60 min interval",
      how: "projected from the worker's measured time per job; fair queues share workers evenly",
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
