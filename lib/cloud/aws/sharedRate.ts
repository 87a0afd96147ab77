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
  newSharedModel,
  type Refusal,
  resumeAt,
  type SharedModelState,
  slotPace,
} from "../rateFold";
import { awsClients } from "./clients";
import { isConditionFailure } from "./instances";

/**
 * A worker claims only while the clock's next free slot is within this of now (ms), and a block
 * of at most this much of the pace: slots are claimed at the pace of their claim, so this bounds
 * the starts a cut comes too late for, and a block is one write for several starts.
 */
const HORIZON_MS = 500;
/** The model takes in the slots started this often at most (ms) when nothing is refused. */
const FOLD_EVERY_MS = 1_000;
/**
 * A request waits this long for its slot at most (ms): then its job goes back to the queue with a
 * delay, rather than a paid function waiting behind a long line.
 */
const MAX_PERMIT_WAIT_MS = 10_000;
/** A slot this late (ms) is still taken by a request that waits (a claim's round trip). */
const STALE_SLOT_MS = 100;
/**
 * A request whose slot is further off than this (ms) reads the clock again this long before it,
 * so a fold's cut or hold reaches the slots already claimed, not only the next claims.
 */
const REREAD_LEAD_MS = 30;
/** The items outlive the last run by an hour, so the next sync starts from what was learned. */
const EXPIRES_SECONDS = 3_600;
/** Tries of a fold that lost to another worker's (each rereads the model). */
const FOLD_TRIES = 5;
const SHARED_RATE = { method: "GET", path: "(the instance's shared request rate)" } as const;

/**
 * What a worker last saw of the clock (the `clock` item). Slots are numbered as they are claimed;
 * slot `k` from `fromSlot` on starts at `fromAt + (k - fromSlot) / pace`, which a fold rewrites, so a slot
 * claimed before a cut or a hold starts at the new schedule's time.
 */
interface Clock {
  /** The first slot no worker holds (ms): the schedule's time of slot `claimed`. */
  nextSlot: number;
  /** Slots a second. */
  pace: number;
  /** Slots claimed by every worker, counted. */
  claimed: number;
  /** The schedule: slot `fromSlot` starts at `fromAt` (ms). */
  fromSlot: number;
  fromAt: number;
  /** The model's last fold (ms), and the schedule's rewrites, counted. */
  foldedAt: number;
  folds: number;
}

const clockItem = z.object({
  nextSlot: z.number(),
  pace: z.number(),
  claimed: z.number(),
  fromSlot: z.number(),
  fromAt: z.number(),
  foldedAt: z.number(),
  folds: z.number(),
});
const modelItem = z.object({ version: z.number(), model: z.string() });

/** When slot `index` starts, by `clock`'s schedule (a slot before `fromSlot` keeps `otherwise`). */
function slotTime(clock: Clock, index: number, otherwise = clock.fromAt): number {
  if (index < clock.fromSlot) return otherwise;
  return clock.fromAt + ((index - clock.fromSlot) * 1000) / clock.pace;
}

/** Slots of the clock started by `now`, counted (those at a later time are not yet). */
function startedBy(clock: Clock | undefined, now: number): number {
  if (!clock) return 0;
  const due = clock.fromSlot + Math.floor(((now - clock.fromAt) * clock.pace) / 1000) + 1;
  return Math.min(clock.claimed, Math.max(clock.fromSlot, due));
}

/** The later view of the clock: schedules rewritten, then slots claimed, counted. */
function later(a: Clock | undefined, b: Clock | undefined): Clock | undefined {
  if (!a || !b) return a ?? b;
  if (a.folds !== b.folds) return a.folds > b.folds ? a : b;
  return a.claimed >= b.claimed ? a : b;
}

/**
 * The instance's request rate, shared by every worker of its runs: lib/rate's model, its state
 * in the runs table (docs/rate-control.md, "The cloud runtime"). Two items: `slots`, a clock of
 * start slots spaced at the model's pace, which a worker claims a block of with one atomic
 * conditional update, and `model`, the model's state, read and written (conditionally on its
 * version) only at a fold: on a 429, or every `FOLD_EVERY_MS` as slots are started.
 * `requestsPerSecond` 0 (no ceiling, no pace) shares nothing.
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

/** A permit, with the time its request started at (ms). */
export interface SlotPermit extends SharedPermit {
  readonly slot: number;
}

/** A slot claimed: its number, and its time by the schedule seen at the claim (ms). */
interface Slot {
  index: number;
  at: number;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(error: unknown): void;
}

/** A process's side of the shared clock: the slots it holds, the requests waiting for one. */
export class SlotBook implements SharedRate {
  readonly #table: string;
  readonly #key: { pk: string; sk: string };
  readonly #modelKey: { pk: string; sk: string };
  readonly #settings: RateSettings;
  #clock: Clock | undefined;
  /** Slots claimed and not yet taken, in time order. */
  #slots: Slot[] = [];
  /** A read of the clock under way, shared by the requests that wait for it. */
  #reading: Promise<void> | undefined;
  #readAt = 0;
  #waiting: Waiter[] = [];
  /** The slots taken over the last horizon: this process's demand. */
  #taken: number[] = [];
  #claiming = false;
  /** Refusals to fold, and whether a fold is under way in this process. */
  #refusals: { refusal: Refusal; folded: () => void; failed: (error: unknown) => void }[] = [];
  #folding = false;
  /** The model's last fold this process read or wrote (the clock's pace may not have changed). */
  #foldedAt = 0;
  /** Requests this process made of the store, for tests and benches. */
  readonly counts = { claims: 0, lostClaims: 0, slots: 0, folds: 0, lostFolds: 0, reads: 0 };

  constructor(table: string, pk: string, settings: RateSettings) {
    this.#table = table;
    this.#key = { pk, sk: "clock" };
    this.#modelKey = { pk, sk: "model" };
    this.#settings = settings;
  }

  async permit(signal?: AbortSignal): Promise<SlotPermit> {
    const deadline = Date.now() + MAX_PERMIT_WAIT_MS;
    const slot = await this.#startAt(await this.#take(signal), deadline, signal);
    this.#taken = [...this.#taken.filter((t) => t > slot - HORIZON_MS), slot];
    return {
      slot,
      // A slot is taken for accepted until told otherwise (`rateFold.ts`).
      accepted() {},
      refused: (retryAfterMs) =>
        new Promise<void>((folded, failed) => {
          const refusal = { startedAt: slot, at: Date.now(), signal: { retryAfterMs } };
          this.#refusals.push({ refusal, folded, failed });
          void this.#fold();
        }),
      unanswered() {},
    };
  }

  /**
   * Waits for the slot's time by the clock's latest schedule, read again `REREAD_LEAD_MS` before
   * it; returns the time it started at. Past `deadline`, its job goes back to the queue.
   */
  async #startAt(slot: Slot, deadline: number, signal: AbortSignal | undefined): Promise<number> {
    let at = slot.at;
    for (;;) {
      const clock = this.#clock;
      if (clock) at = slotTime(clock, slot.index, at);
      if (at > deadline) throw new RateLimitedError(SHARED_RATE, at - Date.now());
      const wait = at - Date.now();
      if (wait <= 0) return at;
      if (wait <= REREAD_LEAD_MS) {
        await sleepUnlessAborted(wait, signal);
        return at;
      }
      await sleepUnlessAborted(wait - REREAD_LEAD_MS, signal);
      await this.#reread();
    }
  }

  /** The clock read again, once for all the requests of this process that ask at about once. */
  async #reread(): Promise<void> {
    if (!this.#reading && Date.now() - this.#readAt > REREAD_LEAD_MS / 2) {
      this.#reading = this.#readClock().finally(() => {
        this.#reading = undefined;
        this.#readAt = Date.now();
      });
    }
    await this.#reading;
  }

  /** A slot: one held, or the next claim's; a job waits `MAX_PERMIT_WAIT_MS` at most. */
  #take(signal: AbortSignal | undefined): Promise<Slot> {
    const now = Date.now();
    const clock = this.#clock;
    const timeOf = (slot: Slot) => (clock ? slotTime(clock, slot.index, slot.at) : slot.at);
    while (this.#slots[0] && timeOf(this.#slots[0]) < now - STALE_SLOT_MS) this.#slots.shift();
    const held = this.#slots.shift();
    if (held !== undefined) return Promise.resolve(held);
    return new Promise<Slot>((resolve, reject) => {
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
          // The horizon is full: try again once it may not be, at a random point of a block's
          // length, so the workers waiting do not all try at once.
          const wait = clock.nextSlot - HORIZON_MS - now + Math.random() * HORIZON_MS;
          await sleepUnlessAborted(wait, undefined);
          continue;
        }
        const pace = clock?.pace ?? slotPace(newRateState(this.#settings));
        // As many as wait, or as this process took over the last horizon if more (its jobs' next
        // requests), within a horizon of the pace: slots claimed and not taken are lost.
        const recent = this.#taken.filter((t) => t > now - HORIZON_MS).length;
        const count = Math.min(
          Math.max(this.#waiting.length, recent),
          Math.max(1, Math.floor((pace * HORIZON_MS) / 1000)),
        );
        for (const slot of await this.#claim(count, pace, now)) {
          const waiter = this.#waiting[0];
          if (waiter) waiter.resolve(slot);
          else this.#slots.push(slot);
        }
        const foldedAt = Math.max(this.#clock?.foldedAt ?? now, this.#foldedAt);
        if (now - foldedAt > FOLD_EVERY_MS * (1 + Math.random())) void this.#fold();
      }
    } catch (error) {
      for (const waiter of [...this.#waiting]) waiter.reject(error);
    } finally {
      this.#claiming = false;
    }
  }

  /**
   * Claims `count` slots at `pace` with one conditional update: after the clock's next free slot
   * while it runs (at `now` or later, at the pace this worker saw), from `now` when it stood (the
   * schedule starts again there). A condition that fails (the clock stood, another worker started
   * it, its pace changed, or it is more than twice the horizon ahead) returns the clock as it is:
   * no slot this time. Each worker keeps the horizon from the clock it saw last.
   */
  async #claim(count: number, pace: number, now: number): Promise<Slot[]> {
    const span = (count * 1000) / pace;
    const running = this.#clock !== undefined && this.#clock.nextSlot >= now;
    const values = {
      ":span": span,
      ":count": count,
      ":now": now,
      ":expires": Math.floor(now / 1000) + EXPIRES_SECONDS,
    };
    this.counts.claims++;
    try {
      const { Attributes } = await awsClients().dynamo.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: this.#key,
          ...(running
            ? {
                UpdateExpression:
                  "SET nextSlot = nextSlot + :span, expiresAt = :expires ADD claimed :count",
                // Twice the horizon: workers that saw the clock at once may all claim, yet not
                // many blocks ahead.
                ConditionExpression: "nextSlot BETWEEN :now AND :latest AND pace = :pace",
                ExpressionAttributeValues: {
                  ...values,
                  ":latest": now + 2 * HORIZON_MS,
                  ":pace": pace,
                },
              }
            : {
                UpdateExpression:
                  "SET nextSlot = :now + :span, fromAt = :now, fromSlot = if_not_exists(claimed, :zero), folds = if_not_exists(folds, :zero), expiresAt = :expires, pace = if_not_exists(pace, :pace), foldedAt = if_not_exists(foldedAt, :now) ADD claimed :count",
                ConditionExpression: "attribute_not_exists(nextSlot) OR nextSlot < :now",
                ExpressionAttributeValues: { ...values, ":pace": pace, ":zero": 0 },
              }),
          ReturnValues: "ALL_NEW",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      const clock = clockItem.parse(Attributes);
      this.#clock = later(this.#clock, clock);
      this.counts.slots += count;
      const first = clock.claimed - count;
      return Array.from({ length: count }, (_, i) => ({
        index: first + i,
        at: slotTime(clock, first + i),
      }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      this.counts.lostClaims++;
      this.#clock = later(this.#clock, clockOf((error as { Item?: unknown }).Item));
      return [];
    }
  }

  /**
   * Folds the slots started and the refusals reported into the model (`rateFold.ts`), written
   * back on its version, then sets the clock's pace to the model's (and a block's hold moves its
   * next slot). One fold at a time in a process, refusals gathered meanwhile going into the next;
   * without a refusal, nothing when another worker folded within `FOLD_EVERY_MS`, nor a second
   * try. A refusal's promise settles once it is folded.
   */
  async #fold(): Promise<void> {
    if (this.#folding) return;
    this.#folding = true;
    const taken = this.#refusals;
    this.#refusals = [];
    try {
      for (let attempt = 0; attempt < (taken.length > 0 ? FOLD_TRIES : 1); attempt++) {
        const now = Date.now();
        const read = await this.#readModel(now);
        if (taken.length === 0 && now - read.shared.foldedAt < FOLD_EVERY_MS) break;
        await this.#readClock();
        const refusals = taken.map((t) => t.refusal);
        const next = fold(read.shared, startedBy(this.#clock, now), now, refusals);
        if (!(await this.#writeModel(next, read.version))) continue;
        this.#foldedAt = now;
        await this.#setPace(next, now);
        break;
      }
      for (const t of taken) t.folded();
    } catch (error) {
      for (const t of taken) t.failed(error);
    } finally {
      this.#folding = false;
    }
    if (this.#refusals.length > 0) void this.#fold();
  }

  async #readClock(): Promise<void> {
    this.counts.reads++;
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({ TableName: this.#table, Key: this.#key, ConsistentRead: true }),
    );
    const clock = clockItem.safeParse(Item);
    if (clock.success) this.#clock = later(this.#clock, clock.data);
  }

  async #readModel(now: number): Promise<{ shared: SharedModelState; version: number }> {
    this.counts.reads++;
    const { Item } = await awsClients().dynamo.send(
      new GetCommand({ TableName: this.#table, Key: this.#modelKey, ConsistentRead: true }),
    );
    if (!Item) return { shared: newSharedModel(this.#settings, now), version: 0 };
    const item = modelItem.parse(Item);
    const shared = JSON.parse(item.model) as SharedModelState;
    this.#foldedAt = Math.max(this.#foldedAt, shared.foldedAt);
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
            ...this.#modelKey,
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
      this.counts.lostFolds++;
      return false;
    }
  }

  /**
   * The clock's schedule rewritten to the model's pace from its first slot not yet started (after
   * the last started, at the new spacing, and after a block's hold), conditionally on no slot
   * claimed meanwhile (the clock as the condition's failure returns it, tried again). Slots
   * already claimed then start at the new schedule's times: their requests read it before.
   */
  async #setPace(shared: SharedModelState, now: number): Promise<void> {
    const resume = resumeAt(shared.model, now);
    const pace = slotPace(shared.model);
    for (let attempt = 0; attempt < FOLD_TRIES; attempt++) {
      const clock = this.#clock;
      if (!clock) return;
      const fromSlot = startedBy(clock, now);
      const due = slotTime(clock, fromSlot);
      if (pace === clock.pace && resume <= due + 1000 / pace) return;
      const lastStart = slotTime(clock, fromSlot - 1, clock.fromAt - 1000 / clock.pace);
      const fromAt = Math.max(resume, lastStart + 1000 / pace);
      const values = {
        ":pace": pace,
        ":now": now,
        ":fromSlot": fromSlot,
        ":fromAt": fromAt,
        ":next": fromAt + ((clock.claimed - fromSlot) * 1000) / pace,
        ":claimed": clock.claimed,
        ":folds": clock.folds,
        ":one": 1,
      };
      this.counts.folds++;
      try {
        const { Attributes } = await awsClients().dynamo.send(
          new UpdateCommand({
            TableName: this.#table,
            Key: this.#key,
            UpdateExpression:
              "SET pace = :pace, foldedAt = :now, fromSlot = :fromSlot, fromAt = :fromAt, nextSlot = :next ADD folds :one",
            ConditionExpression: "claimed = :claimed AND folds = :folds",
            ExpressionAttributeValues: values,
            ReturnValues: "ALL_NEW",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        this.#clock = later(this.#clock, clockItem.parse(Attributes));
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        this.counts.lostFolds++;
        const seen = clockOf((error as { Item?: unknown }).Item);
        if (seen) this.#clock = seen;
      }
    }
  }
}

/** The clock in a condition failure's item (DynamoDB's typed values: numbers as `{ N }`). */
function clockOf(item: unknown): Clock | undefined {
  const typed = item as Record<string, { N?: string } | undefined> | undefined;
  const clock = clockItem.safeParse(
    Object.fromEntries(
      Object.keys(clockItem.shape)
        .filter((k) => typed?.[k]?.N !== undefined)
        .map((k) => [k, Number(typed?.[k]?.N)]),
    ),
  );
  return clock.success ? clock.data : undefined;
}
