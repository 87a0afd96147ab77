/**
 * `npm run bench -- --cloud-sweep [--instances 10000]`: the scheduler's sweep of the packaged
 * stack on moto_server with that many due instances. Their rows are written straight into the
 * instances table (the sweep reads only the registry), each due by a different time in an order
 * unrelated to the ids; the packaged scheduler is invoked with a scheduled event, warm (a first
 * sweep over an empty registry starts its container). Prints one JSON line; asserts nothing.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { BatchWriteCommand, DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { InstanceRow, SweepAnswer } from "../lib/cloud";
import { awsClientConfig, deployStack, startMoto } from "../test/aws/harness";

export interface SweepMeasure {
  instances: number;
  /** The invoke of the warm scheduler, from the event sent to the answer back, ms. */
  sweepMs: number;
  /** Against the scheduler's timeout, ms. */
  timeoutMs: number;
  starts: number;
  left: number;
  failed: number;
  /** Messages on the instance-checks queue after the sweep. */
  queued: number;
  /** Whether `starts` came most overdue first. */
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
      const answer = await stack.invoke<SweepAnswer>("scheduler", SCHEDULED);
      const sweepMs = performance.now() - started;
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
      const measure: SweepMeasure = {
        instances,
        sweepMs: Math.round(sweepMs),
        timeoutMs: (stack.functions.scheduler?.timeoutSeconds ?? 0) * 1000,
        starts: answer.starts.length,
        left: answer.left.length,
        failed: answer.failed.length,
        queued: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
        mostOverdueFirst: answer.starts.every((id, n) => id === byDue[n]),
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
