import { setTimeout as sleep } from "node:timers/promises";
import { BatchGetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { ConnectorError, messageOf } from "../../errors";
import { awsClients } from "./clients";
import { type RunItem, runItem } from "./runItem";

/**
 * The runs table's index of run items by instance (infra/storage.yml): `connectorId` and
 * `startedAt`, keys only, so a job's commit (which changes only counts) never writes to it.
 * Markers and rate windows carry no `startedAt` and stay out of it.
 */
export const RUNS_BY_CONNECTOR_INDEX = "byConnector";
/** BatchGetItem's most keys a call; `cloud runs --limit` stops here. */
export const MAX_RUN_HISTORY = 100;

const indexKey = z.object({ pk: z.string(), sk: z.string() });

/**
 * The last `limit` runs of an instance, newest first: the index's keys, newest first (a Query
 * that reads backwards), then the run items themselves. Runs are kept 14 days (`expiresAt`).
 */
export async function recentRuns(
  table: string,
  connectorId: string,
  limit: number,
): Promise<RunItem[]> {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUN_HISTORY) {
    throw new RangeError(`limit ${limit}: a whole number from 1 to ${MAX_RUN_HISTORY}`);
  }
  const { Items } = await awsClients()
    .dynamo.send(
      new QueryCommand({
        TableName: table,
        IndexName: RUNS_BY_CONNECTOR_INDEX,
        KeyConditionExpression: "connectorId = :id",
        ExpressionAttributeValues: { ":id": connectorId },
        ScanIndexForward: false,
        Limit: limit,
      }),
    )
    .catch((error: unknown) => {
      // A stage deployed before the index: say what to do instead of DynamoDB's words.
      if ((error as { name?: string }).name === "ValidationException") {
        throw new ConnectorError(
          `the runs table ${table} cannot list runs by instance (${messageOf(error)}); deploy this version of the stage (serverless deploy), which adds its ${RUNS_BY_CONNECTOR_INDEX} index`,
        );
      }
      throw error;
    });
  const keys = (Items ?? []).map((item) => indexKey.parse(item));
  const runs: RunItem[] = [];
  let pending: Record<string, unknown>[] = keys.map(({ pk, sk }) => ({ pk, sk }));
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 5) throw new Error(`DynamoDB did not return the runs of ${connectorId}`);
    if (attempt > 1) await sleep(50 * 2 ** attempt);
    const { Responses, UnprocessedKeys } = await awsClients().dynamo.send(
      new BatchGetCommand({ RequestItems: { [table]: { Keys: pending } } }),
    );
    for (const item of Responses?.[table] ?? []) runs.push(runItem.parse(item));
    pending = (UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
  }
  // A run that expired between the two reads is left out; the rest in the index's order.
  return runs.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
