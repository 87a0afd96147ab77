import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { batchWrite } from "./batchWrite";
import { awsClients } from "./clients";
import { sendConditional } from "./instances";
import { type ChildClaim, type CommitOutcome, commitJob, type DoneJob } from "./jobCommit";
import { type JobMarker, jobMarker, type RunItem, runItem } from "./runItem";
import { expiresAt, markerKey, runKey } from "./runKeys";

/**
 * The state of sync runs in DynamoDB. Per run, one item (`sk = run`) counts the jobs still
 * outstanding, and one marker per job (`sk = job#<id>`) says who asked for the job (its owner)
 * and, once done, where its shard is. A job is committed by one conditional transaction
 * (`commitJob`): its marker goes from pending to done, its children's markers are written pending,
 * and the run's count moves by its new children minus one. A redelivered message or a second
 * worker finds the marker done and changes nothing, so a job counts once however often it is
 * delivered; the run is complete when the count reaches zero.
 */
/** A finalizer holds a run this long; longer than the finalize function's timeout (900 s). */
export const FINALIZE_LEASE_SECONDS = 1_200;
/** Finalize tries of a run before it ends `error`. */
export const FINALIZE_ATTEMPTS = 3;

export type { ChildClaim, CommitOutcome } from "./jobCommit";

export class RunStore {
  readonly #table: string;

  constructor(table: string) {
    this.#table = table;
  }

  /** Records a new run with its root jobs pending. */
  async open(run: {
    syncId: string;
    connectorId: string;
    connector: string;
    rootJobIds: readonly string[];
  }): Promise<void> {
    const now = new Date().toISOString();
    const item: RunItem = {
      syncId: run.syncId,
      connectorId: run.connectorId,
      connector: run.connector,
      status: "running",
      outstanding: run.rootJobIds.length,
      jobsDone: 0,
      records: 0,
      requests: 0,
      startedAt: now,
      lastProgressAt: now,
    };
    await awsClients().dynamo.send(
      new PutCommand({
        TableName: this.#table,
        Item: { ...runKey(run.syncId), ...item, expiresAt: expiresAt() },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    const markers = run.rootJobIds.map((jobId) => ({
      PutRequest: {
        Item: {
          ...markerKey(run.syncId, jobId),
          jobId,
          state: "pending",
          owner: "root",
          expiresAt: expiresAt(),
        },
      },
    }));
    await batchWrite(this.#table, markers, `the root jobs of ${run.syncId}`);
  }

  async get(syncId: string): Promise<RunItem | undefined> {
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({ TableName: this.#table, Key: runKey(syncId), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : runItem.parse(Item);
  }

  async marker(syncId: string, jobId: string): Promise<JobMarker | undefined> {
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({
        TableName: this.#table,
        Key: markerKey(syncId, jobId),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : jobMarker.parse(Item);
  }

  /** Commits a job, its children claimed, in one transaction (`commitJob`). */
  async commit(
    syncId: string,
    jobId: string,
    done: DoneJob,
  ): Promise<{ outcome: CommitOutcome; owned: ChildClaim[] }> {
    return commitJob(this.#table, syncId, jobId, done);
  }

  /**
   * The run's jobs are moving (one started, or was handed back to move again at `at`): its stall
   * clock, `lastProgressAt`, goes forward to `at`, never back, while the run is running.
   */
  async heartbeat(syncId: string, at: string): Promise<void> {
    await sendConditional(
      new UpdateCommand({
        TableName: this.#table,
        Key: runKey(syncId),
        UpdateExpression: "SET lastProgressAt = :at",
        ConditionExpression: "#status = :running AND lastProgressAt < :at",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":at": at, ":running": "running" },
      }),
    );
  }

  /** Notes that the children of a done job are on the queue. */
  async markChildrenSent(syncId: string, jobId: string): Promise<void> {
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: markerKey(syncId, jobId),
        UpdateExpression: "SET childrenSent = :yes",
        ExpressionAttributeValues: { ":yes": true },
      }),
    );
  }

  /**
   * Adds upstream requests and 429 answers of a delivery of one of the run's jobs that did not
   * commit it (a commit adds its own requests), and the 429s of every delivery: `cloud runs`
   * shows them.
   */
  async countUpstream(syncId: string, count: { requests: number; refused: number }): Promise<void> {
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: runKey(syncId),
        UpdateExpression: "ADD requests :requests, upstream429s :refused",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":requests": count.requests, ":refused": count.refused },
      }),
    );
  }

  /** Notes that a finalize message was sent for the run. */
  async markFinalizeRequested(syncId: string): Promise<void> {
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: runKey(syncId),
        UpdateExpression: "SET finalizeRequested = :yes",
        ExpressionAttributeValues: { ":yes": true },
      }),
    );
  }

  /** Ends a running or finalizing run with `error`; true when this call ended it. */
  async fail(syncId: string, reason: string): Promise<boolean> {
    return this.#transition(syncId, ["running", "finalizing"], {
      status: "error",
      error: reason,
      finishedAt: new Date().toISOString(),
    });
  }

  /** Ends a finalizing run `held` by the mass-deletion guard; true when this call ended it. */
  async hold(syncId: string, reason: string): Promise<boolean> {
    return this.#transition(syncId, ["finalizing"], {
      status: "held",
      error: reason,
      finishedAt: new Date().toISOString(),
    });
  }

  /** A held run whose snapshot was released and published: complete. */
  async release(syncId: string): Promise<boolean> {
    return this.#transition(syncId, ["held"], { status: "complete" });
  }

  /**
   * Takes the run for finalizing: a running run with nothing outstanding, or a finalizing one
   * whose finalizer has been silent longer than `leaseSeconds` (it died). True when taken.
   */
  async leaseFinalize(syncId: string, leaseSeconds: number): Promise<boolean> {
    const now = new Date();
    const stale = new Date(now.getTime() - leaseSeconds * 1000).toISOString();
    return sendConditional(
      new UpdateCommand({
        TableName: this.#table,
        Key: runKey(syncId),
        UpdateExpression:
          "SET #status = :finalizing, finalizeLeaseAt = :now ADD finalizeAttempts :one",
        ConditionExpression:
          "(#status = :running AND outstanding = :zero) OR (#status = :finalizing AND finalizeLeaseAt < :stale)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":finalizing": "finalizing",
          ":running": "running",
          ":zero": 0,
          ":one": 1,
          ":now": now.toISOString(),
          ":stale": stale,
        },
      }),
    );
  }

  /** Marks a finalizing run complete. */
  async complete(syncId: string): Promise<boolean> {
    return this.#transition(syncId, ["finalizing"], {
      status: "complete",
      finishedAt: new Date().toISOString(),
    });
  }

  /** Every job marker of a run. */
  async markers(syncId: string): Promise<JobMarker[]> {
    return this.#queryMarkers(syncId);
  }

  /** The markers still pending that `owner` claimed: the children a done job may not have sent. */
  async pendingChildren(syncId: string, owner: string): Promise<JobMarker[]> {
    return this.#queryMarkers(syncId, {
      FilterExpression: "#owner = :owner AND #state = :pending",
      ExpressionAttributeNames: { "#owner": "owner", "#state": "state" },
      ExpressionAttributeValues: { ":owner": owner, ":pending": "pending" },
    });
  }

  async #queryMarkers(
    syncId: string,
    filter?: {
      FilterExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<JobMarker[]> {
    const markers: JobMarker[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await awsClients().dynamo.send(
        new QueryCommand({
          TableName: this.#table,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :job)",
          ...filter,
          ExpressionAttributeValues: {
            ":pk": `run#${syncId}`,
            ":job": "job#",
            ...filter?.ExpressionAttributeValues,
          },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) markers.push(jobMarker.parse(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return markers;
  }

  async #transition(
    syncId: string,
    from: readonly RunItem["status"][],
    set: Partial<RunItem>,
  ): Promise<boolean> {
    const names: Record<string, string> = { "#status": "status" };
    const values: Record<string, unknown> = {};
    const assignments = Object.entries(set).map(([key, value]) => {
      names[`#${key}`] = key;
      values[`:${key}`] = value;
      return `#${key} = :${key}`;
    });
    from.forEach((status, i) => {
      values[`:from${i}`] = status;
    });
    return sendConditional(
      new UpdateCommand({
        TableName: this.#table,
        Key: runKey(syncId),
        UpdateExpression: `SET ${assignments.join(", ")}`,
        ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(", ")})`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}
