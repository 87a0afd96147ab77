/**
 * The rate model in one process (docs/rate-model.md): its state held here, each call one
 * transition of `model.ts`; a caller sharing the state elsewhere calls the transitions itself.
 */
import * as model from "./model";
import { type HeaderSource, signalOf } from "./signal";
import { newRateState, orInfinity, type RateSettings, type RateState, type Ticket } from "./state";

export class RateModel {
  #s: RateState;

  constructor(settings: RateSettings | RateState = {}) {
    this.#s = "version" in settings ? settings : newRateState(settings);
  }

  /** The state, plain JSON data (never changed in place: a later call replaces it). */
  get state(): RateState {
    return this.#s;
  }

  /** The pace in requests per second (`Infinity`: not paced). */
  get rate(): number {
    return orInfinity(this.#s.pace);
  }

  /** The limit estimated, requests per second (`Infinity` until a refusal or a header says). */
  get maxRate(): number {
    return orInfinity(this.#s.estimate);
  }

  /** The cap on requests in flight learned (`Infinity`: none). */
  get concurrency(): number {
    return orInfinity(this.#s.cap);
  }

  get blocked(): boolean {
    return this.#s.blocked;
  }

  /** When the current (or last) block began. */
  get blockStartedAt(): number {
    return this.#s.blockFrom;
  }

  nextStartAt(now: number): number | undefined {
    return model.nextStartAt(this.#s, now);
  }

  start(now: number): Ticket {
    const { state, ticket } = model.start(this.#s, now);
    this.#s = state;
    return ticket;
  }

  accepted(ticket: Ticket, now: number, headers?: HeaderSource): void {
    this.#s = model.accepted(this.#s, ticket, now, signalOf(headers, now));
  }

  unanswered(ticket: Ticket): void {
    this.#s = model.unanswered(this.#s, ticket);
  }

  /** A refusal, `Retry-After` in ms if any (`headers` may say more): when to retry, all held? */
  refused(
    ticket: Ticket,
    now: number,
    retryAfterMs: number | undefined,
    headers?: HeaderSource,
    hold = true,
  ): model.Verdict {
    const signal = { ...signalOf(headers, now), retryAfterMs };
    const { state, verdict } = model.refused(this.#s, ticket, now, signal, hold);
    this.#s = state;
    return verdict;
  }
}
