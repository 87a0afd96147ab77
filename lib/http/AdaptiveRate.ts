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
 *   more than a bucket's rate, whose burst it includes).
 * - Each later 429 opens an episode that weighs the answers of the requests sent after it. A
 *   share refused of `SATURATED_SHARE` or more means the upstream is saturated: what it accepted
 *   per second meanwhile is its rate (a bucket refills at its rate however fast it is asked), and
 *   the edge. Fewer means the pace just crossed the edge: the pace goes back below the rate it was
 *   sent at and what was accepted over the last second, which is the edge (a window's limit).
 * - A 429 while the pace probes above the edge sends it back to the edge, which stands; each such
 *   probe doubles the wait before the next. A 429 at a rate held a whole second, after
 *   `NOISE_QUIET_MS` without one, is taken as noise (a stalled server or a late packet, which is
 *   enough for a bucket of one to refuse) unless another follows in the episode. 429s within a
 *   second of a block's end are its tail (a log full of the requests it refused).
 * - Between episodes the pace regains the edge by `REGROW_GAIN` a second, holds `PLATEAU_MS`,
 *   then probes above along a cubic, never more than `GROWTH_OVER_SENT` of what it actually sent
 *   (a client that cannot keep up does not pile up a pace it never used).
 * - Starts are spaced by the pace (`TOLERANCE_MS` early at most) and never more than the pace
 *   within any second (a sliding window's limit), nor more than a `RateLimit-Limit` within its
 *   window once the headers have shown that it counts these requests.
 * - A block (a long `Retry-After`, or nothing but 429s since an episode began: a window used up,
 *   a quota) stops every start; one request probes alone, first after `FIRST_PROBE_MS`, then ever
 *   further apart with the block's age.
 * - Refusals that keep coming whatever the pace (a server that refuses every fifth request, with
 *   no `Retry-After`) are noise, not a rate: each refusal-driven cut is a trial, and once
 *   `EPISODE_ANSWERS` answers of requests sent after it show a refused share nearer the share
 *   before it than the one a rate limit would leave at the lower pace (none below a bucket's
 *   rate, `1 - accepted / pace` above it), the pace goes back to where the trial began and
 *   refusals at up to `NOISE_MARGIN` times that share (counted since) no longer cut it or move
 *   the edge. Shares below `NOISE_SHARE_MIN` are too rare to tell; `NOISE_SHARE_MAX` or more is
 *   never noise. Without this a client whose demand is below its pace (pages read one after
 *   another) cut below the accepted rate at each such 429 and spiralled down to `MIN_RATE`
 *   (every fifth refused: 1.2 req/s against a demand of 12; now 12, `limiterKinds.test.ts`).
 * - An upstream that caps requests in flight is recognised by the level its 429s start at
 *   (`InFlightCap`): the cap then bounds the starts, and those 429s do not lower the pace.
 * A configured rate is a hard ceiling; 0 paces nothing until a 429.
 */
import { InFlightCap } from "./inFlightCap";
import { parseRateLimitState, type RateLimitState } from "./retryPolicy";

/** Requests per second before anything is known. */
export const START_RATE = 20;
/** A 429 cuts the rate the workers of a cloud run share to this share (`lib/cloud/sharedRate.ts`). */
export const BETA = 0.95;
/** Slow start: the pace doubles this often while answers are good. */
export const SLOW_START_DOUBLING_MS = 400;
/** The pace kept below the learned edge: room for arrival jitter. */
export const EDGE_SHARE = 0.98;
/** An episode weighs the answers of at least this long, and at least this many. */
export const EPISODE_MS = 100;
export const EPISODE_ANSWERS = 6;
/** A saturated episode measures the upstream's rate from this many accepted answers (or gives up). */
export const EPISODE_ACCEPTED = 8;
export const EPISODE_MAX_MS = 400;
/** A share refused in an episode that means saturation rather than an edge just crossed. */
export const SATURATED_SHARE = 0.2;
/** The rate a request was sent at: starts per second over this long before it (its pace at most). */
export const SENT_SPAN_MS = 500;
/**
 * A refusal at a rate within this share of one held for a whole window, after this long without
 * a refusal, is taken as noise.
 */
export const NOISE_SHARE = 0.9;
export const NOISE_QUIET_MS = 2000;
/** After a cut, the pace stays this long before regaining the edge. */
export const REGROW_AFTER_MS = 250;
/** Regaining the edge: this factor a second. */
export const REGROW_GAIN = 2;
/**
 * At the edge, the pace holds this long before probing above it, twice as long after each probe
 * refused (up to 2 ^ `MAX_PROBE_BACKOFF` times).
 */
export const PLATEAU_MS = 1000;
export const MAX_PROBE_BACKOFF = 4;
/** Above the plateau by more than this share, the pace is probing. */
export const PROBE_MARGIN = 0.01;
/** Probing above the edge: a cubic of this scale (requests per second per second cubed). */
export const CUBIC_SCALE = 0.1;
/** Outside slow start the pace never exceeds what was sent over the last quarter second by more. */
export const GROWTH_OVER_SENT = 1.25;
/** The pace never falls below this (requests per second). */
export const MIN_RATE = 1;
/** Starts may run this far ahead of their even spacing (a late timer is not a lost start). */
export const TOLERANCE_MS = 1;
/** The window over which starts are bounded and accepted requests counted. */
export const WINDOW_MS = 1000;
/** Starts are bounded over a window this much longer than the upstream's (arrival skew). */
export const ARRIVAL_SKEW_MS = 5;
/** Answers refused, and none accepted, since an episode began, that make a block. */
export const BLOCK_AFTER_REFUSALS = 3;
/** A refused share up to this many times the noise learned does not cut; this much or more never is noise. */
export const NOISE_MARGIN = 2;
export const NOISE_SHARE_MAX = 0.5;
/** Refusals rarer than this share, before a cut or after it, are not weighed as noise (too few to tell). */
export const NOISE_SHARE_MIN = 0.1;
/** A `RateLimit-Limit` below this is not taken as a rate (a bucket's burst, a cap in flight). */
export const HEADER_LIMIT_MIN = 10;
/** A `RateLimit-Limit` per window up to this long may be a rate; a longer one is an allowance. */
export const RATE_WINDOW_MAX_MS = 10_000;
/** A `Retry-After` at least this long holds every request, not only the refused one. */
export const BLOCKING_RETRY_AFTER_MS = 2000;
/**
 * A block is probed after `FIRST_PROBE_MS`, then after a quarter of its age so far up to
 * `EARLY_PROBE_MAX_MS` (a window of a second ends within a fifth of a second of a probe), then
 * after `PROBE_SHARE_OF_BLOCK` of its age (a 90 s quota is overshot by 9 s at most).
 */
export const FIRST_PROBE_MS = 200;
export const EARLY_PROBE_SHARE = 0.25;
export const EARLY_PROBE_MAX_MS = 2000;
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
  /** The pace it started at. */
  readonly pace: number;
  /** Requests in flight when it started, itself included. */
  readonly level: number;
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

/** The answers weighed after a refusal, to tell saturation from an edge just crossed. */
interface Episode {
  from: number;
  /** The rate the refused request was sent at: starts per second over `SENT_SPAN_MS` before it. */
  sent: number;
  /** Accepted per second over the window before it. */
  acceptedRate: number;
  /** The first refusal after slow start. */
  exit: boolean;
  /** A refusal while the pace probed above the learned edge: back to the plateau, the edge kept. */
  probe: boolean;
  /** Within a window of a block's end: what it refuses is the block's tail (a log still full). */
  afterBlock: boolean;
  /** The rate sent over the window before it, if that window had no refusal (else 0). */
  sustained: number;
  /** A refusal at a rate held a window without one: noise unless another follows. */
  suspect: boolean;
  /** Answers of requests sent after it began: accepted (their times) and refused. */
  accepted: number[];
  refused: number;
  /** Every answer since it began, earlier requests' included. */
  anyAccepted: number;
  anyRefused: number;
}

/** A refusal-driven cut on trial: the pace and edge before it, and the refused share that led to it. */
interface CutTrial {
  pace: number;
  maxRate: number;
  share: number;
}

/** What `RateLimit-*` headers showed: a limit per window, once it is shown to count requests. */
interface HeaderLimit {
  limit: number;
  windowMs: number;
  /** `Remaining` fell to half the limit or below: the limit counts these requests. */
  counted: boolean;
}

export class AdaptiveRate {
  readonly #ceiling: number;
  #rate: number;
  #slowStart = true;
  /** The learned edge (`Infinity` until a 429 or a header says). */
  #maxRate = Number.POSITIVE_INFINITY;
  /** When the pace was last cut, and since when it has stood at the plateau. */
  #cutAt = Number.NEGATIVE_INFINITY;
  #plateauFrom = 0;
  /** Probes above the edge refused since it was learned: each doubles the plateau before the next. */
  #failedProbes = 0;
  #lastUpdate: number | undefined;
  #firstStart: number | undefined;
  /** The pace's theoretical next start (GCRA). */
  #nextStartAt = Number.NEGATIVE_INFINITY;
  /** Starts within the longest window bounded (oldest first), and answers accepted within one. */
  readonly #starts: StartTicket[] = [];
  readonly #accepted: number[] = [];
  #episode: Episode | undefined;
  #lastRefusal = Number.NEGATIVE_INFINITY;
  /** Answers of requests started from `from` on (a 429 for the number in flight not counted). */
  #tally = { from: Number.NEGATIVE_INFINITY, accepted: 0, refused: 0 };
  #trial: CutTrial | undefined;
  /** The refused share shown not to fall with the pace (0: none shown). */
  #noiseShare = 0;
  readonly #inFlight = new InFlightCap();
  /** A block: no start before `#heldUntil`; then one probe at a time until one is accepted. */
  #heldUntil = 0;
  #blocked = false;
  #blockStartedAt = 0;
  #blockEndedAt = Number.NEGATIVE_INFINITY;
  #probeInFlight = false;
  #headerLimit: HeaderLimit | undefined;
  /** A `Limit` shown not to be a rate (more accepted within its window): never taken as one. */
  #headerDisproved: number | undefined;

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

  /** The current pace in requests per second (`Infinity`: not paced). */
  get rate(): number {
    return this.#rate;
  }

  /** The edge: the rate the upstream was learned to sustain (`Infinity` until a 429 or a header says). */
  get maxRate(): number {
    return this.#maxRate;
  }

  /** The cap on requests in flight learned (`Infinity`: none). */
  get concurrency(): number {
    return this.#inFlight.cap;
  }

  get blocked(): boolean {
    return this.#blocked;
  }

  /** When the current (or last) block began. */
  get blockStartedAt(): number {
    return this.#blockStartedAt;
  }

  /**
   * When the next request may start: `now` or later, or `undefined` while a probe is out or the
   * learned cap on requests in flight is reached (wait for an answer). Does not reserve anything;
   * call `start` when it is time.
   */
  nextStartAt(now: number): number | undefined {
    if (this.#blocked && this.#probeInFlight) return undefined;
    if (this.#inFlight.full) return undefined;
    const at = Math.max(now, this.#heldUntil);
    if (this.#blocked || !Number.isFinite(this.#rate)) return at;
    return Math.max(at, this.#nextStartAt - TOLERANCE_MS, this.#windowFreeAt(now));
  }

  /** Records a start at `now` (which `nextStartAt` allowed). */
  start(now: number): StartTicket {
    this.#firstStart ??= now;
    const probe = this.#blocked;
    if (probe) this.#probeInFlight = true;
    const level = this.#inFlight.started();
    const ticket: StartTicket = { startedAt: now, pace: this.#rate, level, probe, refused: false };
    this.#forget(now);
    this.#starts.push(ticket);
    if (Number.isFinite(this.#rate)) {
      // GCRA: the theoretical start time moves one interval per start.
      this.#nextStartAt = Math.max(this.#nextStartAt, now) + 1000 / this.#rate;
    }
    return ticket;
  }

  /** An answer other than 429 (any status: the upstream processed the request). */
  accepted(ticket: StartTicket, now: number, headers?: Headers): void {
    this.#forget(now);
    this.#inFlight.answered(ticket.level, false, now);
    this.#accepted.push(now);
    if (ticket.startedAt >= this.#tally.from) this.#tally.accepted++;
    if (ticket.probe) {
      this.#probeInFlight = false;
      this.#blocked = false;
      this.#blockEndedAt = now;
      // Resume spaced from now: no burst.
      this.#nextStartAt = now;
      this.#lastUpdate = now;
      this.#episode = undefined;
    }
    const episode = this.#episode;
    if (episode) {
      episode.anyAccepted++;
      if (ticket.startedAt >= episode.from) {
        episode.accepted.push(now);
        this.#weigh(now);
      }
    }
    if (headers) this.#learnFromHeaders(parseRateLimitState(headers, now), now);
    this.#grow(now);
  }

  /** No answer (network error, timeout, abort): nothing learned; a probe may be sent again. */
  unanswered(ticket: StartTicket): void {
    this.#inFlight.unanswered();
    if (ticket.probe) this.#probeInFlight = false;
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
    headers?: Headers,
    hold = true,
  ): RefusalVerdict {
    ticket.refused = true;
    this.#forget(now);
    const capBefore = this.#inFlight.cap;
    const byCap = this.#inFlight.answered(ticket.level, true, now);
    if (this.#inFlight.cap < capBefore && !Number.isFinite(capBefore)) {
      // A cap on requests in flight, just learned: its refusals said nothing of a rate.
      this.#maxRate = Number.POSITIVE_INFINITY;
      this.#episode = undefined;
    }
    const previousRefusal = this.#lastRefusal;
    this.#lastRefusal = now;
    if (!byCap && !ticket.probe && ticket.startedAt >= this.#tally.from) this.#tally.refused++;
    if (headers) this.#learnFromHeaders(parseRateLimitState(headers, now), now);
    if (ticket.probe) {
      this.#probeInFlight = false;
      // "Retry-After: 1" is the least the header can say: a window may end well within it.
      const longer = retryAfterMs !== undefined && retryAfterMs > 1000;
      this.#hold(now, longer ? retryAfterMs : this.#probeIntervalMs(now));
      return { retryAt: this.#heldUntil, blocked: true };
    }
    if (this.#blocked) return { retryAt: this.#heldUntil, blocked: true };
    // A request sent before the last cut was refused for the old pace; one refused for the number
    // in flight says nothing of the pace.
    const fresh = ticket.startedAt >= this.#cutAt && !byCap;
    let refusingAll = false;
    if (this.#episode) refusingAll = this.#countRefusal(this.#episode, ticket, fresh);
    else if (fresh) this.#openEpisode(ticket, now, previousRefusal);
    if (refusingAll) {
      // A window used up: no faster than what it accepted over the last one. After a probe the
      // edge stands (a log that counts refusals refuses everything a while after one).
      if (!this.#episode?.probe) {
        this.#maxRate = Math.max(MIN_RATE / EDGE_SHARE, this.#acceptedRate(now));
      }
      this.#cut(now, EDGE_SHARE * this.#maxRate);
      this.#episode = undefined;
    } else {
      this.#weigh(now);
    }
    const longWait = retryAfterMs !== undefined && retryAfterMs >= BLOCKING_RETRY_AFTER_MS;
    if (hold && (longWait || refusingAll)) {
      this.#blocked = true;
      this.#blockStartedAt = now;
      this.#hold(now, longWait ? retryAfterMs : FIRST_PROBE_MS);
      return { retryAt: this.#heldUntil, blocked: true };
    }
    return { retryAt: now + (retryAfterMs ?? 0), blocked: false };
  }

  /** The first refusal of an episode. */
  #openEpisode(ticket: StartTicket, now: number, previousRefusal: number): void {
    if (this.#noise()) return;
    const sent = this.#sentBefore(ticket, SENT_SPAN_MS);
    const acceptedRate = this.#acceptedRate(now);
    const sustained =
      previousRefusal <= ticket.startedAt - WINDOW_MS && !this.#slowStart
        ? this.#sentBefore(ticket, WINDOW_MS)
        : 0;
    const quiet = previousRefusal <= ticket.startedAt - NOISE_QUIET_MS;
    const plateau = EDGE_SHARE * this.#maxRate;
    const probing = !this.#slowStart && this.#rate > plateau * (1 + PROBE_MARGIN);
    const episode: Episode = {
      from: now,
      sent,
      acceptedRate,
      exit: this.#slowStart,
      probe: probing,
      afterBlock: now - this.#blockEndedAt < WINDOW_MS,
      sustained,
      suspect: !probing && quiet && sustained >= NOISE_SHARE * sent,
      accepted: [],
      refused: 0,
      anyAccepted: 0,
      anyRefused: 1,
    };
    if (this.#slowStart) {
      // Past the edge: back to what was accepted while finding out how far past.
      this.#slowStart = false;
      if (this.#followsPace(now)) {
        this.#maxRate = sent;
        this.#cut(now, EDGE_SHARE * acceptedRate);
      }
    } else if (probing) {
      // The probe found the edge: back to the plateau and probe later next time; an edge learned
      // too low (from a transient) rises halfway to what was accepted over the window, if higher
      // (a bucket's, refilled while below its rate, includes its burst).
      this.#failedProbes++;
      const seen = Math.min(sent, acceptedRate);
      if (seen > this.#maxRate) this.#maxRate = (this.#maxRate + seen) / 2;
      this.#cut(now, EDGE_SHARE * this.#maxRate);
    } else if (!episode.suspect) {
      this.#cutBelow(now, episode);
    }
    this.#episode = episode;
  }

  /** A later refusal in an episode; whether every answer since it began has been a refusal. */
  #countRefusal(episode: Episode, ticket: StartTicket, fresh: boolean): boolean {
    episode.anyRefused++;
    if (fresh && ticket.startedAt >= episode.from) episode.refused++;
    const none = episode.anyAccepted === 0 && episode.anyRefused > BLOCK_AFTER_REFUSALS;
    const nearlyNone =
      episode.refused >= BLOCK_AFTER_REFUSALS && episode.accepted.length <= 0.1 * episode.refused;
    return none || nearlyNone;
  }

  /** Once an episode has enough answers: saturation, an edge crossed, or noise. */
  #weigh(now: number): void {
    const e = this.#episode;
    if (!e) return;
    const answered = e.accepted.length + e.refused;
    const saturated = e.refused >= SATURATED_SHARE * Math.max(1, answered) && e.refused > 0;
    const done =
      now - e.from >= EPISODE_MAX_MS ||
      (now - e.from >= EPISODE_MS &&
        answered >= EPISODE_ANSWERS &&
        (!saturated || e.accepted.length >= EPISODE_ACCEPTED));
    if (!done) return;
    this.#episode = undefined;
    if (e.suspect && e.refused === 0) return;
    if (e.suspect) this.#cutBelow(now, e);
    if (e.afterBlock) return;
    if (saturated && this.#followsPace(now)) {
      // What the upstream accepted per second while refusing the rest is its rate; a rate held
      // a whole window before is not above it (a log that counts refusals accepts ever fewer).
      this.#learnEdge(acceptedPerSecond(e, now), e.sustained);
      this.#cut(now, Math.min(this.#rate, EDGE_SHARE * this.#maxRate));
    } else if (!e.exit && !e.probe && !this.#noise()) {
      // Crossed: the edge is what the upstream accepted over the window before (a window's limit).
      this.#learnEdge(e.acceptedRate);
    }
  }

  /** A new edge: probing above it starts over from its first plateau if it moved. */
  #learnEdge(...rates: number[]): void {
    const edge = Math.max(MIN_RATE / EDGE_SHARE, ...rates);
    if (Math.abs(edge - this.#maxRate) > PROBE_MARGIN * 5 * this.#maxRate) this.#failedProbes = 0;
    this.#maxRate = edge;
  }

  /** Back below the rate the refused request was sent at and what was accepted over the window. */
  #cutBelow(now: number, e: Episode): void {
    if (!this.#followsPace(now)) return;
    this.#cut(now, Math.min(this.#rate, EDGE_SHARE * Math.min(e.sent, e.acceptedRate)));
  }

  /**
   * Whether refusals call for a cut: not while their share is noise. A cut follows, and is on
   * trial until `EPISODE_ANSWERS` answers of requests sent after it: if the share refused did not
   * fall as a limit's would at the lower pace, the pace and edge go back to the trial's.
   */
  #followsPace(now: number): boolean {
    const tally = this.#tally;
    const answered = tally.accepted + tally.refused;
    const share = tally.refused / Math.max(1, answered);
    const judged =
      answered >= EPISODE_ANSWERS && share >= NOISE_SHARE_MIN && share < NOISE_SHARE_MAX;
    if (this.#noise()) return false;
    const trial = this.#trial;
    if (trial && judged && trial.share >= NOISE_SHARE_MIN) {
      const limited = Math.max(0, 1 - ((1 - trial.share) * trial.pace) / this.#rate);
      if (share >= (trial.share + limited) / 2) {
        this.#noiseShare = Math.max(this.#noiseShare, share);
        this.#trial = undefined;
        this.#rate = Math.min(this.#ceiling, Math.max(this.#rate, trial.pace));
        this.#maxRate = Math.max(this.#maxRate, trial.maxRate);
        this.#tally = { from: now, accepted: 0, refused: 0 };
        return false;
      }
    }
    if (!trial || answered >= EPISODE_ANSWERS) {
      this.#trial = { pace: this.#rate, maxRate: this.#maxRate, share };
      this.#tally = { from: now, accepted: 0, refused: 0 };
    }
    return true;
  }

  /** Refusals within the noise learned, or too few answers yet to tell. */
  #noise(): boolean {
    const { accepted, refused } = this.#tally;
    const answered = accepted + refused;
    return (
      this.#noiseShare > 0 &&
      (answered < EPISODE_ANSWERS || refused <= NOISE_MARGIN * this.#noiseShare * answered)
    );
  }

  #cut(now: number, rate: number): void {
    this.#rate = Math.min(this.#ceiling, Math.max(MIN_RATE, rate));
    this.#cutAt = now;
    this.#plateauFrom = now;
    this.#lastUpdate = now;
  }

  /** Good answers: slow start doubles; later the pace regains the edge, holds, then probes. */
  #grow(now: number): void {
    const last = this.#lastUpdate ?? now;
    this.#lastUpdate = now;
    if (!Number.isFinite(this.#rate) || this.#episode) return;
    let next: number;
    let cap: number;
    if (this.#slowStart) {
      next = this.#rate * 2 ** ((now - last) / SLOW_START_DOUBLING_MS);
      cap = 2 * this.#sentRate(now, WINDOW_MS);
    } else {
      const plateau = EDGE_SHARE * this.#maxRate;
      if (now - this.#cutAt < REGROW_AFTER_MS) {
        next = this.#rate;
      } else if (this.#rate < plateau) {
        next = Math.min(plateau, this.#rate * REGROW_GAIN ** ((now - last) / 1000));
        if (next >= plateau) this.#plateauFrom = now;
      } else {
        const plateauMs = PLATEAU_MS * 2 ** Math.min(this.#failedProbes, MAX_PROBE_BACKOFF);
        const t = Math.max(0, (now - this.#plateauFrom - plateauMs) / 1000);
        next = plateau + CUBIC_SCALE * t ** 3;
      }
      cap = GROWTH_OVER_SENT * this.#sentRate(now, WINDOW_MS / 4);
    }
    this.#rate = Math.min(this.#ceiling, Math.max(this.#rate, Math.min(next, cap)));
  }

  /**
   * `RateLimit-Limit` (or `X-`) per window (the longest `Reset` seen, of `RATE_WINDOW_MAX_MS` at
   * most) is a rate only if it counts these requests: `Remaining` fell to half of it, and no more
   * than it were accepted within a window (a bucket's `Limit` is its burst, a cap's its requests in
   * flight: more than that pass in a second), and it is `HEADER_LIMIT_MIN` or more. Then starts
   * never exceed it in its window, and the edge is no higher. A longer window (5,000 an hour) is
   * an allowance, spent at the learned rate. `Remaining: 0` with a far `Reset` holds every start
   * until then (a probe goes first).
   */
  #learnFromHeaders(state: RateLimitState | undefined, now: number): void {
    if (!state) return;
    const { limit, remaining, resetMs } = state;
    if (
      limit !== undefined &&
      limit >= HEADER_LIMIT_MIN &&
      limit !== this.#headerDisproved &&
      resetMs !== undefined &&
      resetMs >= WINDOW_MS
    ) {
      const windowMs = Math.max(this.#headerLimit?.windowMs ?? 0, resetMs);
      const counted =
        (this.#headerLimit?.limit === limit && this.#headerLimit.counted) ||
        (remaining !== undefined && remaining <= limit / 2);
      this.#headerLimit = windowMs <= RATE_WINDOW_MAX_MS ? { limit, windowMs, counted } : undefined;
    }
    const header = this.#headerLimit;
    if (header?.counted) {
      if (this.#acceptedWithin(now, header.windowMs) > header.limit + 1) {
        this.#headerDisproved = header.limit;
        this.#headerLimit = undefined;
      } else {
        const rate = (header.limit * 1000) / header.windowMs;
        if (rate < this.#maxRate) {
          this.#maxRate = rate;
          this.#slowStart = false;
          this.#cut(now, Math.min(this.#rate, EDGE_SHARE * rate));
        }
      }
    }
    if (remaining === 0 && resetMs !== undefined && resetMs >= BLOCKING_RETRY_AFTER_MS) {
      if (!this.#blocked) {
        this.#blocked = true;
        this.#blockStartedAt = now;
      }
      this.#hold(now, resetMs);
    }
  }

  #hold(now: number, ms: number): void {
    this.#heldUntil = Math.max(this.#heldUntil, now + ms);
  }

  /** Without a long `Retry-After`: a share of the block's age, so its end is overshot by that much at most. */
  #probeIntervalMs(now: number): number {
    const age = now - this.#blockStartedAt;
    const early = Math.min(EARLY_PROBE_MAX_MS, EARLY_PROBE_SHARE * age);
    return Math.min(
      MAX_PROBE_INTERVAL_MS,
      Math.max(FIRST_PROBE_MS, early, PROBE_SHARE_OF_BLOCK * age),
    );
  }

  /** When one more start fits: the pace within any second, a header's limit within its window. */
  #windowFreeAt(now: number): number {
    this.#forget(now);
    let at = this.#freeAt(now, Math.max(1, Math.floor(this.#rate)), WINDOW_MS);
    const header = this.#headerLimit;
    if (header?.counted) at = Math.max(at, this.#freeAt(now, header.limit, header.windowMs));
    return Math.max(now, at);
  }

  /** When fewer than `cap` accepted-so-far starts lie within the last `windowMs` (plus skew). */
  #freeAt(now: number, cap: number, windowMs: number): number {
    let seen = 0;
    for (let i = this.#starts.length - 1; i >= 0; i--) {
      const start = this.#starts[i] as StartTicket;
      if (start.startedAt <= now - windowMs - ARRIVAL_SKEW_MS) break;
      if (start.refused) continue;
      seen++;
      if (seen >= cap) return start.startedAt + windowMs + ARRIVAL_SKEW_MS;
    }
    return Number.NEGATIVE_INFINITY;
  }

  /** Starts per second over `spanMs` up to `ticket`'s: within `GROWTH_OVER_SENT` of its pace. */
  #sentBefore(ticket: StartTicket, spanMs: number): number {
    const elapsed = ticket.startedAt - (this.#firstStart ?? ticket.startedAt);
    const span = Math.min(spanMs, Math.max(elapsed, WINDOW_MS / 4));
    let n = 0;
    for (const start of this.#starts) {
      if (start.startedAt > ticket.startedAt - span && start.startedAt <= ticket.startedAt) n++;
    }
    const sent = (n * 1000) / span;
    if (!Number.isFinite(ticket.pace)) return sent;
    // Never more than the pace; never less than the pace allows it to lead by (counts are coarse).
    return Math.min(ticket.pace, Math.max(sent, ticket.pace / GROWTH_OVER_SENT));
  }

  /** Accepted per second over the last window (at least a quarter window of the run). */
  #acceptedRate(now: number): number {
    const elapsed = now - (this.#firstStart ?? now);
    const span = Math.min(WINDOW_MS, Math.max(elapsed, WINDOW_MS / 4));
    return (this.#acceptedWithin(now, span) * 1000) / span;
  }

  #acceptedWithin(now: number, spanMs: number): number {
    let n = 0;
    for (let i = this.#accepted.length - 1; i >= 0; i--) {
      if ((this.#accepted[i] as number) <= now - spanMs) break;
      n++;
    }
    return n;
  }

  /** Starts per second over the last `spanMs` (at least a quarter window of the run). */
  #sentRate(now: number, spanMs: number): number {
    const elapsed = now - (this.#firstStart ?? now);
    const span = Math.min(spanMs, Math.max(elapsed, WINDOW_MS / 4));
    let n = 0;
    for (let i = this.#starts.length - 1; i >= 0; i--) {
      if ((this.#starts[i] as StartTicket).startedAt <= now - span) break;
      n++;
    }
    return (n * 1000) / span;
  }

  #forget(now: number): void {
    const keep = Math.max(WINDOW_MS, this.#headerLimit?.windowMs ?? 0) + ARRIVAL_SKEW_MS;
    while (this.#starts.length > 0 && (this.#starts[0] as StartTicket).startedAt <= now - keep) {
      this.#starts.shift();
    }
    while (this.#accepted.length > 0 && (this.#accepted[0] as number) <= now - keep) {
      this.#accepted.shift();
    }
  }
}

/** Accepted per second among an episode's answers: between the first and last accepted. */
function acceptedPerSecond(e: Episode, now: number): number {
  const n = e.accepted.length;
  if (n < 2) return (n * 1000) / Math.max(1, now - e.from);
  const span = (e.accepted[n - 1] as number) - (e.accepted[0] as number);
  return ((n - 1) * 1000) / Math.max(1, span);
}
