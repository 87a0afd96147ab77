import { setTimeout as sleep } from "node:timers/promises";
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { awsClients } from "./clients";

/** Tries of a batch whose items DynamoDB left unprocessed (throttled) before it throws. */
const ATTEMPTS = 5;

/**
 * Writes puts and deletes to one table, 25 to a batch, retrying what DynamoDB leaves unprocessed
 * with a doubling pause; throws when some are still left after `ATTEMPTS` tries.
 */
export async function batchWrite(
  table: string,
  writes: readonly Record<string, unknown>[],
  what: string,
): Promise<void> {
  for (let i = 0; i < writes.length; i += 25) {
    let requests: Record<string, unknown>[] | undefined = writes.slice(i, i + 25);
    for (let attempt = 1; requests && requests.length > 0; attempt++) {
      if (attempt > ATTEMPTS) throw new Error(`DynamoDB did not accept ${what}`);
      const { UnprocessedItems } = await awsClients().dynamo.send(
        new BatchWriteCommand({ RequestItems: { [table]: requests } }),
      );
      requests = UnprocessedItems?.[table] as Record<string, unknown>[] | undefined;
      if (requests?.length) await sleep(50 * 2 ** attempt);
    }
  }
}
