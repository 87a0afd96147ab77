import { DeleteCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import { type Job, parseJob } from "../../sync";
import { jobId } from "../../sync/job";
import { batchWrite } from "./batchWrite";
import { awsClients } from "./clients";
import { isConditionFailure } from "./instances";
import { sendJobs } from "./messages";
import { expiresAt } from "./runKeys";

/** Free slots a worker tries to take before it counts them all taken. */
const TRIES = 2;
/**
 * A slot reserved for a job sent into it is the job's for this long (ms), so its delivery finds
 * it; one that comes later (a queue busy with other instances' jobs) takes a free slot, or is held.
 */
const RESERVED_MS = 60_000;

const slotItem = z.object({ sk: z.string(), holder: z.string(), until: z.number() });
const heldItem = z.object({ sk: z.string(), job: z.string() });

/**
 * A run's jobs in flight, at most `cap` at once, and the jobs held for a free slot (docs/cloud.md,
 * "Jobs"). A delivery takes one of the run's slots before it runs its job and gives it back after,
 * so one instance never holds more than `cap` of the stage's workers. A slot is a lease (the item
 * `sk = slot#<n>` of the run, naming its holder and until when), so a worker that dies holds its
 * slot only until its lease ends, never for good.
 * Jobs beyond the free slots wait here, not on the queue (`sk = held#<jobId>`, the job as JSON):
 * the queue then holds no more of a run's jobs than its slots can take, and another instance's job
 * is taken at the next receive. Whoever frees or finds a free slot releases held jobs: sends them,
 * then deletes them, so a worker that dies between the two leaves a job both sent and held (sent
 * twice, which redelivery makes harmless), never neither.
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
    const { free, reserved } = await this.#slots(now, holder);
    // From a random free slot, so workers taking slots at once seldom race for the same one; a
    // worker that loses two races finds the slots taken (and may come back), not worth more writes.
    const first = Math.floor(Math.random() * free.length);
    const tries = [...reserved, ...free.slice(first), ...free.slice(0, first)].slice(0, TRIES);
    for (const sk of tries) {
      if (await this.#lease(sk, holder, until, now)) return sk;
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
   * Sends as many held jobs as the run has free slots, then deletes them. Two workers releasing
   * at once may send a job twice: its second delivery finds it done, or runs it as a redelivery.
   */
  async releaseIntoFreeSlots(queueUrl: string): Promise<number> {
    const now = Date.now();
    const { free } = await this.#slots(now);
    if (free.length === 0) return 0;
    const { Items = [] } = await awsClients().dynamo.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :held)",
        ExpressionAttributeValues: { ":pk": this.#pk, ":held": "held#" },
        ConsistentRead: true,
        Limit: free.length,
      }),
    );
    const held = Items.map((item) => heldItem.parse(item));
    const sent = await this.#sendReserved(
      queueUrl,
      held.map((item) => parseJob(JSON.parse(item.job))),
      free,
    );
    await batchWrite(
      this.#table,
      held
        .slice(0, sent)
        .map((item) => ({ DeleteRequest: { Key: { pk: this.#pk, sk: item.sk } } })),
      `the released jobs of ${this.#pk}`,
    );
    return sent;
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
    try {
      await awsClients().dynamo.send(
        new PutCommand({
          TableName: this.#table,
          Item: { pk: this.#pk, sk, holder, until, expiresAt: expiresAt() },
          ConditionExpression: "attribute_not_exists(pk) OR #until <= :now OR holder = :holder",
          ExpressionAttributeNames: { "#until": "until" },
          ExpressionAttributeValues: { ":now": now, ":holder": holder },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }

  /** The slots no lease holds now, and those leased to `holder`. */
  async #slots(now: number, holder?: string): Promise<{ free: string[]; reserved: string[] }> {
    const { Items = [] } = await awsClients().dynamo.send(
      new QueryCommand({
        TableName: this.#table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :slot)",
        ExpressionAttributeValues: { ":pk": this.#pk, ":slot": "slot#" },
        ConsistentRead: true,
      }),
    );
    const leases = Items.map((item) => slotItem.parse(item)).filter((slot) => slot.until > now);
    const leased = new Set(leases.map((slot) => slot.sk));
    return {
      free: Array.from({ length: this.#cap }, (_, n) => `slot#${n}`).filter(
        (sk) => !leased.has(sk),
      ),
      reserved: leases.filter((slot) => slot.holder === holder).map((slot) => slot.sk),
    };
  }
}
