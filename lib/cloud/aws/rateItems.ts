/**
 * The shared rate's three items in the runs table (docs/rate-control.md, "The cloud runtime"),
 * under `pk = rate#<connectorId>#<setting>`: `clock`, the slots' schedule, changed only by
 * conditional updates (a claim of slots, a schedule rewritten: built here); `model`, lib/rate's
 * state as JSON, written back on its version; and `inbox`, the 429s told and not yet trimmed. They
 * expire an hour after their last write, so the next sync starts from what was learned.
 */
import { randomUUID } from "node:crypto";
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import * as z from "zod";
import { parseJsonOrUndefined } from "../../parseJson";
import type { RateSettings, RateState } from "../../rate";
import {
  type Clock,
  type Inbox,
  newSharedModel,
  pastFrom,
  type Refusal,
  type SharedModelState,
} from "../rateFold";
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
export type ClockChange = [
  update: string,
  condition: string,
  values: Record<string, number | number[]>,
];

/**
 * A claim at a pace off the clock's by at most this share succeeds: a probe's steps (a few
 * percent a fold) would otherwise fail every worker's next claim, a write each.
 */
const PACE_DRIFT = 0.1;

/**
 * A claim of `count` slots at `pace`: after the clock's next free slot while it `running` (at
 * `now` or later, at most `ahead` ms on, at about the pace this worker saw), from `now` when it
 * stood (the schedule starts again there, the piece before kept in `past` for the fold, and the
 * first claim makes the clock). `seen`: the clock as this worker saw it last, if at all.
 */
export function claimChange(
  seen: Clock | undefined,
  running: boolean,
  count: number,
  pace: number,
  now: number,
  ahead: number,
): ClockChange {
  const values = { ":span": (count * 1000) / pace, ":count": count, ":now": now };
  if (!seen) {
    return [
      "SET nextSlot = :now + :span, fromAt = :now, fromSlot = :zero, folds = :zero, pace = :pace, foldedAt = :now, past = :none ADD claimed :count",
      "attribute_not_exists(nextSlot)",
      { ...values, ":pace": pace, ":zero": 0, ":none": [] },
    ];
  }
  if (!running) {
    // On the piece this worker saw: it is the one kept (else the claim fails, and shows it).
    return [
      "SET nextSlot = :now + :span, fromAt = :now, fromSlot = claimed, pace = :pace, past = :past ADD claimed :count",
      "nextSlot < :now AND pace = :pace AND fromSlot = :fromSlot AND fromAt = :fromAt AND claimed = :claimed",
      {
        ...values,
        ":pace": pace,
        ":fromSlot": seen.fromSlot,
        ":fromAt": seen.fromAt,
        ":claimed": seen.claimed,
        ":past": pastFrom(seen, 0, true),
      },
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
 * rewrite since `clock`: the piece it ends kept in `past` with those the model has not folded
 * (slots below `folded` it has).
 */
export function rescheduleChange(
  clock: Clock,
  next: Pick<Clock, "pace" | "fromSlot" | "fromAt" | "nextSlot">,
  now: number,
  folded: number,
): ClockChange {
  return [
    "SET pace = :pace, foldedAt = :now, fromSlot = :fromSlot, fromAt = :fromAt, nextSlot = :next, past = :past ADD folds :one",
    "claimed = :claimed AND folds = :folds",
    {
      ":pace": next.pace,
      ":now": now,
      ":fromSlot": next.fromSlot,
      ":fromAt": next.fromAt,
      ":next": next.nextSlot,
      ":past": pastFrom(clock, folded, true, next.fromSlot),
      ":claimed": clock.claimed,
      ":folds": clock.folds,
      ":one": 1,
    },
  ];
}

/** The past pieces the model has folded (slots below `folded`) dropped, the schedule as it is. */
export function trimPastChange(clock: Clock, folded: number): ClockChange {
  return [
    "SET past = :past",
    "claimed = :claimed AND folds = :folds",
    { ":past": pastFrom(clock, folded, false), ":claimed": clock.claimed, ":folds": clock.folds },
  ];
}

const CLOCK_FIELDS = ["nextSlot", "pace", "claimed", "fromSlot", "fromAt", "foldedAt", "folds"];
const clockItem: z.ZodType<Clock> = z.object({
  ...(Object.fromEntries(CLOCK_FIELDS.map((field) => [field, z.number()])) as Record<
    Exclude<keyof Clock, "past">,
    z.ZodNumber
  >),
  // A clock written before pieces were kept has none: its slots are spread evenly.
  past: z.array(z.number()).default([]),
});
const modelItem = z.object({ version: z.number(), model: z.string() });
/** The shared state's shape; lib/rate's state inside it is checked by its own `version` only. */
const sharedState = z.object({
  model: z.custom<RateState>((v) => (v as { version?: unknown } | null)?.version === 1),
  startedFolded: z.number(),
  foldedAt: z.number(),
  countedTo: z.number(),
  refusedAhead: z.array(z.number()),
  refusalsFolded: z.number(),
  inboxEpoch: z.string().nullable(),
});

/** The shared state a model item holds, if of this shape (another is started afresh). */
function sharedStateOf(text: string): SharedModelState | undefined {
  const parsed = sharedState.safeParse(parseJsonOrUndefined(text));
  return parsed.success ? parsed.data : undefined;
}

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

/** The three items as one query read them: the model's state and version, the clock, the inbox. */
export interface RateRead {
  shared: SharedModelState;
  /** 0: no model yet, or one of another shape (started afresh). */
  version: number;
  clock: Clock | undefined;
  inbox: Inbox;
}

const inboxEntry = z.object({ s: z.number(), a: z.number(), r: z.number().optional() });
const inboxItem = z.object({
  epoch: z.string(),
  firstTold: z.number(),
  refusals: z.array(inboxEntry),
});

/**
 * The model, the clock and the inbox in one query: one round trip, each item read consistently
 * (not one snapshot of the three: the model may be newer than the inbox read before it).
 */
export async function readRate(
  { table, pk }: RateItems,
  settings: RateSettings,
  now: number,
): Promise<RateRead> {
  const { Items = [] } = await awsClients().dynamo.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": pk },
      ConsistentRead: true,
    }),
  );
  const item = (sk: string) => Items.find((i) => i.sk === sk);
  const clock = clockItem.safeParse(item("clock"));
  const inbox = inboxItem.safeParse(item("inbox"));
  const model = item("model");
  const read = model ? modelItem.parse(model) : undefined;
  return {
    shared: (read && sharedStateOf(read.model)) ?? newSharedModel(settings, now),
    version: read?.version ?? 0,
    clock: clock.success ? clock.data : undefined,
    inbox: inbox.success
      ? {
          epoch: inbox.data.epoch,
          base: inbox.data.firstTold,
          refusals: inbox.data.refusals.map((e) => ({
            startedAt: e.s,
            at: e.a,
            signal: e.r === undefined ? {} : { retryAfterMs: e.r },
          })),
        }
      : { base: 0, refusals: [] },
  };
}

/**
 * A 429 told to every worker: appended to the inbox, which never refuses (no condition). Returns
 * its number, which the model's `refusalsFolded` passes once a fold has taken it in.
 */
export async function tellRefusal(
  { table, pk }: RateItems,
  refusal: Refusal,
  now: number,
): Promise<number> {
  const entry = {
    s: refusal.startedAt,
    a: refusal.at,
    ...(refusal.signal.retryAfterMs === undefined ? {} : { r: refusal.signal.retryAfterMs }),
  };
  const { Attributes } = await awsClients().dynamo.send(
    new UpdateCommand({
      TableName: table,
      Key: { pk, sk: "inbox" },
      UpdateExpression:
        "SET refusals = list_append(if_not_exists(refusals, :none), :one), firstTold = if_not_exists(firstTold, :zero), epoch = if_not_exists(epoch, :epoch), expiresAt = :expires ADD told :once",
      ExpressionAttributeValues: {
        ":none": [],
        ":one": [entry],
        ":epoch": randomUUID(),
        ":zero": 0,
        ":once": 1,
        ":expires": Math.floor(now / 1000) + EXPIRES_SECONDS,
      },
      ReturnValues: "UPDATED_NEW",
    }),
  );
  return z.object({ told: z.number() }).parse(Attributes).told - 1;
}

/** The most refusals trimmed from the inbox in one update (its expression's length). */
const TRIM_MOST = 100;

/**
 * Drops the inbox's first `count` refusals, folded, unless another fold trimmed it since `base`
 * (then that one did). Refusals told meanwhile are appended after them: they stay.
 */
export async function trimInbox(
  { table, pk }: RateItems,
  base: number,
  count: number,
): Promise<void> {
  const n = Math.min(count, TRIM_MOST);
  if (n <= 0) return;
  await sendConditional(
    new UpdateCommand({
      TableName: table,
      Key: { pk, sk: "inbox" },
      UpdateExpression: `REMOVE ${Array.from({ length: n }, (_, i) => `refusals[${i}]`).join(", ")} SET firstTold = :next`,
      ConditionExpression: "firstTold = :base",
      ExpressionAttributeValues: { ":base": base, ":next": base + n },
    }),
  );
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

/** The clock in a condition failure's item (DynamoDB's typed values, which lib-dynamodb leaves so). */
function clockOf(item: unknown): Clock | undefined {
  const clock = clockItem.safeParse(
    item ? unmarshall(item as Parameters<typeof unmarshall>[0]) : item,
  );
  return clock.success ? clock.data : undefined;
}
