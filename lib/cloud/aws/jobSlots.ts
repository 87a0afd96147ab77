import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { type Job, parseJob } from "../../sync";
import { jobId } from "../../sync/job";
import { batchWrite } from "./batchWrite";
import { awsClients } from "./clients";
import { sendConditional } from "./instances";
import { sendJobs } from "./messages";
import { expiresAt } from "./runKeys";

/** Free slots a worker tries to take before it counts them all taken. */
const TRIES = 2;
/**
 * A slot reserved for a job sent into it is the job's for this long (ms), so its delivery finds
 * it; one that comes later (a queue busy with other instances' jobs) takes a free slot, or is held.
 */
const RESERVED_MS = 60_000;
/**
 * A worker releasing a held job claims it for this long (ms) first, so two releasing at once do
 * not both send it; one that dies mid-release leaves it to be released again after.
 */
const CLAIM_MS = 30_000;
/** Held jobs a release reads beyond its free slots, in case some are claimed by another. */
const CLAIMED_SLACK = 8;

const slotItem = z.object({ sk: z.string(), holder: z.string(), until: z.number() });
const heldItem = z.object({ sk: z.string(), job: z.string(), claimedUntil: z.number().optional() });

/**
 * A run's jobs in flight, at most `cap` at once, and the jobs held for a free slot (docs/cloud.md,
 * "Jobs"). A delivery takes one of the run's slots before it runs its job and gives it back after,
 * so one instance never holds more than `cap` of the stage's workers. A slot is a lease (the item
 * `sk = slot#<n>` of the run, naming its holder and until when), so a worker that dies holds its
 * slot only until its lease ends, never for good.
 * Jobs beyond the free slots wait here, not on the queue (`sk = held#<jobId>`, the job as JSON):
 * the queue then holds no more of a run's jobs than its slots can take, and another instance's job
 * is taken at the next receive. Whoever frees or finds a free slot releases held jobs: claims,
 * sends, then deletes each, so a worker that dies between leaves a job held (released again once
 * its claim ends), or both sent and held (sent twice, which redelivery makes harmless), never lost.
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

  /**
   * Takes a slot for `holder` (the job's id) until `until` (epoch ms): the one a release reserved
   * for it, or a free one; undefined when all are held.
   */
  async take(holder: string, until: number): Promise<string | undefined> {
    const now = Date.now();
    const { free, reserved } = await this.#slots(now, undefined, holder);
    // From a random free slot, so workers taking slots at once seldom race for the same one; a
    // worker that loses two races finds the slots taken (its job is held), not worth more writes.
    const first = Math.floor(Math.random() * free.length);
    const tries = [...reserved, ...free.slice(first), ...free.slice(0, first)].slice(0, TRIES);
    for (const sk of tries) {
      if (await this.#lease(sk, holder, until, now)) return sk;
    }
    return undefined;
  }

  /** Gives the slot back, if `holder` still holds it (a lease that ran out may be another's). */
  async giveBack(sk: string, holder: string): Promise<void> {
    await sendConditional(
      new DeleteCommand({
        TableName: this.#table,
        Key: { pk: this.#pk, sk },
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder },
      }),
    );
  }

  /**
   * Sends as many of `jobs` as the run has free slots, each with a slot reserved for it (so the
   * queue holds no more of the run's jobs than its slots), and holds the rest. The caller then
   * releases held jobs into slots that freed meanwhile (`releaseIntoFreeSlots`): their givers may
   * have looked for held jobs before these were written.
   */
  async dispatch(queueUrl: string, jobs: readonly Job[]): Promise<void> {
    if (jobs.length === 0) return;
    const sent = await this.#sendReserved(queueUrl, jobs);
    if (jobs.length > sent) await this.hold(jobs.slice(sent));
  }

  /** Holds jobs for a free slot (a job received when all were taken, or children beyond them). */
  async hold(jobs: readonly Job[]): Promise<void> {
    await batchWrite(
      this.#table,
      jobs.map((job) => ({
        PutRequest: {
          Item: {
            pk: this.#pk,
            sk: `held#${jobId(job)}`,
            job: JSON.stringify(job),
            expiresAt: expiresAt(),
          },
        },
      })),
      `the held jobs of ${this.#pk}`,
    );
  }

  /**
   * Sends as many held jobs as the run has free slots, each claimed first (so it is sent once),
   * then deletes them. `finished` names a job done whose slots, should a copy of it still hold
   * one, are free now.
   */
  async releaseIntoFreeSlots(queueUrl: string, finished?: string): Promise<number> {
    const now = Date.now();
    const { free } = await this.#slots(now, finished);
    if (free.length === 0) return 0;
    const held = await this.#items("held#", free.length + CLAIMED_SLACK);
    const claimed: z.infer<typeof heldItem>[] = [];
    for (const item of held.map((i) => heldItem.parse(i))) {
      if (claimed.length === free.length) break;
      if ((item.claimedUntil ?? 0) <= now && (await this.#claim(item.sk, now))) claimed.push(item);
    }
    const sent = await this.#sendReserved(
      queueUrl,
      claimed.map((item) => parseJob(JSON.parse(item.job))),
      free,
    );
    await batchWrite(
      this.#table,
      claimed
        .slice(0, sent)
        .map((item) => ({ DeleteRequest: { Key: { pk: this.#pk, sk: item.sk } } })),
      `the released jobs of ${this.#pk}`,
    );
    // Claimed and left without a slot (others took the free ones first): releasable again now.
    for (const item of claimed.slice(sent)) {
      await sendConditional(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: this.#pk, sk: item.sk },
          UpdateExpression: "REMOVE claimedUntil",
          ConditionExpression: "attribute_exists(pk)",
        }),
      );
    }
    return sent;
  }

  /** Claims a held job for this worker's release; false when another holds the claim. */
  async #claim(sk: string, now: number): Promise<boolean> {
    return sendConditional(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: this.#pk, sk },
        UpdateExpression: "SET claimedUntil = :until",
        ConditionExpression:
          "attribute_exists(pk) AND (attribute_not_exists(claimedUntil) OR claimedUntil <= :now)",
        ExpressionAttributeValues: { ":until": now + CLAIM_MS, ":now": now },
      }),
    );
  }

  /**
   * Reserves a free slot for each job in turn (leased to its id for `RESERVED_MS`, until its
   * delivery takes it) and sends those that got one; returns how many, the first of `jobs`.
   */
  async #sendReserved(queueUrl: string, jobs: readonly Job[], free?: string[]): Promise<number> {
    const now = Date.now();
    const slots = free ?? (await this.#slots(now)).free;
    const reserved: Job[] = [];
    for (const sk of slots) {
      const job = jobs[reserved.length];
      if (!job) break;
      if (await this.#lease(sk, jobId(job), now + RESERVED_MS, now)) reserved.push(job);
    }
    await sendJobs(queueUrl, reserved);
    return reserved.length;
  }

  /** Leases the slot to `holder` until `until`: if free at `now`, or already `holder`'s. */
  async #lease(sk: string, holder: string, until: number, now: number): Promise<boolean> {
    return sendConditional(
      new PutCommand({
        TableName: this.#table,
        Item: { pk: this.#pk, sk, holder, until, expiresAt: expiresAt() },
        ConditionExpression: "attribute_not_exists(pk) OR #until <= :now OR holder = :holder",
        ExpressionAttributeNames: { "#until": "until" },
        ExpressionAttributeValues: { ":now": now, ":holder": holder },
      }),
    );
  }

  /** The run's items whose sort key begins with `prefix` (the first `limit`), read consistently. */
  async #items(prefix: string, limit?: number): Promise<Record<string, unknown>[]> {
    const { Items = [] } = await awsClients().dynamo.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": this.#pk, ":prefix": prefix },
        ConsistentRead: true,
        ...(limit === undefined ? {} : { Limit: limit }),
      }),
    );
    return Items;
  }

  /**
   * The slots no lease holds now (those of `finished`, a job done, given back first), and those
   * leased to `holder`.
   */
  async #slots(
    now: number,
    finished?: string,
    holder?: string,
  ): Promise<{ free: string[]; reserved: string[] }> {
    const slots = await this.#items("slot#");
    const leases = slots.map((item) => slotItem.parse(item)).filter((slot) => slot.until > now);
    for (const slot of leases.filter((lease) => lease.holder === finished)) {
      await this.giveBack(slot.sk, slot.holder);
    }
    const leased = new Set(
      leases.filter((lease) => lease.holder !== finished).map((slot) => slot.sk),
    );
    return {
      free: Array.from({ length: this.#cap }, (_, n) => `slot#${n}`).filter(
        (sk) => !leased.has(sk),
      ),
      reserved: leases.filter((slot) => slot.holder === holder).map((slot) => slot.sk),
    };
  }
}
