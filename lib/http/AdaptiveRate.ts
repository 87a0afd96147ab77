/**
 * The request rate to one upstream, learned from its answers: the decisions only, with the clock
 * passed in as `now`, so the logic is tested without timers (the `RateLimiter` does the waiting).
 * The model, rule by rule with its reasons and constants, is docs/rate-model.md.
 *
 * This file holds the calls and what they decide themselves: when a start may go (rules 1 to 3),
 * the pace's growth on good answers (6 to 9), and what a 429 is (a block's probe, a cap's, one of
 * a request sent before the last cut, one that opens or adds to an episode). The rest are
 * functions of the state (`rateState.ts`): `episodeDecisions.ts` (slow start's exit, episodes,
 * probes, noise), `blockDecisions.ts` (blocks, a cap on trial), `headerDecisions.ts`
 * (`RateLimit-*`); below them `StartLog.ts`, `episode.ts`, `RefusalNoise.ts`, `inFlightCap.ts`,
 * `Block.ts`, `headerLimit.ts`, `paceSchedule.ts`, `rateConstants.ts`, `rateTypes.ts`.
 *
 * Invariants: the pace never exceeds the configured ceiling, nor falls below `MIN_RATE` unless
 * the ceiling does; good answers grow it only while no episode is open; the edge is `Infinity`
 * until a 429 or a header says; while blocked only the block's probe starts, one at a time; no
 * request starts while a learned cap is full; a 429 of a request sent before the last cut, or
 * refused for a cap, opens no episode.
 */
import { beginBlock, dropTrial, guessWindowEnd, trialEnded } from "./blockDecisions";
import { countAccepted, countRefusal, inFlightAtExit, weighs } from "./episode";
import { openEpisode, weigh } from "./episodeDecisions";
import { learnFromHeaders } from "./headerDecisions";
import { grownPace } from "./paceSchedule";
import {
  BLOCKING_RETRY_AFTER_MS,
  EDGE_SHARE,
  FIRST_PROBE_MS,
  GROWTH_OVER_SENT,
  MIN_RATE,
  TOLERANCE_MS,
  WINDOW_MS,
  WINDOW_SPENT_SHARE,
} from "./rateConstants";
import { cut, newRateState, plateau, type RateState } from "./rateState";
import type { AdaptiveRateSettings, RefusalVerdict, StartTicket } from "./rateTypes";
import { parseRateLimitState } from "./retryPolicy";
import type { AnswerHeaders } from "./types";

export * from "./rateConstants";
export type { AdaptiveRateSettings, RefusalVerdict, StartTicket } from "./rateTypes";

export class AdaptiveRate {
  readonly #s: RateState;

  constructor(settings: AdaptiveRateSettings = {}) {
    this.#s = newRateState(settings);
  }

  /** The current pace in requests per second (`Infinity`: not paced). */
  get rate(): number {
    return this.#s.rate;
  }

  /** The edge: the rate the upstream was learned to sustain (`Infinity` until a 429 or a header says). */
  get maxRate(): number {
    return this.#s.maxRate;
  }

  /** The cap on requests in flight learned (`Infinity`: none). */
  get concurrency(): number {
    return this.#s.inFlight.cap;
  }

  get blocked(): boolean {
    return this.#s.block.active;
  }

  /** When the current (or last) block began. */
  get blockStartedAt(): number {
    return this.#s.block.startedAt;
  }

  /**
   * When the next request may start: `now` or later, or `undefined` while a probe is out or the
   * learned cap on requests in flight is reached (wait for an answer). Does not reserve anything;
   * call `start` when it is time.
   */
  nextStartAt(now: number): number | undefined {
    const s = this.#s;
    if (s.block.active && s.block.probeInFlight) return undefined;
    if (s.inFlight.full) return undefined;
    const at = Math.max(now, s.block.startsFrom);
    if (s.block.active || !Number.isFinite(s.rate)) return at;
    return Math.max(
      at,
      s.nextStartAt - TOLERANCE_MS,
      s.log.windowFreeAt(now, this.#startsPerWindow, s.headerLimit),
    );
  }

  /**
   * Starts allowed within any second: the pace, or at the plateau the edge it keeps `EDGE_SHARE`
   * below, whole (a window of 5 a second measured as 5, paced at 4.9, took 4 a second).
   */
  get #startsPerWindow(): number {
    const s = this.#s;
    const atPlateau = s.rate >= plateau(s) - 1e-6;
    return atPlateau ? Math.min(s.ceiling, Math.max(s.rate, s.maxRate)) : s.rate;
  }

  /** Records a start at `now` (which `nextStartAt` allowed). */
  start(now: number): StartTicket {
    const s = this.#s;
    const probe = s.block.started();
    const level = s.inFlight.started();
    const ticket: StartTicket = {
      startedAt: now,
      pace: s.rate,
      level,
      probe,
      refused: false,
      slowStart: s.slowStart,
    };
    s.log.forget(now, s.headerLimit);
    s.log.started(ticket);
    if (Number.isFinite(s.rate)) {
      // GCRA: the theoretical start time moves one interval per start.
      s.nextStartAt = Math.max(s.nextStartAt, now) + 1000 / s.rate;
    }
    return ticket;
  }

  /** An answer other than 429 (any status: the upstream processed the request). */
  accepted(ticket: StartTicket, now: number, headers?: AnswerHeaders): void {
    const s = this.#s;
    s.log.forget(now, s.headerLimit);
    s.inFlight.answered(ticket, false, now);
    trialEnded(s, now);
    s.log.accepted(now);
    s.noise.accepted(ticket);
    s.windowFrom ??= now;
    if (ticket.probe) {
      s.block.ended(now);
      s.windowFrom = now;
      // Resume spaced from now: no burst.
      s.nextStartAt = now;
      s.lastUpdate = now;
      s.episode = undefined;
    }
    const episode = s.episode;
    if (episode) {
      episode.anyAccepted++;
      if (weighs(episode, ticket)) {
        countAccepted(episode, ticket, now);
        weigh(s, now);
      }
    }
    if (headers) learnFromHeaders(s, parseRateLimitState(headers, now), now);
    this.#grow(now);
  }

  /** No answer (network error, timeout, abort): nothing learned; a probe may be sent again. */
  unanswered(ticket: StartTicket): void {
    this.#s.inFlight.unanswered();
    if (ticket.probe) this.#s.block.probeInFlight = false;
  }

  /**
   * A 429, with its `Retry-After` in ms if any: lowers the pace or blocks, and says when to retry.
   * `hold: false` (a caller that waits elsewhere, such as a queue worker) learns the rate only:
   * no block holds the requests that come after it.
   */
  refused(
    ticket: StartTicket,
    now: number,
    retryAfterMs: number | undefined,
    headers?: AnswerHeaders,
    hold = true,
  ): RefusalVerdict {
    const s = this.#s;
    ticket.refused = true;
    if (ticket.probe && s.block.probingGuess) {
      // A window's end guessed wrong (`Block.guessWindowEnd`): that is all this 429 says. Taken as
      // a refusal, it made the next one look like a limit crossed (no quiet before it): against a
      // sliding log of 500 per 10 s, the pace was cut to 8 a second for 17 s.
      s.inFlight.unanswered();
      return { retryAt: s.block.probeRefused(now, retryAfterMs), blocked: true };
    }
    s.log.forget(now, s.headerLimit);
    const capBefore = s.inFlight.cap;
    const byCap = s.inFlight.answered(ticket, true, now, s.slowStart);
    if (s.inFlight.cap < capBefore && !Number.isFinite(capBefore) && !s.inFlight.onTrial) {
      // A cap on requests in flight, just learned: its refusals said nothing of a rate.
      s.maxRate = Number.POSITIVE_INFINITY;
      s.episode = undefined;
    }
    trialEnded(s, now);
    const previousRefusal = s.lastRefusal;
    s.lastRefusal = now;
    // What a refused probe cost: the requests in flight when it was refused (not a cap's, nor
    // a block's probe), refused after it.
    if (!byCap && !ticket.probe && ticket.startedAt < s.probeFailedAt) s.probeCost++;
    s.noise.refused(ticket, byCap);
    if (headers) learnFromHeaders(s, parseRateLimitState(headers, now), now);
    if (ticket.probe) {
      return { retryAt: s.block.probeRefused(now, retryAfterMs), blocked: true };
    }
    const longWait = retryAfterMs !== undefined && retryAfterMs >= BLOCKING_RETRY_AFTER_MS;
    if (s.block.active) {
      if (longWait) guessWindowEnd(s, ticket, retryAfterMs, headers);
      return { retryAt: s.block.startsFrom, blocked: true };
    }
    // A request sent before the last cut was refused for the old pace (slow start's exit weighs
    // those first); one refused for the number in flight says nothing of the pace.
    const fresh = !byCap && (ticket.startedAt >= s.cutAt || inFlightAtExit(s.episode, ticket));
    let refusingAll = false;
    if (s.episode) refusingAll = countRefusal(s.episode, ticket, fresh);
    else if (fresh) openEpisode(s, ticket, now, previousRefusal);
    if (refusingAll) {
      // A window used up: no faster than what it accepted over the last one, counted, not
      // extrapolated from a shorter span (a sliding log of 5 a second, at 200 ms a request, was
      // measured at 8.5 a second, then 3). After a probe the edge stands (a log that counts
      // refusals refuses everything a while after one).
      if (!s.episode?.probe) {
        const accepted = s.log.acceptedOverWindow(now);
        if (s.episode && accepted >= WINDOW_SPENT_SHARE * s.rate) {
          // Measured: probing above it waits as after a probe refused now, which costs the 429s
          // so far and those of the requests still in flight.
          s.failedProbes = Math.max(s.failedProbes, 1);
          s.probeFailedAt = now;
          s.probeCost = s.episode.anyRefused;
        }
        s.maxRate = Math.max(MIN_RATE / EDGE_SHARE, accepted);
      }
      dropTrial(s, now);
      cut(s, now, plateau(s));
      s.episode = undefined;
    } else {
      weigh(s, now);
    }
    if (hold && (longWait || refusingAll)) {
      beginBlock(s, now);
      s.block.hold(now, longWait ? retryAfterMs : FIRST_PROBE_MS);
      if (longWait) guessWindowEnd(s, ticket, retryAfterMs, headers);
      return { retryAt: s.block.startsFrom, blocked: true };
    }
    return { retryAt: now + (retryAfterMs ?? 0), blocked: false };
  }

  /** Good answers: slow start doubles; later the pace regains the edge, holds, then probes. */
  #grow(now: number): void {
    const s = this.#s;
    const last = s.lastUpdate ?? now;
    s.lastUpdate = now;
    if (!Number.isFinite(s.rate) || s.episode) return;
    const next = grownPace(s.rate, now, last, {
      slowStart: s.slowStart,
      maxRate: s.maxRate,
      cutAt: s.cutAt,
      plateauFrom: s.plateauFrom,
      failedProbes: s.failedProbes,
      probeCost: s.probeCost,
    });
    const plateauRate = plateau(s);
    if (!s.slowStart && s.rate < plateauRate && next >= plateauRate) s.plateauFrom = now;
    const cap = s.slowStart
      ? 2 * s.log.sentRate(now, WINDOW_MS)
      : GROWTH_OVER_SENT * s.log.sentRate(now, WINDOW_MS / 4);
    const grown = Math.min(next, cap, s.noise.trialCeiling);
    s.rate = Math.min(s.ceiling, Math.max(s.rate, grown));
  }
}
