/**
 * The shared rate's two items in the runs table (docs/rate-control.md, "The cloud runtime"), under
 * `pk = rate#<connectorId>#<setting>`: `clock`, the slots' schedule, changed only by conditional
 * updates (a claim of slots, a schedule rewritten: built here), and `model`, lib/rate's state as
 * JSON, written back on its version. Both expire an hour after their last write, so the next sync
 * starts from what was learned.
 */
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import type { RateSettings } from "../../rate";
import { type Clock, newSharedModel, type SharedModelState } from "../rateFold";
import { awsClients } from "./clients";
import { isConditionFailure, sendConditional } from "./instances";

/** The items outlive the last run by an hour, so the next sync starts from what was learned. */
const EXPIRES_SECONDS = 3_600;

/** Where the items are. */
export interface RateItems {
  table: string;
  pk: string;
}

/** An update of the clock: its expression (`SET ...`), its condition, their values. */
export type ClockChange = [update: string, condition: string, values: Record<string, number>];

/**
 * A claim at a pace off the clock's by at most this share succeeds: a probe's steps (a few
 * percent a fold) would otherwise fail every worker's next claim, a write each.
 */
const PACE_DRIFT = 0.1;

/**
 * A claim of `count` slots at `pace`: after the clock's next free slot while it `running` (at
 * `now` or later, at most `ahead` ms on, at about the pace this worker saw), from `now` when it
 * stood (the schedule starts again there, and the first claim makes the clock).
 */
export function claimChange(
  running: boolean,
  count: number,
  pace: number,
  now: number,
  ahead: number,
): ClockChange {
  const values = { ":span": (count * 1000) / pace, ":count": count, ":now": now };
  if (!running) {
    return [
      "SET nextSlot = :now + :span, fromAt = :now, fromSlot = if_not_exists(claimed, :zero), folds = if_not_exists(folds, :zero), pace = :pace, foldedAt = if_not_exists(foldedAt, :now) ADD claimed :count",
      "attribute_not_exists(nextSlot) OR (nextSlot < :now AND pace = :pace)",
      { ...values, ":pace": pace, ":zero": 0 },
    ];
  }
  return [
    "SET nextSlot = nextSlot + :span ADD claimed :count",
    // Workers that saw the clock at once may all claim, yet not many blocks ahead. A pace moved
    // by a probe's step still claims (the slots' times come from the schedule; the next free slot
    // is off by that step of a block at most).
    "nextSlot BETWEEN :now AND :latest AND pace BETWEEN :slower AND :faster",
    {
      ...values,
      ":latest": now + ahead,
      ":slower": pace / (1 + PACE_DRIFT),
      ":faster": pace * (1 + PACE_DRIFT),
    },
  ];
}

/**
 * The clock's schedule rewritten to `next` (`reschedule`), on no slot claimed and no other
 * rewrite since `clock`.
 */
export function rescheduleChange(
  clock: Clock,
  next: Pick<Clock, "pace" | "fromSlot" | "fromAt" | "nextSlot">,
  now: number,
): ClockChange {
  return [
    "SET pace = :pace, foldedAt = :now, fromSlot = :fromSlot, fromAt = :fromAt, nextSlot = :next ADD folds :one",
    "claimed = :claimed AND folds = :folds",
    {
      ":pace": next.pace,
      ":now": now,
      ":fromSlot": next.fromSlot,
      ":fromAt": next.fromAt,
      ":next": next.nextSlot,
      ":claimed": clock.claimed,
      ":folds": clock.folds,
      ":one": 1,
    },
  ];
}

const CLOCK_FIELDS = ["nextSlot", "pace", "claimed", "fromSlot", "fromAt", "foldedAt", "folds"];
const clockItem: z.ZodType<Clock> = z.object(
  Object.fromEntries(CLOCK_FIELDS.map((field) => [field, z.number()])) as Record<
    keyof Clock,
    z.ZodNumber
  >,
);
const modelItem = z.object({ version: z.number(), model: z.string() });

/**
 * One conditional update of the clock (its expiry moved on): `clock` as it made it, or, when the
 * condition failed, the clock `seen` as the failure returns it.
 */
export async function updateClock(
  { table, pk }: RateItems,
  [update, condition, values]: ClockChange,
  now: number,
): Promise<{ clock?: Clock; seen?: Clock }> {
  try {
    const { Attributes } = await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk, sk: "clock" },
        UpdateExpression: update.replace("SET ", "SET expiresAt = :expires, "),
        ConditionExpression: condition,
        ExpressionAttributeValues: {
          ...values,
          ":expires": Math.floor(now / 1000) + EXPIRES_SECONDS,
        },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { clock: clockItem.parse(Attributes) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const seen = clockOf((error as { Item?: unknown }).Item);
    return seen ? { seen } : {};
  }
}

export async function readClock({ table, pk }: RateItems): Promise<Clock | undefined> {
  const { Item } = await awsClients().dynamo.send(
    new GetCommand({ TableName: table, Key: { pk, sk: "clock" }, ConsistentRead: true }),
  );
  const clock = clockItem.safeParse(Item);
  return clock.success ? clock.data : undefined;
}

/** The model's state and its version (0: none yet, or of another shape: started afresh). */
export async function readModel(
  { table, pk }: RateItems,
  settings: RateSettings,
  now: number,
): Promise<{ shared: SharedModelState; version: number }> {
  const { Item } = await awsClients().dynamo.send(
    new GetCommand({ TableName: table, Key: { pk, sk: "model" }, ConsistentRead: true }),
  );
  if (!Item) return { shared: newSharedModel(settings, now), version: 0 };
  const item = modelItem.parse(Item);
  const shared = JSON.parse(item.model) as SharedModelState;
  // A state of another shape (the model's `version` changed) is started afresh.
  const fresh = shared.model?.version !== 1;
  return { shared: fresh ? newSharedModel(settings, now) : shared, version: item.version };
}

/** Whether the write won (the version read is still the stored one). */
export async function writeModel(
  { table, pk }: RateItems,
  shared: SharedModelState,
  version: number,
): Promise<boolean> {
  return sendConditional(
    new PutCommand({
      TableName: table,
      Item: {
        pk,
        sk: "model",
        version: version + 1,
        model: JSON.stringify(shared),
        expiresAt: Math.floor(shared.foldedAt / 1000) + EXPIRES_SECONDS,
      },
      ConditionExpression: "attribute_not_exists(pk) OR version = :version",
      ExpressionAttributeValues: { ":version": version },
    }),
  );
}

/** The clock in a condition failure's item (DynamoDB's typed values: numbers as `{ N }`). */
function clockOf(item: unknown): Clock | undefined {
  const typed = item as Record<string, { N?: string } | undefined> | undefined;
  const fields = CLOCK_FIELDS.filter((k) => typed?.[k]?.N !== undefined);
  const clock = clockItem.safeParse(
    Object.fromEntries(fields.map((k) => [k, Number(typed?.[k]?.N)])),
  );
  return clock.success ? clock.data : undefined;
}
