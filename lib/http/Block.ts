/**
 * A block (docs/rate-model.md, rules 20 to 24): no start before `heldUntil`; then one probe at a
 * time, ever further apart, until one is accepted. The first probe may go sooner, where a fixed
 * window's end can be guessed (`guessWindowEnd`).
 */
import { probeIntervalMs } from "./paceSchedule";
import { WINDOW_GUESS_MIN_GAIN_MS } from "./rateConstants";

export class Block {
  heldUntil = 0;
  active = false;
  /** When the current (or last) block began, and when the last one ended. */
  startedAt = 0;
  endedAt = Number.NEGATIVE_INFINITY;
  probeInFlight = false;
  /** The first probe's time where a window's end was guessed (`guessWindowEnd`), before `heldUntil`. */
  #guessedEnd: number | undefined;
  /** The window cannot have ended before this (`guessWindowEnd`). */
  #endsAfter = Number.NEGATIVE_INFINITY;
  /** A probe has gone this block: the guess, if any, is spent. */
  #probed = false;
  /** The probe in flight went at the guessed end. */
  #probingGuess = false;

  begin(now: number): void {
    this.active = true;
    this.startedAt = now;
    this.#guessedEnd = undefined;
    this.#endsAfter = Number.NEGATIVE_INFINITY;
    this.#probed = false;
    this.#probingGuess = false;
  }

  hold(now: number, ms: number): void {
    this.heldUntil = Math.max(this.heldUntil, now + ms);
  }

  /**
   * A `Retry-After` of `ms` in whole seconds (rounded up) on the answer to a request sent at
   * `sentAt`: the window ends after `sentAt + ms - 1000`, and no probe goes before that. A fixed
   * window that starts at its first request (rate-limiter-flexible's, express-rate-limit's, Redis'
   * INCR and EXPIRE in the usual way) ends a whole number of seconds, one at least, after that
   * request's answer (`windowFrom`, at the latest): if one such time falls in the header's last
   * second and is sooner than `heldUntil`, the block's first probe goes then. A wrong guess costs
   * that probe's 429 (`AdaptiveRate` learns nothing else from it).
   */
  guessWindowEnd(sentAt: number, ms: number, windowFrom: number | undefined): void {
    this.#endsAfter = Math.max(this.#endsAfter, sentAt + ms - 1000);
    if (this.#probed || windowFrom === undefined) return;
    const seconds = Math.max(1, Math.floor((this.#endsAfter - windowFrom) / 1000) + 1);
    const guess = windowFrom + seconds * 1000;
    this.#guessedEnd = guess <= this.heldUntil - WINDOW_GUESS_MIN_GAIN_MS ? guess : undefined;
  }

  /** No start before this: `heldUntil`, or sooner the probe at a window's guessed end. */
  get startsFrom(): number {
    const at = Math.min(this.heldUntil, this.#guessedEnd ?? Number.POSITIVE_INFINITY);
    return Math.max(at, this.#endsAfter);
  }

  /** The probe in flight went at a window's guessed end. */
  get probingGuess(): boolean {
    return this.#probingGuess;
  }

  /** A start: the probe if blocked. */
  started(): boolean {
    const probe = this.active;
    if (probe) {
      this.probeInFlight = true;
      this.#probed = true;
      this.#probingGuess = this.#guessedEnd !== undefined;
      this.#guessedEnd = undefined;
    }
    return probe;
  }

  /** The probe accepted: the block is over, and so is its hold (it went at a guessed end). */
  ended(now: number): void {
    this.probeInFlight = false;
    this.#probingGuess = false;
    this.active = false;
    this.endedAt = now;
    this.heldUntil = Math.min(this.heldUntil, now);
  }

  /**
   * The probe refused: the next waits `Retry-After` if longer than a second, else a share of the
   * block's age; after a wrong guess, until the header's end that the guess went before.
   */
  probeRefused(now: number, retryAfterMs: number | undefined): number {
    this.probeInFlight = false;
    const guessed = this.#probingGuess;
    this.#probingGuess = false;
    // "Retry-After: 1" is the least the header can say: a window may end well within it.
    if (retryAfterMs !== undefined && retryAfterMs > 1000) this.hold(now, retryAfterMs);
    else if (!guessed) this.hold(now, probeIntervalMs(now - this.startedAt));
    return this.heldUntil;
  }
}
