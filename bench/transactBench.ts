/**
 * One DynamoDB TransactWriteItems on the AWS tier's emulator (test/aws/harness's moto_server) as
 * the table grows: the cost that decides how far a test can carry a run. The transaction is a
 * job's commit (lib/cloud/aws/runs.ts): two conditional updates in one partition of a table of
 * `items` items; one that commits and one whose condition fails (the rollback path).
 */
import {
  BatchWriteItemCommand,
  DynamoDBClient,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import { awsClientConfig, createPkSkTable, startMoto } from "../test/aws/harness";

export interface TransactTiming {
  items: number;
  /** Median of `samples` committed transactions, ms. */
  committedMs: number;
  /** Median of `samples` cancelled transactions (a condition failed), ms. */
  cancelledMs: number;
  samples: number;
}

const SAMPLES = 15;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export async function measureTransactions(sizes: readonly number[]): Promise<TransactTiming[]> {
  const moto = await startMoto();
  const dynamo = new DynamoDBClient(awsClientConfig(moto.endpoint));
  try {
    const results: TransactTiming[] = [];
    for (const items of sizes) {
      const table = `transact-${items}`;
      await createPkSkTable(dynamo, table);
      for (let i = 0; i < items; i += 25) {
        const puts = Array.from({ length: Math.min(25, items - i) }, (_, j) => ({
          PutRequest: {
            Item: {
              pk: { S: `run#${(i + j) % 10}` },
              sk: { S: `job#${i + j}` },
              state: { S: "pending" },
            },
          },
        }));
        await dynamo.send(new BatchWriteItemCommand({ RequestItems: { [table]: puts } }));
      }
      const commit = (n: number, expected: string) =>
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: { pk: { S: "run#0" }, sk: { S: `job#${n * 10}` } },
                UpdateExpression: "SET #state = :done",
                ConditionExpression: "#state = :expected",
                ExpressionAttributeNames: { "#state": "state" },
                ExpressionAttributeValues: { ":done": { S: "done" }, ":expected": { S: expected } },
              },
            },
            {
              Update: {
                TableName: table,
                Key: { pk: { S: "run#0" }, sk: { S: "run" } },
                UpdateExpression: "ADD outstanding :minus",
                ExpressionAttributeValues: { ":minus": { N: "-1" } },
              },
            },
          ],
        });
      const timed = async (command: TransactWriteItemsCommand) => {
        const t0 = performance.now();
        await dynamo.send(command).catch((error: { name?: string }) => {
          if (error.name !== "TransactionCanceledException") throw error;
        });
        return performance.now() - t0;
      };
      const committed: number[] = [];
      const cancelled: number[] = [];
      for (let n = 0; n < SAMPLES; n++) {
        committed.push(await timed(commit(n, "pending")));
        cancelled.push(await timed(commit(n, "pending")));
      }
      results.push({
        items,
        committedMs: median(committed),
        cancelledMs: median(cancelled),
        samples: SAMPLES,
      });
    }
    return results;
  } finally {
    dynamo.destroy();
    await moto.stop();
  }
}
