/**
 * The request rate to one upstream, learned from its answers: the decisions only, with the clock
 * passed in, so the logic is tested without timers (the `RateLimiter` does the waiting).
 *
 * Modelled on the AWS SDK's adaptive retry mode (a client-side rate with CUBIC recovery, capped
 * at twice the measured send rate) and on TCP congestion control (slow start, one reduction per
 * round, a sender that probes after a loss of everything):
 * - slow start: from a moderate rate, the rate doubles every `SLOW_START_DOUBLING_MS` while the
 *   answers are good;
 * - a 429 sets the learned maximum to what the upstream accepted over the last second and the rate
 *   to `BETA` of it; the rate then grows back along a CUBIC curve (fast below the maximum, flat
 *   around it, faster again only after a long time without a 429);
 * - `RateLimit-*` / `X-RateLimit-*` headers give the limit before any 429, and `Remaining: 0`
 *   with a far `Reset` holds everyone until then;
 * - a block (a long `Retry-After`, or a second 429 for requests sent after the rate was lowered,
 *   with nothing accepted in between) stops every start; at its end one request probes, alone,
 *   until one is accepted; without `Retry-After` the probes grow apart with the block's length.
 * Starts are spaced by the rate (with a little catch-up) and never more than the rate within any
 * second (a configured rate is a hard ceiling).
 */
import { parseRateLimitState, type RateLimitState } from "./retryPolicy";

/** Requests per second before anything is known. */
export const START_RATE = 20;
/** Slow start: the rate doubles this often while answers are good. */
export const SLOW_START_DOUBLING_MS = 400;
/** After a 429, the rate is this share of what the upstream accepted over the last second. */
export const BETA = 0.95;
/** CUBIC's scale (requests per second per second cubed): how soon the rate probes past the maximum. */
export const CUBIC_SCALE = 0.02;
/** The rate never falls below this (requests per second). */
export const MIN_RATE = 1;
/**
 * Starts may catch up this much of the rate's time that went unused (a token bucket's depth), so
 * a late timer or a busy event loop does not lower the rate; the window below still bounds them.
 */
export const BURST_SECONDS = 0.2;
/** The window over which accepted requests are counted (the common 1-second limit window). */
export const WINDOW_MS = 1000;
/**
 * A request reaches the upstream a little after it is started here (the event loop, the socket):
 * the window that bounds starts is this much longer than the upstream's, so that a late arrival
 * does not land in the upstream's next window on top of a full one.
 */
export const ARRIVAL_SKEW_MS = 20;
/**
 * Refusals of requests sent after the rate was lowered, with none of them accepted, that make a
 * block (a quota, not a rate): this many, or one a whole window after the reduction.
 */
export const BLOCK_AFTER_REFUSALS = 3;
/** A `RateLimit-Limit` per window up to this long is taken as a rate; a longer one as an allowance. */
export const RATE_WINDOW_MAX_MS = 10_000;
/** A `Retry-After` at least this long holds every request, not only the refused one. */
export const BLOCKING_RETRY_AFTER_MS = 2000;
/** Without `Retry-After`, a block is probed after this long, then after this share of its age so far (10%: a 90 s block is overshot by 9 s at most). */
export const FIRST_PROBE_MS = 2000;
export const PROBE_SHARE_OF_BLOCK = 0.1;
export const MAX_PROBE_INTERVAL_MS = 120_000;

export interface AdaptiveRateSettings {
  /**
   * The configured `..._REQUESTS_PER_SECOND`: unset, adapt from `START_RATE` with no ceiling;
   * 0, no client-side ceiling and no pacing until the upstream answers 429; N, start at N and
   * never exceed it.
   */
  requestsPerSecond?: number | undefined;
}

/** One request as the controller saw it start. */
export interface StartTicket {
  readonly startedAt: number;
  /** The request sent alone to find out whether a block is over. */
  readonly probe: boolean;
  /** Answered 429: no longer counted as accepted. */
  refused: boolean;
}

/** What a 429 means for the refused request: wait until `retryAt` before trying again. */
export interface RefusalVerdict {
  retryAt: number;
  /** Every start is held (a block); the refused request's retry is the probe or follows it. */
  blocked: boolean;
}

export class AdaptiveRate {
  readonly #ceiling: number;
  #rate: number;
  #slowStart = true;
  /** CUBIC: the learned maximum, when it was learned, and the time to regain it (seconds). */
  #maxRate = Number.POSITIVE_INFINITY;
  #reducedAt = Number.NEGATIVE_INFINITY;
  #regainSeconds = 0;
  /** Requests accepted by a request sent after the last reduction: a 429 then is not a block. */
  #acceptedSinceReduction = 0;
  #refusedSinceReduction = 0;
  #lastUpdate: number | undefined;
  #firstStart: number | undefined;
  /** The pace's theoretical next start (GCRA). */
  #nextStartAt = 0;
  /** Starts within the last window (oldest first), and answers accepted within it. */
  readonly #starts: StartTicket[] = [];
  readonly #accepted: number[] = [];
  /** A block: no start before `#heldUntil`; then one probe at a time until one is accepted. */
  #heldUntil = 0;
  #blocked = false;
  #blockStartedAt = 0;
  #probeInFlight = false;
  /** The upstream's own window, from its headers: the longest `Reset` seen (ms). */
  #headerWindowMs = WINDOW_MS;
  /** The rate its headers last gave (`Limit` per window): no use probing past it. */
  #headerRate = Number.POSITIVE_INFINITY;

  constructor(settings: AdaptiveRateSettings = {}) {
    const configured = settings.requestsPerSecond;
    this.#ceiling =
      configured === undefined || configured <= 0 ? Number.POSITIVE_INFINITY : configured;
    this.#rate =
      configured === undefined
        ? START_RATE
        : configured <= 0
          ? Number.POSITIVE_INFINITY
          : configured;
  }

  /** The current rate in requests per second (`Infinity`: not paced). */
  get rate(): number {
    return this.#rate;
  }

  /** The rate learned as the upstream's maximum (`Infinity` until a 429 or a header says). */
  get maxRate(): number {
    return this.#maxRate;
  }

  get blocked(): boolean {
    return this.#blocked;
  }

  /** When the current (or last) block began. */
  get blockStartedAt(): number {
    return this.#blockStartedAt;
  }

  /**
   * When the next request may start: `now` or later, or `undefined` while a probe is out (wait
   * for its answer). Does not reserve anything; call `start` when it is time.
   */
  nextStartAt(now: number): number | undefined {
    if (this.#blocked && this.#probeInFlight) return undefined;
    let at = Math.max(now, this.#heldUntil);
    if (this.#blocked) return at;
    if (Number.isFinite(this.#rate)) {
      const paced = this.#nextStartAt - BURST_SECONDS * 1000;
      at = Math.max(at, paced, this.#windowFreeAt(now));
    }
    return at;
  }

  /** Records a start at `now` (which `nextStartAt` allowed). */
  start(now: number): StartTicket {
    this.#firstStart ??= now;
    const probe = this.#blocked;
    if (probe) this.#probeInFlight = true;
    const ticket: StartTicket = { startedAt: now, probe, refused: false };
    this.#forget(now);
    this.#starts.push(ticket);
    if (Number.isFinite(this.#rate)) {
      // GCRA: the theoretical start time moves one interval per start; starts may run up to
      // BURST_SECONDS ahead of it.
      this.#nextStartAt = Math.max(this.#nextStartAt, now) + 1000 / this.#rate;
    }
    return ticket;
  }

  /** An answer other than 429 (any status: the upstream processed the request). */
  accepted(ticket: StartTicket, now: number, headers?: Headers): void {
    this.#forget(now);
    this.#accepted.push(now);
    if (ticket.startedAt >= this.#reducedAt) this.#acceptedSinceReduction++;
    if (ticket.probe) {
      this.#probeInFlight = false;
      this.#blocked = false;
      // Resume from the rate learned before the block, spaced from now: no burst.
      this.#nextStartAt = now + BURST_SECONDS * 1000;
      this.#lastUpdate = now;
    }
    if (headers) this.#learnFromHeaders(parseRateLimitState(headers, now), now);
    this.#grow(now);
  }

  /** No answer (network error, timeout, abort): nothing learned; a probe may be sent again. */
  unanswered(ticket: StartTicket): void {
    if (ticket.probe) this.#probeInFlight = false;
  }

  /**
   * A 429, with its `Retry-After` in ms if any: lowers the rate or blocks, and says when to retry.
   * `hold: false` (a caller that waits elsewhere, such as a queue worker) learns the rate only:
   * no block holds the requests that come after it.
   */
  refused(
    ticket: StartTicket,
    now: number,
    retryAfterMs: number | undefined,
    headers?: Headers,
    hold = true,
  ): RefusalVerdict {
    ticket.refused = true;
    this.#forget(now);
    if (headers) this.#learnFromHeaders(parseRateLimitState(headers, now), now);
    if (ticket.probe) {
      this.#probeInFlight = false;
      this.#hold(now, retryAfterMs ?? this.#probeIntervalMs(now));
      return { retryAt: this.#heldUntil, blocked: true };
    }
    if (this.#blocked) return { retryAt: this.#heldUntil, blocked: true };
    // A request sent before the last reduction was refused for the old rate: it waits, no more.
    const fresh = ticket.startedAt >= this.#reducedAt;
    const reduced = Number.isFinite(this.#reducedAt);
    if (fresh && reduced) this.#refusedSinceReduction++;
    const refusingAll =
      fresh &&
      reduced &&
      this.#acceptedSinceReduction === 0 &&
      (this.#refusedSinceReduction >= BLOCK_AFTER_REFUSALS || now - this.#reducedAt >= WINDOW_MS);
    // One reduction a window at most: the accepted rate it is based on is measured over one.
    const settled =
      !reduced || (this.#acceptedSinceReduction > 0 && now - this.#reducedAt >= WINDOW_MS);
    if (fresh && !refusingAll && settled) {
      this.#reduce(now);
    }
    if (
      hold &&
      ((retryAfterMs !== undefined && retryAfterMs >= BLOCKING_RETRY_AFTER_MS) || refusingAll)
    ) {
      this.#blocked = true;
      this.#blockStartedAt = now;
      this.#hold(now, retryAfterMs ?? FIRST_PROBE_MS);
      return { retryAt: this.#heldUntil, blocked: true };
    }
    return { retryAt: now + (retryAfterMs ?? 0), blocked: false };
  }

  /**
   * The rate lowered to `BETA` of what was accepted over the last second (or of the last maximum,
   * when that is higher); CUBIC starts again.
   */
  #reduce(now: number): void {
    const elapsed = now - (this.#firstStart ?? now);
    const span = Math.min(WINDOW_MS, Math.max(elapsed, WINDOW_MS / 4)) / 1000;
    const acceptedRate = this.#accepted.length / span;
    // Not below BETA of the last maximum at one go: a client that sends less than its rate allows
    // (one list read page by page) would otherwise take its own demand for the upstream's limit.
    const floor = Number.isFinite(this.#maxRate) ? BETA * this.#maxRate : 0;
    this.#maxRate = Math.max(MIN_RATE / BETA, acceptedRate, floor);
    this.#rate = Math.min(this.#ceiling, Math.max(MIN_RATE, BETA * this.#maxRate));
    this.#slowStart = false;
    this.#startCubic(now);
  }

  #startCubic(now: number): void {
    this.#reducedAt = now;
    this.#acceptedSinceReduction = 0;
    this.#refusedSinceReduction = 0;
    this.#regainSeconds = Math.cbrt((this.#maxRate * (1 - BETA)) / CUBIC_SCALE);
    this.#lastUpdate = now;
  }

  /** Good answers: slow start doubles, CUBIC follows its curve; never above the ceiling. */
  #grow(now: number): void {
    const last = this.#lastUpdate ?? now;
    this.#lastUpdate = now;
    if (!Number.isFinite(this.#rate)) return;
    let next: number;
    if (this.#slowStart) {
      next = this.#rate * 2 ** ((now - last) / SLOW_START_DOUBLING_MS);
    } else {
      const t = (now - this.#reducedAt) / 1000 - this.#regainSeconds;
      next = Math.max(this.#rate, this.#maxRate + CUBIC_SCALE * t ** 3);
    }
    // Growing far past what is actually sent would only store up a burst (AWS SDK: 2x measured).
    const sent = this.#measuredRate(now);
    const bound = Math.min(this.#ceiling, this.#headerRate);
    this.#rate = Math.min(bound, Math.max(this.#rate, Math.min(next, 2 * sent)));
  }

  /**
   * `Limit` per window (the longest `Reset` seen), for a window of `RATE_WINDOW_MAX_MS` or less,
   * is the upstream's rate: slow start stops below it and the rate grows to it, not past it, with
   * no 429 needed. A longer window (5,000 an hour) is an allowance, not a pace: it is spent as
   * fast as the rate allows, and `Remaining: 0` with a far `Reset` holds every start until then
   * (the first one after is a probe).
   */
  #learnFromHeaders(state: RateLimitState | undefined, now: number): void {
    if (!state) return;
    if (state.resetMs !== undefined) {
      this.#headerWindowMs = Math.max(this.#headerWindowMs, state.resetMs);
    }
    if (
      state.limit !== undefined &&
      state.limit > 0 &&
      this.#headerWindowMs <= RATE_WINDOW_MAX_MS
    ) {
      const limitRate = state.limit / (this.#headerWindowMs / 1000);
      this.#headerRate = limitRate;
      if (limitRate !== this.#maxRate && (this.#slowStart || limitRate < this.#maxRate)) {
        this.#maxRate = limitRate;
        this.#slowStart = false;
        this.#rate = Math.min(this.#ceiling, BETA * limitRate);
        this.#startCubic(now);
      }
    }
    if (
      state.remaining === 0 &&
      state.resetMs !== undefined &&
      state.resetMs >= BLOCKING_RETRY_AFTER_MS &&
      !this.#blocked
    ) {
      this.#blocked = true;
      this.#blockStartedAt = now;
      this.#hold(now, state.resetMs);
    }
  }

  #hold(now: number, ms: number): void {
    this.#heldUntil = Math.max(this.#heldUntil, now + ms);
  }

  /** Without `Retry-After`: a share of the block's age, so the end is overshot by that share at most. */
  #probeIntervalMs(now: number): number {
    const age = now - this.#blockStartedAt;
    return Math.min(MAX_PROBE_INTERVAL_MS, Math.max(FIRST_PROBE_MS, PROBE_SHARE_OF_BLOCK * age));
  }

  /** When one more start fits the last window at the current rate: a hard bound per second. */
  #windowFreeAt(now: number): number {
    this.#forget(now);
    const cap = Math.max(1, Math.floor(this.#rate));
    const counted = this.#starts.filter((s) => !s.refused);
    if (counted.length < cap) return now;
    return (counted[counted.length - cap] as StartTicket).startedAt + WINDOW_MS + ARRIVAL_SKEW_MS;
  }

  #measuredRate(now: number): number {
    this.#forget(now);
    const elapsed = now - (this.#firstStart ?? now);
    const span = Math.min(WINDOW_MS, Math.max(elapsed, WINDOW_MS / 4)) / 1000;
    return this.#starts.filter((s) => s.startedAt > now - WINDOW_MS).length / span;
  }

  #forget(now: number): void {
    const since = now - WINDOW_MS - ARRIVAL_SKEW_MS;
    while (this.#starts.length > 0 && (this.#starts[0] as StartTicket).startedAt <= since) {
      this.#starts.shift();
    }
    while (this.#accepted.length > 0 && (this.#accepted[0] as number) <= now - WINDOW_MS) {
      this.#accepted.shift();
    }
  }
}
