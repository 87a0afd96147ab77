/**
 * The controller's decisions on a block (docs/rate-model.md, rules 20 to 24) and on a cap in flight
 * learned at slow start's exit, which a block ends (rule 30): they take the controller's state
 * (`rateState.ts`); `Block.ts` holds and times the block itself.
 */
import { cut, type RateState } from "./rateState";
import type { StartTicket } from "./rateTypes";
import { retryAfterInSeconds } from "./retryPolicy";
import type { AnswerHeaders } from "./types";

/**
 * A cap on trial since slow start's exit, if its trial just ended (`takeTrialEnd`). Confirmed:
 * the exit was the cap's, and the rate is still unknown (slow start goes on, within the cap).
 * Dropped: the exit was a rate's, and the pace goes where the exit would have cut it (the
 * refusals of requests sent before, at the pace held on trial, are that pace's, as after any
 * cut). Dated at the exit instead, the cut counted them as fresh: a bucket of one at 40 ms took
 * 15.1 -> 17.1 s on the fake clock.
 */
export function trialEnded(s: RateState, now: number): void {
  const end = s.inFlight.takeTrialEnd();
  if (end === undefined) return;
  const deferred = s.trialCut;
  s.trialCut = undefined;
  if (end === "confirmed") {
    s.maxRate = Number.POSITIVE_INFINITY;
    s.slowStart = true;
    s.episode = undefined;
    s.log.measureAcceptedFrom(undefined);
  } else if (deferred !== undefined) {
    cut(s, now, Math.min(s.rate, deferred));
  }
}

/** A blocking `Retry-After` in whole seconds may say when a fixed window ends (`Block.guessWindowEnd`). */
export function guessWindowEnd(
  s: RateState,
  ticket: StartTicket,
  retryAfterMs: number,
  headers: AnswerHeaders | undefined,
): void {
  if (retryAfterInSeconds(headers)) {
    s.block.guessWindowEnd(ticket.startedAt, retryAfterMs, s.windowFrom);
  }
}

/** A block, or a rate from headers: no cap made slow start's exit. */
export function dropTrial(s: RateState, now: number): void {
  s.inFlight.drop(now);
  trialEnded(s, now);
}

export function beginBlock(s: RateState, now: number): void {
  dropTrial(s, now);
  s.block.begin(now);
  s.log.measureAcceptedFrom(undefined);
}
