/**
 * `npm run bench -- --cloud-sweep [--instances 10000]`: the scheduler's sweep of the packaged
 * stack on moto_server with that many due instances. Their rows are written straight into the
 * instances table (the sweep reads only the registry), each due by a different time in an order
 * unrelated to the ids; the packaged scheduler is invoked with a scheduled event, warm (a first
 * sweep over an empty registry starts its container), under its own 60 s timeout. moto's Scan
 * is the slow part here (one request at a time, seconds a 1 MB page), so the same sweep runs
 * once more in this process without a deadline, to time its sends at that size too. Prints one
 * JSON line; asserts nothing.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type InstanceRow, loadCloudConfig, type SweepAnswer, schedule } from "../lib/cloud";
import { silentLogger } from "../lib/logging";
import { awsClientConfig, awsEnv, deployStack, type Stack, startMoto } from "../test/aws/harness";

/** What the sweep logs when it ends (lib/cloud/scheduler.ts). */
interface SweepCounts {
  instances: number;
  starts: number;
  left: number;
  failed: number;
  /** Reading the registry (Scan), ms. */
  listMs: number;
  /** Sending the checks, ms. */
  sendMs: number;
}

export interface SweepMeasure {
  instances: number;
  /** Against the scheduler's timeout, ms. */
  timeoutMs: number;
  /** The packaged scheduler: the invoke of the warm container, from the event to the answer, ms. */
  invokeMs: number;
  lambda: SweepCounts | { error: string };
  /** The same sweep in this process, no deadline. */
  inProcess: SweepCounts;
  /** Messages on the instance-checks queue after both (ten instances a message). */
  queued: number;
  /** Whether the in-process sweep sent the due instances most overdue first. */
  mostOverdueFirst: boolean;
}

const SCHEDULED = { "detail-type": "Scheduled Event", source: "aws.events", detail: {} };

export async function runSweepBench(instances: number): Promise<SweepMeasure> {
  const moto = await startMoto();
  try {
    const stack = await deployStack(moto, { stage: "bench" });
    try {
      await stack.invoke("scheduler", SCHEDULED);
      const rows = dueRows(instances);
      await writeRows(moto.endpoint, stack.outputs.InstancesTableName as string, rows);
      const started = performance.now();
      const lambda = await stack.invoke<SweepAnswer>("scheduler", SCHEDULED).then(
        () => loggedCounts(stack),
        (error: unknown) => ({ error: String(error) }),
      );
      const invokeMs = performance.now() - started;
      Object.assign(process.env, awsEnv(moto.endpoint));
      const config = loadCloudConfig({ ...stack.functions.scheduler?.environment });
      let inProcess: SweepCounts | undefined;
      const logger = {
        ...silentLogger,
        info: (message: string, fields?: Record<string, unknown>) => {
          if (message === "sweep done") inProcess = fields as unknown as SweepCounts;
        },
      };
      const answer = (await schedule(
        SCHEDULED,
        config,
        { logger, count: () => {}, duration: () => {} },
        Number.POSITIVE_INFINITY,
      )) as SweepAnswer;
      const sqs = new SQSClient({
        ...awsClientConfig(moto.endpoint),
        useQueueUrlAsEndpoint: false,
      });
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.outputs.InstanceChecksQueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      sqs.destroy();
      const byDue = [...rows]
        .sort(
          (a, b) =>
            Date.parse(a.lastSuccessStartedAt ?? "") - Date.parse(b.lastSuccessStartedAt ?? ""),
        )
        .map((row) => row.connectorId);
      if (!inProcess) throw new Error("the in-process sweep logged no counts");
      const measure: SweepMeasure = {
        instances,
        timeoutMs: (stack.functions.scheduler?.timeoutSeconds ?? 0) * 1000,
        invokeMs: Math.round(invokeMs),
        lambda,
        inProcess,
        queued: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
        mostOverdueFirst:
          answer.starts.length === instances && answer.starts.every((id, n) => id === byDue[n]),
      };
      process.stdout.write(`${JSON.stringify({ sweep: measure })}\n`);
      return measure;
    } finally {
      await stack.close();
    }
  } finally {
    await moto.stop();
  }
}

/** The counts the packaged scheduler's last sweep logged. */
function loggedCounts(stack: Stack): SweepCounts {
  for (const { line } of stack.logs("scheduler").reverse()) {
    if (!line.includes("sweep")) continue;
    const parsed = JSON.parse(line) as Partial<SweepCounts> & { message?: string };
    if (parsed.message?.startsWith("sweep")) return parsed as SweepCounts;
  }
  throw new Error("the scheduler logged no sweep");
}

/** Rows all due, each last synced a different number of minutes past its hourly interval. */
function dueRows(count: number): InstanceRow[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, n) => {
    // A permutation of 0..count-1 unrelated to the id's order (count is not a multiple of 7919).
    const minutesLate = ((n * 7919) % count) + 1;
    const started = new Date(now - 3_600_000 - minutesLate * 60_000).toISOString();
    return {
      connectorId: `sweep-${String(n).padStart(6, "0")}`,
      connector: "blackline",
      intervalSeconds: 3600,
      label: "connected",
      lastSyncStatus: "complete",
      lastSyncAt: started,
      lastSuccessStartedAt: started,
      updatedAt: started,
    };
  });
}

async function writeRows(endpoint: string, table: string, rows: readonly InstanceRow[]) {
  const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(endpoint)));
  try {
    for (let i = 0; i < rows.length; i += 25) {
      const { UnprocessedItems } = await dynamo.send(
        new BatchWriteCommand({
          RequestItems: {
            [table]: rows.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
          },
        }),
      );
      if (Object.keys(UnprocessedItems ?? {}).length > 0) throw new Error("rows left unwritten");
    }
  } finally {
    dynamo.destroy();
  }
}
