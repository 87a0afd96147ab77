import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import {
  onAbort,
  RateLimitedError,
  type SharedPermit,
  type SharedRate,
  sleepUnlessAborted,
} from "../../http";
import { newRateState, type RateSettings } from "../../rate";
import {
  fold,
  heldUntil,
  newSharedModel,
  type Refusal,
  type SharedModelState,
  slotPace,
} from "../rateFold";
import { awsClients } from "./clients";
import { isConditionFailure } from "./instances";

/** A worker claims at most this much of the pace's slots at once (ms): a block per write. */
const BLOCK_MS = 500;
/**
 * A worker claims only while the clock's next free slot is within this of now (ms): slots are
 * claimed at the pace of their claim, so this bounds the starts a cut comes too late for.
 */
const HORIZON_MS = 250;
/** The model takes in the workers' accepted answers this often at most (ms): its step. */
const FOLD_EVERY_MS = 500;
/**
 * A request waits this long for its slot at most (ms): then its job goes back to the queue with a
 * delay, rather than a paid function waiting behind a long line.
 */
const MAX_PERMIT_WAIT_MS = 10_000;
/** A slot this late (ms) is still taken by a request that waits (a claim's round trip). */
const STALE_SLOT_MS = 100;
/** The items outlive the last run by an hour, so the next sync starts from what was learned. */
const EXPIRES_SECONDS = 3_600;
const SHARED_RATE = { method: "GET", path: "(the instance's shared request rate)" } as const;

/** What a worker last saw of the clock (the `slots` item). */
interface Clock {
  /** The first slot no worker holds (ms). */
  nextSlot: number;
  /** Slots a second. */
  pace: number;
  /** Every worker's accepted answers, counted. */
  accepted: number;
  /** The model's last fold (ms). */
  foldedAt: number;
}

const clockItem = z.object({
  nextSlot: z.number(),
  pace: z.number(),
  accepted: z.number(),
  foldedAt: z.number(),
});
const modelItem = z.object({ version: z.number(), model: z.string() });

/**
 * The instance's request rate, shared by every worker of its runs: lib/rate's model, its state
 * in the runs table (docs/rate-control.md, "The cloud runtime"). Two items: `slots`, a clock of
 * start slots spaced at the model's pace, which a worker claims a block of with one atomic update
 * (adding its accepted answers to a count there), and `model`, the model's state, read and written
 * (conditionally on its version) only at a fold: a 429, or every `FOLD_EVERY_MS` as answers come
 * in. `requestsPerSecond` 0 (no ceiling, no pace) shares nothing.
 */
export function sharedRate(
  table: string,
  connectorId: string,
  requestsPerSecond: number | undefined,
): SharedRate | undefined {
  if (requestsPerSecond === 0) return undefined;
  const settings: RateSettings = { requestsPerSecond };
  // Keyed by the setting too: a changed ceiling starts a model of its own.
  const pk = `rate#${connectorId}#${requestsPerSecond ?? "learned"}`;
  const key = `${table}|${pk}`;
  let book = books.get(key);
  if (!book) {
    book = new SlotBook(table, pk, settings);
    books.set(key, book);
  }
  return book;
}

/** One book per instance in this process, kept while the function is warm. */
const books = new Map<string, SlotBook>();

/** A permit, with the slot it was given (ms). */
export interface SlotPermit extends SharedPermit {
  readonly slot: number;
}

interface Waiter {
  resolve(slot: number): void;
  reject(error: unknown): void;
}

/** A process's side of the shared clock: the slots it holds, the requests waiting for one. */
export class SlotBook implements SharedRate {
  readonly #table: string;
  readonly #pk: string;
  readonly #settings: RateSettings;
  #clock: Clock | undefined;
  /** Slots claimed and not yet taken, in time order. */
  #slots: number[] = [];
  #waiting: Waiter[] = [];
  #claiming = false;
  #folding = false;
  /** Accepted answers not yet added to the clock's count. */
  #unreported = 0;
  /** Writes and reads this process made, for tests and benches. */
  readonly counts = { claims: 0, conflicts: 0, folds: 0, reads: 0 };

  constructor(table: string, pk: string, settings: RateSettings) {
    this.#table = table;
    this.#pk = pk;
    this.#settings = settings;
  }

  async permit(signal?: AbortSignal): Promise<SlotPermit> {
    const slot = await this.#take(signal);
    if (slot > Date.now()) await sleepUnlessAborted(slot - Date.now(), signal);
    return {
      slot,
      accepted: () => {
        this.#unreported++;
      },
      refused: (retryAfterMs) =>
        this.#fold({ startedAt: slot, at: Date.now(), signal: { retryAfterMs } }),
      unanswered() {},
    };
  }

  /** A slot: one held, or the next claim's; a job waits `MAX_PERMIT_WAIT_MS` at most. */
  #take(signal: AbortSignal | undefined): Promise<number> {
    const now = Date.now();
    while ((this.#slots[0] ?? now) < now - STALE_SLOT_MS) this.#slots.shift();
    const held = this.#slots.shift();
    if (held !== undefined) return Promise.resolve(held);
    return new Promise<number>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        unlink?.();
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
      };
      const waiter: Waiter = {
        resolve(slot) {
          settle();
          resolve(slot);
        },
        reject(error) {
          settle();
          reject(error);
        },
      };
      const timer = setTimeout(
        () => waiter.reject(new RateLimitedError(SHARED_RATE, MAX_PERMIT_WAIT_MS)),
        MAX_PERMIT_WAIT_MS,
      );
      const unlink = signal && onAbort(signal, () => waiter.reject(signal.reason));
      this.#waiting.push(waiter);
      void this.#claimWhileWaiting();
    });
  }

  /** Claims blocks of slots while requests wait, one claim at a time. */
  async #claimWhileWaiting(): Promise<void> {
    if (this.#claiming) return;
    this.#claiming = true;
    try {
      while (this.#waiting.length > 0) {
        const now = Date.now();
        const clock = this.#clock;
        if (clock && clock.nextSlot > now + HORIZON_MS) {
          // The line is long enough: claim when it is within the horizon (others claim meanwhile).
          await sleepUnlessAborted(clock.nextSlot - HORIZON_MS - now, undefined);
          continue;
        }
        const pace = this.#clock?.pace ?? slotPace(newRateState(this.#settings));
        const count = Math.min(
          this.#waiting.length,
          Math.max(1, Math.floor((pace * BLOCK_MS) / 1000)),
        );
        const slots = await this.#claim(count, pace, now);
        for (const slot of slots) {
          const waiter = this.#waiting[0];
          if (waiter) waiter.resolve(slot);
          else this.#slots.push(slot);
        }
        const seen = this.#clock;
        if (seen && now - seen.foldedAt > FOLD_EVERY_MS * (1 + Math.random() / 2)) {
          void this.#fold().catch(() => {});
        }
      }
    } catch (error) {
      for (const waiter of [...this.#waiting]) waiter.reject(error);
    } finally {
      this.#claiming = false;
    }
  }

  /**
   * Claims `count` slots at `pace` with one conditional update: after the clock's next free slot
   * while the clock runs (it is at `now` or later), from `now` when it stood. A condition that
   * fails (another worker moved the clock across `now`) costs a read and another try.
   */
  async #claim(count: number, pace: number, now: number): Promise<number[]> {
    const span = (count * 1000) / pace;
    const running = this.#clock !== undefined && this.#clock.nextSlot >= now;
    const reported = this.#unreported;
    this.#unreported = 0;
    const expiresAt = Math.floor(now / 1000) + EXPIRES_SECONDS;
    try {
      this.counts.claims++;
      const { Attributes } = await awsClients().dynamo.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: this.#pk, sk: "slots" },
          ...(running
            ? {
                UpdateExpression:
                  "SET nextSlot = nextSlot + :span, expiresAt = :expires ADD accepted :n",
                ConditionExpression: "nextSlot >= :now",
                ExpressionAttributeValues: {
                  ":span": span,
                  ":now": now,
                  ":n": reported,
                  ":expires": expiresAt,
                },
              }
            : {
                UpdateExpression:
                  "SET nextSlot = :end, expiresAt = :expires, pace = if_not_exists(pace, :pace), foldedAt = if_not_exists(foldedAt, :now) ADD accepted :n",
                ConditionExpression: "attribute_not_exists(nextSlot) OR nextSlot < :now",
                ExpressionAttributeValues: {
                  ":end": now + span,
                  ":now": now,
                  ":pace": pace,
                  ":n": reported,
                  ":expires": expiresAt,
                },
              }),
          ReturnValues: "ALL_NEW",
        }),
      );
      this.#clock = clockItem.parse(Attributes);
      const end = this.#clock.nextSlot;
      return Array.from({ length: count }, (_, i) => end - span + (i * 1000) / pace);
    } catch (error) {
      this.#unreported += reported;
      if (!isConditionFailure(error)) throw error;
      this.counts.conflicts++;
      await this.#readClock();
      return [];
    }
  }

  async #readClock(): Promise<void> {
    this.counts.reads++;
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: this.#pk, sk: "slots" },
        ConsistentRead: true,
      }),
    );
    this.#clock = Item ? clockItem.parse(Item) : undefined;
  }

  /**
   * The model takes in the accepted answers counted on the clock and `refusal` (a fold,
   * `rateFold.ts`), written back on its version, then the clock's pace is the model's (and a
   * block's hold pushes its next slot). Without a refusal, nothing when another worker folded
   * within `FOLD_EVERY_MS`; a refusal is taken in whatever the others do (a few tries).
   */
  async #fold(refusal?: Refusal): Promise<void> {
    if (!refusal) {
      if (this.#folding) return;
      this.#folding = true;
    }
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const now = Date.now();
        const read = await this.#readModel(now);
        if (!refusal && now - read.shared.foldedAt < FOLD_EVERY_MS) return;
        const next = fold(read.shared, this.#clock?.accepted ?? 0, now, refusal);
        if (!(await this.#writeModel(next, read.version))) continue;
        await this.#setPace(next, now);
        return;
      }
    } finally {
      if (!refusal) this.#folding = false;
    }
  }

  async #readModel(now: number): Promise<{ shared: SharedModelState; version: number }> {
    this.counts.reads++;
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: this.#pk, sk: "model" },
        ConsistentRead: true,
      }),
    );
    if (!Item) return { shared: newSharedModel(this.#settings, now), version: 0 };
    const item = modelItem.parse(Item);
    const shared = JSON.parse(item.model) as SharedModelState;
    // A state of another shape (the model's `version` changed) is started afresh.
    const fresh = shared.model?.version !== 1;
    return { shared: fresh ? newSharedModel(this.#settings, now) : shared, version: item.version };
  }

  /** Whether the write won (the version read is still the stored one). */
  async #writeModel(shared: SharedModelState, version: number): Promise<boolean> {
    this.counts.folds++;
    try {
      await awsClients().dynamo.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            pk: this.#pk,
            sk: "model",
            version: version + 1,
            model: JSON.stringify(shared),
            expiresAt: Math.floor(shared.foldedAt / 1000) + EXPIRES_SECONDS,
          },
          ConditionExpression: "attribute_not_exists(pk) OR version = :version",
          ExpressionAttributeValues: { ":version": version },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      this.counts.conflicts++;
      return false;
    }
  }

  /**
   * The clock at the model's pace; a block's hold moves its next slot to the hold's end (a slot
   * claimed beyond it is taken twice: a hold is two windows or more, a claim half of one).
   */
  async #setPace(shared: SharedModelState, now: number): Promise<void> {
    const pace = slotPace(shared.model);
    const hold = heldUntil(shared.model, now);
    const values = { ":pace": pace, ":now": now };
    const { Attributes } = await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: this.#pk, sk: "slots" },
        ...(hold === undefined
          ? {
              UpdateExpression: "SET pace = :pace, foldedAt = :now",
              ExpressionAttributeValues: values,
            }
          : {
              UpdateExpression: "SET pace = :pace, foldedAt = :now, nextSlot = :hold",
              ExpressionAttributeValues: { ...values, ":hold": hold },
            }),
        ReturnValues: "ALL_NEW",
      }),
    );
    const clock = clockItem.safeParse(Attributes);
    if (clock.success) this.#clock = clock.data;
  }
}
