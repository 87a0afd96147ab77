import { DeleteCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { awsClients } from "./clients";
import { isConditionFailure } from "./instances";
import { expiresAt } from "./runKeys";

/** Free slots a worker tries to take before it counts them all taken. */
const TRIES = 2;

const slotItem = z.object({ sk: z.string(), holder: z.string(), until: z.number() });

/**
 * A run's jobs in flight, at most `cap` at once (docs/cloud.md, "Tenants"): a delivery takes one
 * of the run's slots before it runs its job and gives it back after, so one instance never holds
 * more than `cap` of the stage's workers. A slot is a lease (the item `sk = slot#<n>` of the run,
 * naming its holder and until when), so a worker that dies holds its slot only until its lease
 * ends, never for good. Taking costs one Query and one or two conditional Puts; giving back one Delete.
 */
export class JobSlots {
  readonly #table: string;
  readonly #pk: string;
  readonly #cap: number;

  constructor(table: string, syncId: string, cap: number) {
    this.#table = table;
    this.#pk = `run#${syncId}`;
    this.#cap = cap;
  }

  /** Takes a free slot for `holder` until `until` (epoch ms); undefined when all are held. */
  async take(holder: string, until: number): Promise<string | undefined> {
    const now = Date.now();
    const { Items = [] } = await awsClients().dynamo.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :slot)",
        ExpressionAttributeValues: { ":pk": this.#pk, ":slot": "slot#" },
        ConsistentRead: true,
      }),
    );
    const held = new Set(
      Items.map((item) => slotItem.parse(item))
        .filter((slot) => slot.until > now)
        .map((slot) => slot.sk),
    );
    const free = Array.from({ length: this.#cap }, (_, n) => `slot#${n}`).filter(
      (sk) => !held.has(sk),
    );
    // From a random free slot, so workers taking slots at once seldom race for the same one; a
    // worker that loses two races finds the slots taken (and may come back), not worth more writes.
    const first = Math.floor(Math.random() * free.length);
    const tries = [...free.slice(first), ...free.slice(0, first)].slice(0, TRIES);
    for (const sk of tries) {
      try {
        await awsClients().dynamo.send(
          new PutCommand({
            TableName: this.#table,
            Item: { pk: this.#pk, sk, holder, until, expiresAt: expiresAt() },
            ConditionExpression: "attribute_not_exists(pk) OR #until <= :now",
            ExpressionAttributeNames: { "#until": "until" },
            ExpressionAttributeValues: { ":now": now },
          }),
        );
        return sk;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return undefined;
  }

  /** Gives the slot back, if `holder` still holds it (a lease that ran out may be another's). */
  async giveBack(sk: string, holder: string): Promise<void> {
    try {
      await awsClients().dynamo.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { pk: this.#pk, sk },
          ConditionExpression: "holder = :holder",
          ExpressionAttributeValues: { ":holder": holder },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
