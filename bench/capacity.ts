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
import type { ScaleRun } from "./cloudScale";

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
  const ops = run.requests.byOperation;
  const sum = (pattern: RegExp) =>
    Object.entries(ops)
      .filter(([name]) => pattern.test(name))
      .reduce((total, [, count]) => total + count, 0);
  const s3Put = sum(/^s3:(Put|List|Post|Copy)/);
  const s3Get = sum(/^s3:(Get|Head)/);
  const otherAws = sum(/^(dynamodb|sqs|secretsmanager):/);
  const dynamoWriteUnits = run.requests.dynamoItemsWritten + run.requests.dynamoTransactionItems;
  const dynamoReads = sum(/^dynamodb:(GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/);
  // Lambda's poller on AWS: a receive and a delete a batch, for the worker's and finalize's queues.
  const sqs =
    run.requests.sqsBilledRequests + 2 * (run.worker.invocations + run.finalize.invocations);
  // A job's wall on AWS: its CPU and its round trips (S3 GETs are finalize's).
  const jobMs =
    (run.worker.cpuMs +
      run.upstreamRequests * UPSTREAM_MS +
      s3Put * S3_MS +
      otherAws * AWS_API_MS) /
    run.jobs;
  const finalizeMs = run.finalize.cpuMs + (s3Get * S3_MS) / SHARD_READS_IN_FLIGHT;
  const gbSeconds =
    ((jobMs * run.jobs) / 1000) * (run.worker.memoryMb / 1024) +
    (finalizeMs / 1000) * (run.finalize.memoryMb / 1024);
  const usd = {
    s3: s3Put * PRICE.s3Put + s3Get * PRICE.s3Get,
    dynamodb: dynamoWriteUnits * PRICE.dynamoWrite + dynamoReads * PRICE.dynamoRead,
    sqs: sqs * PRICE.sqs,
    lambda:
      gbSeconds * PRICE.lambdaGbSecond +
      (run.worker.invocations + run.finalize.invocations) * PRICE.lambdaRequest,
  };
  return {
    jobMs,
    finalizeMs,
    s3Gets: s3Get,
    perUser: {
      s3: (s3Put + s3Get) / run.users,
      dynamoWriteUnits: dynamoWriteUnits / run.users,
      sqs: sqs / run.users,
      usd: {
        s3: usd.s3 / run.users,
        dynamodb: usd.dynamodb / run.users,
        sqs: usd.sqs / run.users,
        lambda: usd.lambda / run.users,
      },
    },
  };
}

const total = (usd: { s3: number; dynamodb: number; sqs: number; lambda: number }) =>
  usd.s3 + usd.dynamodb + usd.sqs + usd.lambda;

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
  const finalizeCpu = lineThrough(runs.map((r) => [r.shards, r.finalize.cpuMs]));
  const finalizeMemory = lineThrough(runs.map((r) => [r.users, r.finalize.peakMemoryMiB]));
  const tmpBytes = lineThrough(runs.map((r) => [r.users, r.finalize.tmpPeakBytes]));
  const getsPerShard = lastUnit.s3Gets / last.shards;
  const finalizeAwsMs = (shards: number) =>
    finalizeCpu(shards) + (shards * getsPerShard * S3_MS) / SHARD_READS_IN_FLIGHT;
  const hottestPerJob = (last.requests.hottestKey?.writes ?? 0) / last.jobs;

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
      figure: "finalize: wall here / CPU / wall on AWS, s",
      values: at(
        (r) =>
          `${n(r.finalize.handlerMs / 1000, 1)} / ${n(r.finalize.cpuMs / 1000, 1)} / ${n(perUnit(r).finalizeMs / 1000, 1)}`,
        (u) =>
          `- / ${n(finalizeCpu(u * shardsPerUser) / 1000, 0)} / ${n(finalizeAwsMs(u * shardsPerUser) / 1000, 0)}`,
      ),
      limit: `${last.finalize.timeoutSeconds} s timeout (a quarter: 225 s)`,
      how: `CPU of its thread (gzip on libuv's pool not in it), on a line through the runs by shards; on AWS: CPU + one 40 ms GET a shard, ${SHARD_READS_IN_FLIGHT} in flight`,
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
      limit: "10,240 MB ephemeral storage (half: 5,120)",
      how: "its TMPDIR polled every 100 ms; projected on a line through the runs",
    },
    {
      figure: "S3 requests / DynamoDB write units / SQS requests, per user",
      values: at(
        (r) => {
          const p = perUnit(r).perUser;
          return `${n(p.s3, 3)} / ${n(p.dynamoWriteUnits, 3)} / ${n(p.sqs, 3)}`;
        },
        () => {
          const p = lastUnit.perUser;
          return `${n(p.s3, 3)} / ${n(p.dynamoWriteUnits, 3)} / ${n(p.sqs, 3)}`;
        },
      ),
      limit: "",
      how: "counted at the wire (bench/delayingProxy.ts); SQS adds Lambda's poller, a receive and a delete a batch",
    },
    {
      figure: "writes a second on the run's partition key",
      values: at(
        (r) => `${n(r.requests.hottestKey?.mostInOneSecond ?? 0)} most in 1 s here`,
        () =>
          `${n(((WORKERS_AT_ONCE * 1000) / lastUnit.jobMs) * hottestPerJob)} at 10 workers on AWS`,
      ),
      limit: `${n(PARTITION_WRITE_UNITS_PER_SECOND)} WCU/s a partition`,
      how: "the most-written key's writes per job times the jobs 10 workers finish a second on AWS",
    },
    {
      figure: "cost of one sync: S3 + DynamoDB + SQS + Lambda = USD",
      values: at(
        (r) => {
          const c = perUnit(r).perUser.usd;
          return `${usd(c.s3 * r.users)} + ${usd(c.dynamodb * r.users)} + ${usd(c.sqs * r.users)} + ${usd(c.lambda * r.users)} = ${usd(total(c) * r.users)}`;
        },
        (u) => {
          const c = lastUnit.perUser.usd;
          return `${usd(c.s3 * u)} + ${usd(c.dynamodb * u)} + ${usd(c.sqs * u)} + ${usd(c.lambda * u)} = ${usd(total(c) * u)}`;
        },
      ),
      limit: "target: $0.10 at 1M",
      how: "counted requests at list prices; Lambda GB-seconds from the wall on AWS (bench/capacity.ts)",
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
