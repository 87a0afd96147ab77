import { setTimeout as sleep } from "node:timers/promises";
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { awsClients } from "./clients";
import { expiresAt, markerKey, runKey } from "./runKeys";

/** Tries of a job's commit when other commits on the run's item conflict with it. */
const COMMIT_ATTEMPTS = 4;
/**
 * The most children one commit claims: a DynamoDB transaction names at most 100 items, two of
 * them the job's marker and the run's item. A sync worker's chain of pages stops well before it
 * (docs/cloud.md, "Jobs").
 */
export const MAX_CHILDREN_PER_COMMIT = 98;

export type CommitOutcome = "committed" | "already_done" | "run_over";

/** A child job as its marker holds it: its id, and the job itself (to send it again if need be). */
export interface ChildClaim {
  jobId: string;
  job: string;
}

export interface DoneJob {
  /** The job's records in S3; none when the job read no records. */
  shardKey?: string;
  records: number;
  requests: number;
  children: readonly ChildClaim[];
}

/**
 * Commits a job in one conditional transaction, so a job's result is committed once and whole:
 * its marker from pending to done (with its shard), the run's outstanding count moved by its
 * children minus itself while the run is running, and a pending marker for each child nobody
 * asked for yet, owned by this job and holding the child. A child another job owns (the upstream
 * listed it twice) cancels the transaction; it is dropped (that job counts and sends it) and the
 * rest committed. Returns the outcome and the children this job owns.
 */
export async function commitJob(
  table: string,
  syncId: string,
  jobId: string,
  done: DoneJob,
): Promise<{ outcome: CommitOutcome; owned: ChildClaim[] }> {
  let children = uniqueChildren(jobId, done.children);
  if (children.length > MAX_CHILDREN_PER_COMMIT) {
    throw new Error(
      `a job of run ${syncId} asks for ${children.length} children; one commit claims at most ${MAX_CHILDREN_PER_COMMIT}`,
    );
  }
  for (let attempt = 1; ; attempt++) {
    try {
      await awsClients().dynamo.send(transaction(table, syncId, jobId, done, children));
      return { outcome: "committed", owned: children };
    } catch (error) {
      if ((error as { name?: string }).name !== "TransactionCanceledException") throw error;
      const reasons = (
        (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []
      ).map((r) => r.Code);
      // Cancelled: the job was committed by another delivery, the run is over, a child is owned
      // by another job, or another transaction on the run's item conflicted.
      if (reasons[0] === "ConditionalCheckFailed") return { outcome: "already_done", owned: [] };
      if (reasons[1] === "ConditionalCheckFailed") return { outcome: "run_over", owned: [] };
      const taken = new Set(
        children.filter((_, i) => reasons[i + 2] === "ConditionalCheckFailed").map((c) => c.jobId),
      );
      children = children.filter((c) => !taken.has(c.jobId));
      if (taken.size > 0) continue;
      if (attempt >= COMMIT_ATTEMPTS) throw error;
      await sleep(Math.random() * 50 * 2 ** attempt);
    }
  }
}

/** One claim a child id, never the job itself (a transaction names an item once). */
function uniqueChildren(jobId: string, children: readonly ChildClaim[]): ChildClaim[] {
  const seen = new Set([jobId]);
  return children.filter((c) => !seen.has(c.jobId) && seen.add(c.jobId));
}

function transaction(
  table: string,
  syncId: string,
  jobId: string,
  done: DoneJob,
  children: readonly ChildClaim[],
): TransactWriteCommand {
  const now = new Date().toISOString();
  const shard = done.shardKey === undefined ? "" : ", shardKey = :shard";
  return new TransactWriteCommand({
    TransactItems: [
      {
        Update: {
          TableName: table,
          Key: markerKey(syncId, jobId),
          UpdateExpression: `SET #state = :done, records = :records, childrenSent = :sent${shard}`,
          ConditionExpression: "#state = :pending",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":done": "done",
            ":pending": "pending",
            ":records": done.records,
            // Nothing to send: a later delivery has nothing to look for.
            ":sent": children.length === 0,
            ...(done.shardKey === undefined ? {} : { ":shard": done.shardKey }),
          },
        },
      },
      {
        Update: {
          TableName: table,
          Key: runKey(syncId),
          UpdateExpression:
            "ADD outstanding :delta, jobsDone :one, records :records, requests :requests SET lastProgressAt = :now",
          ConditionExpression: "#status = :running",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":delta": children.length - 1,
            ":one": 1,
            ":records": done.records,
            ":requests": done.requests,
            ":now": now,
            ":running": "running",
          },
        },
      },
      ...children.map((child) => ({
        Put: {
          TableName: table,
          Item: {
            ...markerKey(syncId, child.jobId),
            jobId: child.jobId,
            state: "pending",
            owner: jobId,
            job: child.job,
            expiresAt: expiresAt(),
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      })),
    ],
  });
}
