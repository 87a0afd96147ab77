/**
 * The request rate to one upstream, learned from its answers: the decisions only, with the clock
 * passed in, so the logic is tested without timers (the `RateLimiter` does the waiting).
 *
 * Upstreams limit in different shapes (a token bucket with a burst of 1 or of a whole second, a
 * fixed window of a second or of a minute, a sliding log that counts refusals, a cap on requests
 * in flight), and most say no more than 429. So the controller keeps apart the pace, a rate at
 * which starts are spaced evenly (never a second's allowance at once), and the edge, what it has
 * learned the upstream sustains; the pace stays `EDGE_SHARE` below the edge.
 * - Slow start: from `START_RATE` the pace doubles every `SLOW_START_DOUBLING_MS` until a 429,
 *   which drops it to `EDGE_SHARE` of what was accepted over the last second (a window's limit;
 *   more than a bucket's rate, whose burst it includes). From a quarter second after it, what was
 *   accepted is counted from that 429 on, unless a block has begun since: counted over the last
 *   second, a burst spent in slow start held the pace above a bucket's rate a second more, cut in
 *   steps (97, 94, 74, then 49 a second for a bucket of 50/s on the fake clock of
 *   `limiterKinds.test.ts`), each step refusing a few more. The exit's episode weighs first the
 *   answers of the requests in flight at that 429: where answers take long there are enough of
 *   them to measure a saturated upstream's rate a round trip sooner (a bucket of 50 emptied by
 *   slow start at 200 ms a request: 429s 14-17 to 9-14 on that fake clock).
 * - Each later 429 opens an episode that weighs the answers of the requests sent after it. A
 *   share refused of `SATURATED_SHARE` or more means the upstream is saturated: what it accepted
 *   per second meanwhile is its rate (a bucket refills at its rate however fast it is asked), and
 *   the edge, if those requests were sent faster than that. Fewer means the pace just crossed
 *   the edge: the pace goes back below the rate it was sent at and what was accepted over the
 *   last second, which is the edge (a window's limit).
 * - A 429 while the pace probes above the edge sends it back to the edge, which stands; each such
 *   probe doubles the wait before the next, and the wait is at least long enough for the refusals
 *   it cost to be `PROBE_REFUSAL_SHARE` of the requests meanwhile (a probe of a sliding log at 200
 *   ms a request cost 11 or 12: 55 429s in 20 s on the fake clock before, 28 now). A 429 at a
 *   rate held a whole second, after `NOISE_QUIET_MS` without one, is taken as noise (a stalled
 *   server or a late packet, which is enough for a bucket of one to refuse) unless another
 *   follows in the episode. 429s within a second of a block's end are its tail (a log full of
 *   the requests it refused).
 * - Between episodes the pace regains the edge by `REGROW_GAIN` a second, holds `PLATEAU_MS`,
 *   then probes above along a cubic, never more than `GROWTH_OVER_SENT` of what it actually sent
 *   (a client that cannot keep up does not pile up a pace it never used).
 * - Starts are spaced by the pace (`TOLERANCE_MS` early at most) and never more than the pace
 *   within any second (a sliding window's limit; at the plateau, the edge itself, whole: a window
 *   of 5 a second paced at 4.9 took 4), nor more than a `RateLimit-Limit` within its window once
 *   the headers have shown that it counts these requests.
 * - A block (a long `Retry-After`, or nothing but 429s since an episode began: a window used up,
 *   a quota) stops every start; one request probes alone, first after `FIRST_PROBE_MS` (or the
 *   `Retry-After`), then ever further apart with the block's age. A `Retry-After` in whole
 *   seconds is rounded up: where a whole number of seconds from the first accepted answer (then
 *   from each block's accepted probe) falls in its last second, the first probe goes then
 *   (`Block.guessWindowEnd`: a window of 500 per 10 s was waited out 0.7 s past its end). A
 *   window the pace used up (`WINDOW_SPENT_SHARE`) gives the edge, measured (what the last second
 *   accepted, counted: extrapolated from a shorter span, a sliding log of 5 a second at 200 ms a
 *   request was measured at 8.5, then 3, held 16 s): probing above it waits as after a refused
 *   probe.
 * - Refusals that keep coming whatever the pace (a server that refuses every fifth request, with
 *   no `Retry-After`) are noise, not a rate: each refusal-driven cut after slow start's exit,
 *   with `NOISE_SHARE_MIN` or more refused before it, is a trial (no other cut meanwhile, no
 *   regrowth above what was accepted before it), and once `NOISE_TRIAL_ANSWERS` answers of those
 *   sent after it show a share nearer the share before it than the one a rate limit would leave
 *   at the lower pace (none below a bucket's rate, `1 - accepted / pace` above it), the pace goes
 *   back to where it began and refusals at up to `NOISE_MARGIN` times that share (counted since)
 *   no longer cut it or move the edge. Shares below `NOISE_SHARE_MIN` are too rare to tell;
 *   `NOISE_SHARE_MAX` or more is never noise, learned or tolerated; a cut that would change a
 *   limit's share by less than `NOISE_SHARE_MIN` is not judged. A trial is judged on the refusals
 *   from the first accepted answer after its cut: those before are a window spent before the cut
 *   (judged with them, a window of 10 a second met at some phases was taken for noise, up to 144
 *   429s in 30 s); they still count against noise (nothing but 429s after a verdict is none).
 *   Without all this a client whose demand is below its pace (pages read one after another) cut
 *   below the accepted rate at each such 429 and spiralled down to `MIN_RATE` (every fifth
 *   refused: 1.2 req/s against a demand of 12; now 12, `limiterKinds.test.ts`).
 * - An upstream that caps requests in flight is recognised by the level its 429s start at
 *   (`InFlightCap`): the cap then bounds the starts, and those 429s do not lower the pace. A cap
 *   read from slow start's first 429 is on trial: the exit's cut waits until it is confirmed
 *   (slow start goes on within it) or dropped (the cut is made).
 * A configured rate is a hard ceiling; 0 paces nothing until a 429. Parts: `rateConstants.ts`,
 * `rateTypes.ts`, `StartLog.ts`, `episode.ts`, `RefusalNoise.ts`, `headerLimit.ts`, `paceSchedule.ts`,
 * `Block.ts`.
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
    if (this.#s.block.active && this.#s.block.probeInFlight) return undefined;
    if (this.#s.inFlight.full) return undefined;
    const at = Math.max(now, this.#s.block.startsFrom);
    if (this.#s.block.active || !Number.isFinite(this.#s.rate)) return at;
    return Math.max(
      at,
      this.#s.nextStartAt - TOLERANCE_MS,
      this.#s.log.windowFreeAt(now, this.#startsPerWindow, this.#s.headerLimit),
    );
  }

  /**
   * Starts allowed within any second: the pace, or at the plateau the edge it keeps `EDGE_SHARE`
   * below, whole (a window of 5 a second measured as 5, paced at 4.9, took 4 a second).
   */
  get #startsPerWindow(): number {
    const atPlateau = this.#s.rate >= plateau(this.#s) - 1e-6;
    return atPlateau
      ? Math.min(this.#s.ceiling, Math.max(this.#s.rate, this.#s.maxRate))
      : this.#s.rate;
  }

  /** Records a start at `now` (which `nextStartAt` allowed). */
  start(now: number): StartTicket {
    const probe = this.#s.block.started();
    const level = this.#s.inFlight.started();
    const ticket: StartTicket = {
      startedAt: now,
      pace: this.#s.rate,
      level,
      probe,
      refused: false,
      slowStart: this.#s.slowStart,
    };
    this.#s.log.forget(now, this.#s.headerLimit);
    this.#s.log.started(ticket);
    if (Number.isFinite(this.#s.rate)) {
      // GCRA: the theoretical start time moves one interval per start.
      this.#s.nextStartAt = Math.max(this.#s.nextStartAt, now) + 1000 / this.#s.rate;
    }
    return ticket;
  }

  /** An answer other than 429 (any status: the upstream processed the request). */
  accepted(ticket: StartTicket, now: number, headers?: AnswerHeaders): void {
    this.#s.log.forget(now, this.#s.headerLimit);
    this.#s.inFlight.answered(ticket, false, now);
    trialEnded(this.#s, now);
    this.#s.log.accepted(now);
    this.#s.noise.accepted(ticket);
    this.#s.windowFrom ??= now;
    if (ticket.probe) {
      this.#s.block.ended(now);
      this.#s.windowFrom = now;
      // Resume spaced from now: no burst.
      this.#s.nextStartAt = now;
      this.#s.lastUpdate = now;
      this.#s.episode = undefined;
    }
    const episode = this.#s.episode;
    if (episode) {
      episode.anyAccepted++;
      if (weighs(episode, ticket)) {
        countAccepted(episode, ticket, now);
        weigh(this.#s, now);
      }
    }
    if (headers) learnFromHeaders(this.#s, parseRateLimitState(headers, now), now);
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
    ticket.refused = true;
    if (ticket.probe && this.#s.block.probingGuess) {
      // A window's end guessed wrong (`Block.guessWindowEnd`): that is all this 429 says. Taken as
      // a refusal, it made the next one look like a limit crossed (no quiet before it): against a
      // sliding log of 500 per 10 s, the pace was cut to 8 a second for 17 s.
      this.#s.inFlight.unanswered();
      return { retryAt: this.#s.block.probeRefused(now, retryAfterMs), blocked: true };
    }
    this.#s.log.forget(now, this.#s.headerLimit);
    const capBefore = this.#s.inFlight.cap;
    const byCap = this.#s.inFlight.answered(ticket, true, now, this.#s.slowStart);
    if (
      this.#s.inFlight.cap < capBefore &&
      !Number.isFinite(capBefore) &&
      !this.#s.inFlight.onTrial
    ) {
      // A cap on requests in flight, just learned: its refusals said nothing of a rate.
      this.#s.maxRate = Number.POSITIVE_INFINITY;
      this.#s.episode = undefined;
    }
    trialEnded(this.#s, now);
    const previousRefusal = this.#s.lastRefusal;
    this.#s.lastRefusal = now;
    // What a refused probe cost: the requests in flight when it was refused (not a cap's, nor
    // a block's probe), refused after it.
    if (!byCap && !ticket.probe && ticket.startedAt < this.#s.probeFailedAt) this.#s.probeCost++;
    this.#s.noise.refused(ticket, byCap);
    if (headers) learnFromHeaders(this.#s, parseRateLimitState(headers, now), now);
    if (ticket.probe) {
      return { retryAt: this.#s.block.probeRefused(now, retryAfterMs), blocked: true };
    }
    const longWait = retryAfterMs !== undefined && retryAfterMs >= BLOCKING_RETRY_AFTER_MS;
    if (this.#s.block.active) {
      if (longWait) guessWindowEnd(this.#s, ticket, retryAfterMs, headers);
      return { retryAt: this.#s.block.startsFrom, blocked: true };
    }
    // A request sent before the last cut was refused for the old pace (slow start's exit weighs
    // those first); one refused for the number in flight says nothing of the pace.
    const fresh =
      !byCap && (ticket.startedAt >= this.#s.cutAt || inFlightAtExit(this.#s.episode, ticket));
    let refusingAll = false;
    if (this.#s.episode) refusingAll = countRefusal(this.#s.episode, ticket, fresh);
    else if (fresh) openEpisode(this.#s, ticket, now, previousRefusal);
    if (refusingAll) {
      // A window used up: no faster than what it accepted over the last one, counted, not
      // extrapolated from a shorter span (a sliding log of 5 a second, at 200 ms a request, was
      // measured at 8.5 a second, then 3). After a probe the edge stands (a log that counts
      // refusals refuses everything a while after one).
      if (!this.#s.episode?.probe) {
        const accepted = this.#s.log.acceptedOverWindow(now);
        if (this.#s.episode && accepted >= WINDOW_SPENT_SHARE * this.#s.rate) {
          // Measured: probing above it waits as after a probe refused now, which costs the 429s
          // so far and those of the requests still in flight.
          this.#s.failedProbes = Math.max(this.#s.failedProbes, 1);
          this.#s.probeFailedAt = now;
          this.#s.probeCost = this.#s.episode.anyRefused;
        }
        this.#s.maxRate = Math.max(MIN_RATE / EDGE_SHARE, accepted);
      }
      dropTrial(this.#s, now);
      cut(this.#s, now, plateau(this.#s));
      this.#s.episode = undefined;
    } else {
      weigh(this.#s, now);
    }
    if (hold && (longWait || refusingAll)) {
      beginBlock(this.#s, now);
      this.#s.block.hold(now, longWait ? retryAfterMs : FIRST_PROBE_MS);
      if (longWait) guessWindowEnd(this.#s, ticket, retryAfterMs, headers);
      return { retryAt: this.#s.block.startsFrom, blocked: true };
    }
    return { retryAt: now + (retryAfterMs ?? 0), blocked: false };
  }

  /** Good answers: slow start doubles; later the pace regains the edge, holds, then probes. */
  #grow(now: number): void {
    const last = this.#s.lastUpdate ?? now;
    this.#s.lastUpdate = now;
    if (!Number.isFinite(this.#s.rate) || this.#s.episode) return;
    const next = grownPace(this.#s.rate, now, last, {
      slowStart: this.#s.slowStart,
      maxRate: this.#s.maxRate,
      cutAt: this.#s.cutAt,
      plateauFrom: this.#s.plateauFrom,
      failedProbes: this.#s.failedProbes,
      probeCost: this.#s.probeCost,
    });
    const plateauRate = plateau(this.#s);
    if (!this.#s.slowStart && this.#s.rate < plateauRate && next >= plateauRate)
      this.#s.plateauFrom = now;
    const cap = this.#s.slowStart
      ? 2 * this.#s.log.sentRate(now, WINDOW_MS)
      : GROWTH_OVER_SENT * this.#s.log.sentRate(now, WINDOW_MS / 4);
    const grown = Math.min(next, cap, this.#s.noise.trialCeiling);
    this.#s.rate = Math.min(this.#s.ceiling, Math.max(this.#s.rate, grown));
  }
}
