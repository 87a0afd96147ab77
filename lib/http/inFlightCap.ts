/**
 * A cap on requests in flight, learned for an upstream that limits them rather than their rate
 * (nginx `limit_conn`, a server's pool of workers): such an upstream refuses a request for the
 * number already in flight when it arrives, whatever the pace. Its signature: the recent refusals
 * all started with at least `n` requests in flight, spread over more than a moment, while every
 * request that started with fewer was accepted. The cap is then `n - 1`; a refusal the cap
 * explains says nothing of the rate (the caller does not lower its pace for it).
 *
 * Once the cap has been full for a while with no refusal, one more is tried; a refusal at that
 * level takes it back and doubles the wait before the next try (a cap that was right costs one
 * refusal per try, ever fewer). A refusal at or under the cap, which a cap never makes, drops
 * it: a rate limit can pass for a cap when its refusals come as the pace overshoots, which is when
 * most requests are in flight, and a cap misread that way went down with each later refusal (8,
 * then 2 in flight, below the rate, for a token bucket of 50/s at 40 ms). Nor is slow start's
 * overshoot evidence of a cap: every kind of limit refuses it, and it comes when the most requests
 * are in flight, so its refusals are at the run's highest levels. Counted, they made a cap of a
 * fixed window of 50/s at 200 ms a request (13 in flight, then 11, then 10: 39 429s in 15 s on the
 * fake clock of `limiterKinds.test.ts`, 24 without). They still show a level not to be one (a
 * refusal below it). Except on trial: slow start's first refusal at a small level that no more than
 * one request was accepted at (`EXIT_CAP_*`) puts a cap on trial, which answers accepted with it
 * full confirm, and a refusal at or under it, a block or `EXIT_CAP_TRIAL_MS` unconfirmed drop (the
 * caller holds its exit's cut meanwhile). Read as a rate, a cap of 2 at 40 ms held the pace at 42
 * a second for 6 s (the exit's edge) until probes found it. The decisions only, with the clock
 * passed in.
 */

/** Answers weighed: those of the last this long (their level at start, whether refused). */
export const LEVEL_HISTORY_MS = 10_000;
/** Refusals at or above a level that make a cap, at least this far apart in all. */
export const CAP_AFTER_REFUSALS = 2;
export const CAP_EVIDENCE_SPAN_MS = 1000;
/** Requests accepted below that level (and none refused there) that the cap needs. */
export const CAP_AFTER_ACCEPTED_BELOW = 10;
/** A refused share at or above the level below this is a rate's doing, not a cap's. */
export const CAP_REFUSED_SHARE = 0.1;
/** A full cap with no refusal for this long is raised by one (doubled after each failed try). */
export const CAP_PROBE_MS = 3000;
/**
 * Slow start's first 429 at this many in flight or more (up to the most), with
 * `CAP_AFTER_ACCEPTED_BELOW` accepted below that level and no more than `EXIT_CAP_ACCEPTED_ABOVE`
 * at or above it (one answer on its way back, which the upstream no longer counted), puts a cap
 * one under it on trial; this many answers accepted with it full, of requests started under it,
 * confirm it within `EXIT_CAP_TRIAL_MS`, or it is dropped: demand that never fills the cap (3
 * workers against a bucket of one, two of them waiting out a `Retry-After`) cannot test it, and
 * the exit's pace is held meanwhile.
 */
export const EXIT_CAP_MIN_LEVEL = 3;
export const EXIT_CAP_MAX_LEVEL = 4;
export const EXIT_CAP_ACCEPTED_ABOVE = 1;
export const EXIT_CAP_CONFIRM = 10;
export const EXIT_CAP_TRIAL_MS = 1000;

/** What an answer's request was when it started. */
export interface AnsweredStart {
  level: number;
  startedAt: number;
  slowStart: boolean;
}

interface Answer {
  level: number;
  refused: boolean;
  at: number;
  /** Started in slow start (refused: its overshoot). */
  slowStart: boolean;
}

export class InFlightCap {
  #inFlight = 0;
  #cap = Number.POSITIVE_INFINITY;
  readonly #answers: Answer[] = [];
  /** When the cap was set or last raised; whether it has been full since; a raise on trial. */
  #changedAt = 0;
  #filled = false;
  #trying = false;
  #tryAfterMs = CAP_PROBE_MS;
  #lastRefusal = Number.NEGATIVE_INFINITY;
  #exitSeen = false;
  #onTrial = false;
  /** How the last trial ended, until taken (`takeTrialEnd`). */
  #trialEnd: "confirmed" | "dropped" | undefined;
  /** When the cap on trial was set: only requests started since test it. */
  #trialFrom = 0;
  #trialAccepted = 0;

  /** The learned cap (`Infinity` until one is learned). */
  get cap(): number {
    return this.#cap;
  }

  /**
   * A cap read from slow start's first 429 (`EXIT_CAP_*`), on trial: `EXIT_CAP_CONFIRM` answers
   * accepted with it full confirm it; a refusal at or under it, `drop` or `EXIT_CAP_TRIAL_MS`
   * unconfirmed drops it.
   */
  get onTrial(): boolean {
    return this.#onTrial;
  }

  /** How a trial ended since the last call, if one did (a confirmed trial keeps its cap). */
  takeTrialEnd(): "confirmed" | "dropped" | undefined {
    const end = this.#trialEnd;
    this.#trialEnd = undefined;
    return end;
  }

  /** The cap on trial dropped: a block (a cap never makes one) or a rate from headers. */
  drop(now: number): void {
    if (this.#onTrial) this.#setCap(Number.POSITIVE_INFINITY, now);
  }

  /** Whether another start would pass the cap. */
  get full(): boolean {
    return this.#inFlight >= this.#cap;
  }

  /** A start: its level, the requests in flight with it included. */
  started(): number {
    this.#inFlight++;
    if (this.#inFlight >= this.#cap) this.#filled = true;
    return this.#inFlight;
  }

  /** An answer that says nothing of the upstream's limits (no answer at all). */
  unanswered(): void {
    this.#inFlight--;
  }

  /**
   * An answer to a request that started at `start.level` (in slow start: `start.slowStart`);
   * `exit`: a refusal while the caller is still in slow start. For a refusal, whether the cap
   * explains it (a cap just learned, a raise refused, or a level the cap would not allow now).
   */
  answered(start: AnsweredStart, refused: boolean, now: number, exit = false): boolean {
    const { level, slowStart } = start;
    this.#inFlight--;
    this.#answers.push({ level, refused, at: now, slowStart });
    while ((this.#answers[0] as Answer).at <= now - LEVEL_HISTORY_MS) this.#answers.shift();
    if (this.#onTrial && now - this.#trialFrom > EXIT_CAP_TRIAL_MS) this.drop(now);
    if (!refused) {
      const tests = this.#onTrial && start.startedAt >= this.#trialFrom && level >= this.#cap;
      if (tests && ++this.#trialAccepted >= EXIT_CAP_CONFIRM) {
        this.#onTrial = false;
        this.#trialEnd = "confirmed";
      }
      this.#tryRaise(now);
      return false;
    }
    this.#lastRefusal = now;
    if (this.#trying && level >= this.#cap) {
      this.#cap--;
      this.#trying = false;
      this.#tryAfterMs *= 2;
      this.#changed(now);
      return true;
    }
    if (level > this.#cap) return true;
    if (Number.isFinite(this.#cap)) {
      // A cap of n never refuses a request that started with n or fewer in flight (fewer still
      // reach the upstream: answers are on their way back): this one was refused for something
      // else, a rate, whose overshoot brought more requests in flight, and the cap was misread.
      this.#setCap(Number.POSITIVE_INFINITY, now);
      return false;
    }
    if (exit && !this.#exitSeen) {
      this.#exitSeen = true;
      const small = level >= EXIT_CAP_MIN_LEVEL && level <= EXIT_CAP_MAX_LEVEL;
      if (small && this.#acceptedOnlyBelow(level)) {
        this.#setCap(level - 1, now);
        this.#onTrial = true;
        this.#trialFrom = now;
        this.#trialAccepted = 0;
        return false;
      }
    }
    if (level >= 2 && this.#refusedByLevel(level, now)) {
      this.#setCap(level - 1, now);
      return true;
    }
    return false;
  }

  /** A cap learned (or `Infinity`: none), its raises starting over. */
  #setCap(cap: number, now: number): void {
    this.#cap = cap;
    if (this.#onTrial) this.#trialEnd = "dropped";
    this.#onTrial = false;
    this.#trying = false;
    this.#tryAfterMs = CAP_PROBE_MS;
    this.#changed(now);
  }

  #refusedByLevel(level: number, now: number): boolean {
    let above = 0;
    let refusedAbove = 0;
    let below = 0;
    let firstRefusal = now;
    for (const answer of this.#answers) {
      if (answer.level < level) {
        if (answer.refused) return false;
        below++;
      } else if (!(answer.refused && answer.slowStart)) {
        above++;
        if (answer.refused) {
          refusedAbove++;
          firstRefusal = Math.min(firstRefusal, answer.at);
        }
      }
    }
    if (refusedAbove < CAP_AFTER_REFUSALS || below < CAP_AFTER_ACCEPTED_BELOW) return false;
    // Every start at that level or above refused, or refusals there spread over a while.
    if (refusedAbove === above) return true;
    return now - firstRefusal >= CAP_EVIDENCE_SPAN_MS && refusedAbove >= CAP_REFUSED_SHARE * above;
  }

  /** Whether what was accepted so far stayed under `level` (`EXIT_CAP_ACCEPTED_ABOVE`). */
  #acceptedOnlyBelow(level: number): boolean {
    let below = 0;
    let above = 0;
    for (const answer of this.#answers) {
      if (answer.refused) continue;
      if (answer.level >= level) above++;
      else below++;
    }
    return below >= CAP_AFTER_ACCEPTED_BELOW && above <= EXIT_CAP_ACCEPTED_ABOVE;
  }

  #tryRaise(now: number): void {
    if (!Number.isFinite(this.#cap) || !this.#filled || this.#onTrial) return;
    if (now - this.#changedAt < this.#tryAfterMs || now - this.#lastRefusal < this.#tryAfterMs) {
      return;
    }
    this.#cap++;
    this.#trying = true;
    this.#changed(now);
  }

  #changed(now: number): void {
    this.#changedAt = now;
    this.#filled = this.#inFlight >= this.#cap;
  }
}
