import {
  DeleteCommand,
  GetCommand,
  type PutCommand,
  ScanCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { CONNECTOR_NAMES } from "../../connectors";
import { awsClients } from "./clients";

/**
 * The instance registry: one row per connector instance (its settings live in its secret). The
 * row says what users and operators see (the label) and which run is current, if any.
 */
export const instanceRow = z.object({
  connectorId: z.string().min(1),
  connector: z.enum(CONNECTOR_NAMES),
  intervalSeconds: z.number().int().positive(),
  label: z.enum(["syncing", "connected", "error", "registered"]),
  labelDetail: z.string().optional(),
  /** The run in progress; set only while one is. */
  currentSyncId: z.string().optional(),
  currentStartedAt: z.string().optional(),
  lastSyncId: z.string().optional(),
  lastSyncStatus: z.enum(["complete", "error"]).optional(),
  lastSyncAt: z.string().optional(),
  /** When the last complete sync started: the next is due `intervalSeconds` after it. */
  lastSuccessStartedAt: z.string().optional(),
  /** When its settings were last saved: a function that read them before reads them again. */
  settingsSavedAt: z.string().optional(),
  updatedAt: z.string(),
});
export type InstanceRow = z.infer<typeof instanceRow>;

export class InstanceRegistry {
  readonly #table: string;

  constructor(table: string) {
    this.#table = table;
  }

  async get(connectorId: string): Promise<InstanceRow | undefined> {
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({ TableName: this.#table, Key: { connectorId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : instanceRow.parse(Item);
  }

  async list(): Promise<InstanceRow[]> {
    const rows: InstanceRow[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await awsClients().dynamo.send(
        new ScanCommand({ TableName: this.#table, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      for (const item of page.Items ?? []) rows.push(instanceRow.parse(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return rows.sort((a, b) => a.connectorId.localeCompare(b.connectorId));
  }

  /**
   * Creates or updates the registration, once its secret is written; the run state of an existing
   * row is kept.
   */
  async register(row: Pick<InstanceRow, "connectorId" | "connector" | "intervalSeconds">) {
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { connectorId: row.connectorId },
        UpdateExpression:
          "SET connector = :connector, intervalSeconds = :interval, settingsSavedAt = :now, updatedAt = :now, label = if_not_exists(label, :registered)",
        ExpressionAttributeValues: {
          ":connector": row.connector,
          ":interval": row.intervalSeconds,
          ":now": new Date().toISOString(),
          ":registered": "registered",
        },
      }),
    );
  }

  /**
   * Deletes the row; unless `force`, only while no run is current (checked in the delete itself,
   * so a run claimed a moment before is seen). Says what it found.
   */
  async remove(
    connectorId: string,
    options: { force: boolean },
  ): Promise<"removed" | "absent" | "running"> {
    try {
      const { Attributes } = await awsClients().dynamo.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { connectorId },
          ReturnValues: "ALL_OLD",
          ...(options.force ? {} : { ConditionExpression: "attribute_not_exists(currentSyncId)" }),
        }),
      );
      return Attributes === undefined ? "absent" : "removed";
    } catch (error) {
      if (isConditionFailure(error)) return "running";
      throw error;
    }
  }

  /**
   * Marks `syncId` as the instance's current run, unless one is already current: the one guard
   * that keeps two runs of an instance from starting. Returns the run that is current.
   */
  async claimRun(
    connectorId: string,
    syncId: string,
  ): Promise<{ claimed: boolean; syncId: string }> {
    try {
      await awsClients().dynamo.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { connectorId },
          UpdateExpression:
            "SET currentSyncId = :id, currentStartedAt = :now, label = :syncing, updatedAt = :now REMOVE labelDetail",
          ConditionExpression:
            "attribute_exists(connectorId) AND attribute_not_exists(currentSyncId)",
          ExpressionAttributeValues: {
            ":id": syncId,
            ":now": new Date().toISOString(),
            ":syncing": "syncing",
          },
        }),
      );
      return { claimed: true, syncId };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = await this.get(connectorId);
      return { claimed: false, syncId: current?.currentSyncId ?? "" };
    }
  }

  /** Sets the label `error` with its reason, outside any run (broken settings). */
  async setError(connectorId: string, detail: string): Promise<void> {
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { connectorId },
        UpdateExpression: "SET label = :error, labelDetail = :detail, updatedAt = :now",
        ConditionExpression: "attribute_exists(connectorId)",
        ExpressionAttributeValues: {
          ":error": "error",
          ":detail": detail,
          ":now": new Date().toISOString(),
        },
      }),
    );
  }

  /**
   * A held run `syncId` was released and published: the instance is `connected` with it as its
   * last complete sync, unless another run has started or ended since (false then; that run's
   * outcome stands).
   */
  async recordRelease(connectorId: string, syncId: string, startedAt: string): Promise<boolean> {
    try {
      await awsClients().dynamo.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { connectorId },
          UpdateExpression:
            "SET label = :connected, lastSyncStatus = :complete, lastSuccessStartedAt = :started, updatedAt = :now REMOVE labelDetail",
          ConditionExpression: "lastSyncId = :id AND attribute_not_exists(currentSyncId)",
          ExpressionAttributeValues: {
            ":connected": "connected",
            ":complete": "complete",
            ":started": startedAt,
            ":now": new Date().toISOString(),
            ":id": syncId,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Ends the current run `syncId` with its outcome and the label users see. */
  async endRun(
    connectorId: string,
    syncId: string,
    outcome: { status: "complete" | "error"; startedAt: string; detail?: string },
  ): Promise<void> {
    const now = new Date().toISOString();
    const values: Record<string, unknown> = {
      ":id": syncId,
      ":status": outcome.status,
      ":now": now,
      ":label": outcome.status === "complete" ? "connected" : "error",
    };
    let set =
      "lastSyncId = :id, lastSyncStatus = :status, lastSyncAt = :now, label = :label, updatedAt = :now";
    if (outcome.status === "complete") {
      set += ", lastSuccessStartedAt = :started";
      values[":started"] = outcome.startedAt;
    }
    if (outcome.detail) {
      set += ", labelDetail = :detail";
      values[":detail"] = outcome.detail;
    }
    try {
      await awsClients().dynamo.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { connectorId },
          UpdateExpression: `SET ${set} REMOVE currentSyncId, currentStartedAt${outcome.detail ? "" : ", labelDetail"}`,
          ConditionExpression: "currentSyncId = :id",
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      // Another run is current (this one was ended already): nothing to change.
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * When an instance is or was due, in ms since the epoch: 0 when it never completed a sync, else
 * its interval after the last complete sync started (or after the last failed one ended, so a
 * broken instance is retried once an interval, not at every schedule).
 */
export function dueAt(row: InstanceRow): number {
  if (!row.lastSuccessStartedAt) return 0;
  const since = row.lastSyncStatus === "error" ? row.lastSyncAt : row.lastSuccessStartedAt;
  return Date.parse(since ?? row.lastSuccessStartedAt) + row.intervalSeconds * 1000;
}

/** Whether an instance is due at `now`: no run is current, and `dueAt` has come. */
export function isDue(row: InstanceRow, now: Date): boolean {
  return !row.currentSyncId && dueAt(row) <= now.getTime();
}

/** A write refused by its condition (not a transaction: see `RunStore.commit`). */
export function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === "ConditionalCheckFailedException";
}

/** Sends a conditional write: true when written, false when its condition did not hold. */
export async function sendConditional(
  command: PutCommand | UpdateCommand | DeleteCommand,
): Promise<boolean> {
  try {
    await awsClients().dynamo.send(command as UpdateCommand);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
