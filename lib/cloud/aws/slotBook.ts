import {
  onAbort,
  RateLimitedError,
  rateChange,
  rateView,
  type SharedPermit,
  type SharedRate,
  sleepUnlessAborted,
} from "../../http";
import { type Logger, silentLogger } from "../../logging";
import { newRateState, type RateSettings } from "../../rate";
import {
  afterFold,
  type Clock,
  fold,
  foldedOf,
  later,
  RecentTimes,
  reschedule,
  type SharedModelState,
  slotPace,
  slotTime,
  startedBy,
  unfolded,
} from "../rateFold";
import {
  type ClockChange,
  claimChange,
  type RateItems,
  type RateRead,
  readClock,
  readRate,
  rescheduleChange,
  tellRefusal,
  trimInbox,
  trimPastChange,
  updateClock,
  writeModel,
} from "./rateItems";

/**
 * A worker claims while the clock's next free slot is within this of now (ms), a block of this much
 * of the pace at most: it bounds the starts a cut comes too late for; a block is one write.
 */
const HORIZON_MS = 500;
/** The model takes in the slots started this often at most (ms) when nothing is refused. */
const FOLD_EVERY_MS = 1_000;
/** A request waits this long for its slot at most (ms), then its job goes back to the queue. */
const MAX_PERMIT_WAIT_MS = 10_000;
/**
 * A slot this late (ms) is still taken by a request that waits; and the longest store round trip
 * taken for one (a cold client's first, or one the SDK retried, is no measure of the next).
 */
const STALE_SLOT_MS = 100;
/**
 * A slot further off (ms) is read again this long before it, plus a store round trip (most are
 * back by then, `TRIP_SHARE`): a fold's cut reaches it, and the read is back by its time.
 */
const REREAD_LEAD_MS = 30;
/** The schedule's past pieces kept while it stands, most (a restart after an idle spell adds one). */
const PAST_PIECES = 4;
/** A claim's slots begin once this share of the last round trips to the clock would be back. */
const TRIP_SHARE = 0.9;
/** Tries of a fold that lost to another worker's (each rereads the model). */
const FOLD_TRIES = 5;
const SHARED_RATE = { method: "GET", path: "(the instance's shared request rate)" } as const;

/** A permit, with the time its request started at (ms). */
export interface SlotPermit extends SharedPermit {
  readonly slot: number;
}

/** A slot claimed: its number, and its time by the schedule seen at the claim (ms). */
type Slot = { index: number; at: number };
type Waiter = { resolve(slot: Slot): void; reject(error: unknown): void };

/** A process's side of the shared clock: the slots it holds, the requests waiting for one. */
export class SlotBook implements SharedRate {
  readonly #items: RateItems;
  readonly #settings: RateSettings;
  readonly #logger: Logger;
  readonly #madeAt = Date.now();
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
  readonly #answers = new RecentTimes();
  /** The clock's last round trips (claims, reads), ms. */
  readonly #trips = new RecentTimes();
  /** Refusals told (their inbox numbers) to see folded, and whether a fold is under way here. */
  #refusals: { told: number; folded: () => void; failed: (error: unknown) => void }[] = [];
  #folding = false;
  /** The model's last fold this process read or wrote (the clock's pace may not have changed). */
  #foldedAt = 0;
  /** Requests this process made of the store, for tests and benches. */
  readonly counts = { claims: 0, lostClaims: 0, slots: 0, folds: 0, lostFolds: 0, reads: 0 };

  constructor(table: string, pk: string, settings: RateSettings, logger = silentLogger) {
    this.#items = { table, pk };
    this.#settings = settings;
    this.#logger = logger;
  }

  async permit(signal?: AbortSignal): Promise<SlotPermit> {
    const deadline = Date.now() + MAX_PERMIT_WAIT_MS;
    const slot = await this.#startAt(await this.#take(signal), deadline, signal);
    this.#taken = [...this.#taken.filter((t) => t > slot - HORIZON_MS), slot];
    return {
      slot,
      // A slot is taken for accepted until told otherwise (`rateFold.ts`); its answer is timed.
      accepted: () => this.#answers.add(Date.now() - slot),
      refused: async (retryAfterMs) => {
        this.#answers.add(Date.now() - slot);
        const refusal = { startedAt: slot, at: Date.now(), signal: { retryAfterMs } };
        const told = await tellRefusal(this.#items, refusal, Date.now());
        await new Promise<void>((folded, failed) => {
          this.#refusals.push({ told, folded, failed });
          void this.#fold();
        });
      },
      unanswered() {},
    };
  }

  /**
   * Waits for the slot's time by the clock's latest schedule, read again `REREAD_LEAD_MS` and a
   * round trip before it; returns the time it started at. Past `deadline`, its job goes back to
   * the queue.
   */
  async #startAt(slot: Slot, deadline: number, signal: AbortSignal | undefined): Promise<number> {
    let at = slot.at;
    for (;;) {
      const clock = this.#clock;
      if (clock) at = slotTime(clock, slot.index, at);
      if (at > deadline) throw new RateLimitedError(SHARED_RATE, at - Date.now());
      const wait = at - Date.now();
      if (wait <= 0) return at;
      const lead = REREAD_LEAD_MS + this.#tripMs();
      if (wait <= lead) {
        await sleepUnlessAborted(wait, signal);
        return at;
      }
      await sleepUnlessAborted(wait - lead, signal);
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

  /** A store round trip, most of the last ones' (`TRIP_SHARE`), `STALE_SLOT_MS` at most. */
  #tripMs(): number {
    return Math.min(STALE_SLOT_MS, this.#trips.upTo(TRIP_SHARE));
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
   * while it runs (a claim's round trip from `now` or later, at the pace this worker saw), from
   * there when it stood (the schedule starts again there). A condition that fails (the clock
   * stood, another worker started it, its pace changed, or it is more than twice the horizon
   * ahead) returns the clock as it is: no slot this time. Each worker keeps the horizon from the
   * clock it saw last.
   */
  async #claim(count: number, pace: number, now: number): Promise<Slot[]> {
    // A slot due while its claim is on the way starts late by the rest of the round trip: next
    // to the slot after it, in a fixed window that opened at it and counts both.
    const from = now + this.#tripMs();
    const running = this.#clock !== undefined && this.#clock.nextSlot >= from;
    this.counts.claims++;
    const change = claimChange(this.#clock, running, count, pace, from, 2 * HORIZON_MS);
    const clock = await this.#update(change, now);
    this.#trips.add(Date.now() - now);
    if (!clock) {
      this.counts.lostClaims++;
      return [];
    }
    this.counts.slots += count;
    const first = clock.claimed - count;
    return Array.from({ length: count }, (_, i) => ({
      index: first + i,
      at: slotTime(clock, first + i),
    }));
  }

  /**
   * Folds the slots started and the refusals told (the inbox's, every worker's) into the model
   * (`rateFold.ts`), written back on its version, then sets the clock's pace to the model's (and a
   * block's hold moves its next slot) and trims the inbox. One fold at a time in a process; a
   * refusal told is settled once any worker's fold has taken it in. Without one waiting, nothing
   * when another worker folded within `FOLD_EVERY_MS`, nor a second try.
   */
  async #fold(): Promise<void> {
    if (this.#folding) return;
    this.#folding = true;
    const waiting = this.#refusals;
    this.#refusals = [];
    const last = Math.max(-1, ...waiting.map((w) => w.told));
    try {
      for (let attempt = 0; attempt < (waiting.length > 0 ? FOLD_TRIES : 1); attempt++) {
        const now = Date.now();
        const read = await this.#read(now);
        const refusals = unfolded(read.shared, read.inbox);
        if (
          waiting.length > 0
            ? foldedOf(read.shared, read.inbox) > last
            : refusals.length === 0 && now - read.shared.foldedAt < FOLD_EVERY_MS
        )
          break;
        // A model that has taken in no slot spreads its first from the clock's first claim: at the
        // pace instead, a first second's 12 slots read as 22 a second accepted.
        const clock = this.#clock;
        if (read.shared.startedFolded === 0 && clock) {
          read.shared.countedTo = Math.min(read.shared.countedTo, clock.foldedAt);
        }
        // Slots whose answers may still come are not yet counted; one counted is taken for
        // accepted when its answer came, about.
        const answerMs = this.#answers.upTo(0.5);
        const countedTo = now - answerMs;
        const started = { count: startedBy(clock, countedTo), countedTo, clock, answerMs };
        const next = afterFold(fold(read.shared, started, now, refusals), read.inbox);
        if (!(await this.#writeModel(next, read.version))) continue;
        this.#foldedAt = now;
        const change = rateChange(
          rateView(read.shared.model),
          rateView(next.model),
          now - this.#madeAt,
        );
        if (change)
          this.#logger.debug("learned rate moved", { ...change, refusals: refusals.length });
        await this.#setPace(next, now);
        if (read.inbox.refusals.length > 0) {
          await trimInbox(this.#items, read.inbox.base, read.inbox.refusals.length);
        }
        break;
      }
      for (const w of waiting) w.folded();
    } catch (error) {
      for (const w of waiting) w.failed(error);
    } finally {
      this.#folding = false;
    }
    if (this.#refusals.length > 0) void this.#fold();
  }

  /**
   * The clock's schedule rewritten to the model's pace (`reschedule`: a cut or a hold from its
   * first slot not yet started, a faster one after the slots claimed), conditionally on no slot
   * claimed meanwhile (the clock as the condition's failure returns it, tried again). Slots
   * already claimed and moved later start at the new schedule's times: their requests read it
   * before. The schedule's past pieces the model has folded are dropped then, or once more than
   * `PAST_PIECES` while the schedule stands.
   */
  async #setPace(shared: SharedModelState, now: number): Promise<void> {
    for (let attempt = 0; attempt < FOLD_TRIES; attempt++) {
      const clock = this.#clock;
      if (!clock) return;
      const next = reschedule(clock, shared.model, now);
      const change = next
        ? rescheduleChange(clock, next, now, shared.startedFolded)
        : clock.past.length > 3 * PAST_PIECES && trimPastChange(clock, shared.startedFolded);
      if (!change) return;
      this.counts.folds++;
      if (await this.#update(change, now)) return;
      this.counts.lostFolds++;
    }
  }

  /**
   * A conditional update of the clock; a failed condition shows the clock as it is, taken as is:
   * an item expired, or made again by another worker (its counts from 0), is no older view to keep,
   * and a restart claim conditioned on the view kept failed on it for good.
   */
  async #update(change: ClockChange, now: number): Promise<Clock | undefined> {
    const { clock, seen } = await updateClock(this.#items, change, now);
    this.#clock = clock ? later(this.#clock, clock) : seen;
    return clock;
  }

  async #readClock(): Promise<void> {
    this.counts.reads++;
    const sent = Date.now();
    this.#clock = later(this.#clock, await readClock(this.#items));
    this.#trips.add(Date.now() - sent);
  }

  /** The model, the clock and the inbox, read at once. */
  async #read(now: number): Promise<RateRead> {
    this.counts.reads++;
    const read = await readRate(this.#items, this.#settings, now);
    this.#clock = later(this.#clock, read.clock);
    this.#foldedAt = Math.max(this.#foldedAt, read.shared.foldedAt);
    return read;
  }

  async #writeModel(shared: SharedModelState, version: number): Promise<boolean> {
    this.counts.folds++;
    const won = await writeModel(this.#items, shared, version);
    if (!won) this.counts.lostFolds++;
    return won;
  }
}
