import { setTimeout as sleep } from "node:timers/promises";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { RateLimitedError } from "../http";
import { awsClients } from "./clients";

/** A request waits this long for a permit at most; then its job goes back to the queue. */
const MAX_PERMIT_WAIT_MS = 10_000;
const SHARED_RATE = { method: "GET", path: "(the instance's shared request rate)" } as const;

import { isConditionFailure } from "./instances";

/**
 * The instance's request rate, shared by every worker of its runs: a fixed one-second window
 * counter in the runs table (`pk = rate#<connectorId>`, `sk = <epoch second>`). A request takes
 * a permit by adding one to the current second's count while it is below the limit; when the
 * second is full, it waits for the next. One conditional write per upstream request buys a
 * limit that holds across any number of concurrent workers. Windows expire by TTL.
 */
export function sharedRatePermit(
  table: string,
  connectorId: string,
  requestsPerSecond: number | undefined,
): ((signal?: AbortSignal) => Promise<void>) | undefined {
  if (!requestsPerSecond) return undefined;
  const limit = Math.max(1, Math.floor(requestsPerSecond));
  return async (signal) => {
    const started = Date.now();
    for (;;) {
      const now = Date.now();
      const second = Math.floor(now / 1000);
      try {
        await awsClients().dynamo.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: `rate#${connectorId}`, sk: String(second) },
            UpdateExpression: "ADD n :one SET expiresAt = :expires",
            ConditionExpression: "attribute_not_exists(n) OR n < :limit",
            ExpressionAttributeValues: { ":one": 1, ":limit": limit, ":expires": second + 120 },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Many workers share a small rate: hand the job back to the queue rather than wait.
        if (Date.now() - started > MAX_PERMIT_WAIT_MS) {
          throw new RateLimitedError(SHARED_RATE, MAX_PERMIT_WAIT_MS);
        }
        // Spread the waiters over the first part of the next second.
        await sleep((second + 1) * 1000 - now + Math.random() * 100, undefined, { signal });
      }
    }
  };
}
