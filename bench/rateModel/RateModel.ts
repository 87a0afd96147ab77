/**
 * An explicit model of one upstream's limit (docs/rate-control.md, "The model it should become"):
 * the accepted rate since the last cut estimates the limit, the pace holds just under it and
 * probes above it on a schedule, a cap bounds the requests in flight when refusals follow them,
 * and a block holds every start on a long `Retry-After` or a window spent. Decisions only, with the
 * clock passed in; the same calls as `AdaptiveRate`. A best attempt, measured on the fake-clock
 * matrix (`CLIENTS=model npm run bench:rate-model`); not wired into `RateLimiter`.
 */

/** Requests per second before anything is known. */
const START_RATE = 20;
/** The pace held under the estimate: room for arrival jitter. */
const HEADROOM = 0.98;
/** Startup doubles the pace this often while nothing is refused. */
const DOUBLING_MS = 400;
/** Starts, and accepted answers, are counted over this window. */
const WINDOW_MS = 1000;
/** The rate since a cut needs this many accepted answers (and is taken over twice as many). */
const ESTIMATE_ANSWERS = 8;
/** After a cut the pace holds this long, doubled per probe refused (at most 2^4), then probes. */
const HOLD_MS = 1000;
/** After a cut the pace stands this long, then regains the estimate by x2 a second. */
const REGROW_AFTER_MS = 250;
/** Probing: the pace is the plateau x (1 + this x t³), t seconds since the hold ended. */
const PROBE_GAIN = 0.002;
/** A `Retry-After` this long or longer holds every start. */
const BLOCKING_MS = 2000;
/** A block's first probe; later ones after a tenth of its age, at least this. */
const FIRST_PROBE_MS = 200;
/** Refusals in a row (a cap's aside) that make a block. */
const BLOCK_AFTER_REFUSALS = 4;
/** A cap needs this many answers accepted below the level refused. */
const CAP_EVIDENCE = 10;

export interface ModelTicket {
  readonly startedAt: number;
  readonly pace: number;
  /** Requests in flight when it started, itself included. */
  readonly level: number;
  readonly probe: boolean;
  refused: boolean;
}

export class RateModel {
  readonly #ceiling: number;
  #pace: number;
  #startup = true;
  /** The estimate of the limit (`Infinity` until a refusal). */
  #estimate = Number.POSITIVE_INFINITY;
  #cutAt = Number.NEGATIVE_INFINITY;
  #failedProbes = 0;
  #lastUpdate: number | undefined;
  #nextStart = Number.NEGATIVE_INFINITY;
  /** Accepted answer times since the last cut (from a block's end: of requests started since). */
  #sinceCut: number[] = [];
  /** Refusals since the last accepted answer (a cap's aside). */
  #refusedInARow = 0;
  #lastRefusal = Number.NEGATIVE_INFINITY;
  /** Starts (not refused) and accepted answers over the last window. */
  #starts: ModelTicket[] = [];
  #accepted: number[] = [];
  #firstStart: number | undefined;
  #inFlight = 0;
  #cap = Number.POSITIVE_INFINITY;
  /** Recent answers: level at start, refused. */
  #levels: Array<{ level: number; refused: boolean; at: number }> = [];
  #blocked = false;
  #heldUntil = Number.NEGATIVE_INFINITY;
  #blockFrom = 0;
  #blockEndedAt = Number.NEGATIVE_INFINITY;
  #acceptedSinceBlock = 0;
  #probeOut = false;
  /** When a fixed window would have opened at the latest: the first accepted answer, each block's end. */
  #windowFrom: number | undefined;

  constructor(settings: { requestsPerSecond?: number | undefined } = {}) {
    const configured = settings.requestsPerSecond;
    this.#ceiling = configured && configured > 0 ? configured : Number.POSITIVE_INFINITY;
    this.#pace = configured === undefined ? START_RATE : configured > 0 ? configured : Infinity;
  }

  get rate(): number {
    return this.#pace;
  }
  get maxRate(): number {
    return this.#estimate;
  }
  get concurrency(): number {
    return this.#cap;
  }
  get blocked(): boolean {
    return this.#blocked;
  }
  get blockStartedAt(): number {
    return this.#blockFrom;
  }

  nextStartAt(now: number): number | undefined {
    if (this.#inFlight >= this.#cap || (this.#blocked && this.#probeOut)) return undefined;
    const at = Math.max(now, this.#heldUntil);
    if (this.#blocked || !Number.isFinite(this.#pace)) return at;
    return Math.max(at, this.#nextStart - 1, this.#windowFreeAt(now));
  }

  start(now: number): ModelTicket {
    this.#inFlight++;
    const probe = this.#blocked;
    if (probe) this.#probeOut = true;
    const ticket = {
      startedAt: now,
      pace: this.#pace,
      level: this.#inFlight,
      probe,
      refused: false,
    };
    this.#forget(now);
    this.#firstStart ??= now;
    this.#starts.push(ticket);
    if (Number.isFinite(this.#pace))
      this.#nextStart = Math.max(this.#nextStart, now) + 1000 / this.#pace;
    return ticket;
  }

  accepted(ticket: ModelTicket, now: number): void {
    this.#answered(ticket, false, now);
    this.#accepted.push(now);
    this.#windowFrom ??= now;
    this.#sinceCut.push(now);
    this.#refusedInARow = 0;
    this.#acceptedSinceBlock++;
    if (ticket.probe) {
      this.#blocked = false;
      this.#probeOut = false;
      this.#heldUntil = Math.min(this.#heldUntil, now);
      this.#blockEndedAt = now;
      this.#acceptedSinceBlock = 0;
      // The rate since the cut is measured on the answers of requests started from here on.
      this.#sinceCut = [];
      this.#windowFrom = now;
      this.#nextStart = now;
      this.#lastUpdate = now;
    }
    this.#grow(now);
  }

  unanswered(ticket: ModelTicket): void {
    this.#inFlight--;
    if (ticket.probe) this.#probeOut = false;
  }

  refused(
    ticket: ModelTicket,
    now: number,
    retryAfterMs: number | undefined,
    headers?: { get(name: string): string | null } | Headers,
    hold = true,
  ): { retryAt: number; blocked: boolean } {
    ticket.refused = true;
    const byCap = this.#answered(ticket, true, now);
    const longWait = retryAfterMs !== undefined && retryAfterMs >= BLOCKING_MS;
    if (ticket.probe) {
      this.#probeOut = false;
      const wait =
        retryAfterMs !== undefined && retryAfterMs > 1000 ? retryAfterMs : this.#probeInterval(now);
      this.#heldUntil = Math.max(this.#heldUntil, now + wait);
      return { retryAt: this.#heldUntil, blocked: true };
    }
    if (this.#blocked) {
      if (longWait) this.#guessWindowEnd(ticket, retryAfterMs, headers);
      return { retryAt: this.#heldUntil, blocked: true };
    }
    // Soon after a block's end (fewer accepted since than half the estimate), refusals are its
    // tail (a log still full of the requests it refused): they may block again, measure nothing.
    const tail =
      now - this.#blockEndedAt < WINDOW_MS && this.#acceptedSinceBlock < this.#estimate / 2;
    if (!byCap) this.#refusedInARow++;
    // Nothing but refusals lately (a window spent, a quota), or a long wait: a block.
    const spent = this.#refusedInARow >= BLOCK_AFTER_REFUSALS;
    if (spent || (hold && longWait)) {
      // What the last second accepted is the limit; probing above it waits as after a refused probe.
      const probing = this.#probing;
      const measured = Math.max(1, this.#acceptedOverWindow(now));
      this.#cut(now, tail || probing ? Math.min(this.#estimate, measured * 2) : measured);
      this.#failedProbes++;
      if (hold) {
        this.#blocked = true;
        this.#blockFrom = now;
        this.#heldUntil = now + (longWait ? retryAfterMs : FIRST_PROBE_MS);
        if (longWait) this.#guessWindowEnd(ticket, retryAfterMs, headers);
        return { retryAt: this.#heldUntil, blocked: true };
      }
    } else if (
      !byCap &&
      (ticket.startedAt >= this.#cutAt
        ? this.#sinceCut.length > 0 || this.#startup
        : this.#saturated())
    ) {
      // A lone refusal (none in the window before), not probing, is noise: a stall, a request
      // that arrived early. A limit refuses again.
      const probing = this.#probing;
      const lone = !probing && now - this.#lastRefusal > WINDOW_MS;
      this.#lastRefusal = now;
      if (!lone) this.#cutToEstimate(now, tail);
    }
    return { retryAt: now + (retryAfterMs ?? 0), blocked: false };
  }

  /** Above the plateau by more than 1%: a refusal now is the probe's. */
  get #probing(): boolean {
    return this.#pace > this.#estimate * HEADROOM * 1.01;
  }

  /**
   * A refusal that cuts: in startup, its exit; while probing, back under the estimate; else the
   * limit is the lower of the rate since the cut and what the last second accepted.
   */
  #cutToEstimate(now: number, tail: boolean): void {
    if (this.#probing) {
      // A probe refused: back under the estimate, which rises halfway to what the last second
      // accepted if that is more (a bucket's burst refilled meanwhile is part of it); the next
      // probe waits longer unless this one found more.
      const found = this.#acceptedOverWindow(now);
      if (found < this.#estimate * 1.05) this.#failedProbes++;
      this.#cut(now, Math.max(1, found > this.#estimate ? (found + this.#estimate) / 2 : found));
      return;
    }
    if (this.#startup) {
      // Past the limit: back to what the last second accepted (a window's limit; a bucket's
      // rate and burst); the limit is at most what was sent, which the pace regains unless the
      // requests sent after this cut are refused too.
      const accepted = this.#acceptedOverWindow(now);
      this.#cut(now, Math.max(accepted, this.#sentRate(now, WINDOW_MS / 2)), HEADROOM * accepted);
      return;
    }
    const sinceCut = this.#rateSinceCut();
    // In a block's tail the last second is mostly the block's: only a rate since the cut under
    // the pace tells.
    if (tail && !this.#saturated()) return;
    const estimate = Math.min(
      sinceCut ?? Infinity,
      tail ? Infinity : this.#acceptedOverWindow(now),
    );
    this.#cut(now, Math.max(1, estimate));
  }

  /**
   * Accepted per second since the last cut, over its last 2 x `ESTIMATE_ANSWERS` accepted answers
   * (any request's: those in flight at the cut tell too), once there are `ESTIMATE_ANSWERS`.
   */
  #rateSinceCut(): number | undefined {
    const recent = this.#sinceCut.slice(-2 * ESTIMATE_ANSWERS);
    const n = recent.length;
    const span = n >= 2 ? (recent[n - 1] as number) - (recent[0] as number) : 0;
    return n >= ESTIMATE_ANSWERS && span > 0 ? ((n - 1) * 1000) / span : undefined;
  }

  /** A refusal of a request sent before the cut still cuts if the upstream accepts less than the pace. */
  #saturated(): boolean {
    const rate = this.#rateSinceCut();
    return rate !== undefined && rate < HEADROOM * this.#pace;
  }

  #cut(now: number, estimate: number, pace = HEADROOM * estimate): void {
    this.#startup = false;
    this.#estimate = estimate;
    this.#pace = Math.min(this.#ceiling, Math.max(1, pace));
    this.#cutAt = now;
    this.#lastUpdate = now;
    this.#sinceCut = [];
  }

  /** Startup doubles; later the pace holds under the estimate, then probes above it. */
  #grow(now: number): void {
    const last = this.#lastUpdate ?? now;
    this.#lastUpdate = now;
    if (!Number.isFinite(this.#pace)) return;
    const dt = (now - last) / 1000;
    let next: number;
    const plateau = HEADROOM * this.#estimate;
    if (this.#startup) {
      const sent = this.#sentRate(now, WINDOW_MS);
      next = Math.min(
        this.#pace * 2 ** ((now - last) / DOUBLING_MS),
        Math.max(2 * sent, this.#pace),
      );
    } else if (this.#pace < plateau) {
      if (now - this.#cutAt < REGROW_AFTER_MS) return;
      next = Math.min(plateau, this.#pace * 2 ** dt);
    } else {
      const holdMs = HOLD_MS * 2 ** Math.min(4, this.#failedProbes);
      if (now - this.#cutAt < holdMs) return;
      // Above the plateau along a cubic: slow near the estimate (a probe of a window or a log
      // costs the requests in flight), fast far from it (an estimate taken too low recovers).
      const t = (now - this.#cutAt - holdMs) / 1000;
      const sent = this.#sentRate(now, WINDOW_MS / 4);
      next = Math.min(plateau * (1 + PROBE_GAIN * t ** 3), Math.max(1.25 * sent, this.#pace));
    }
    this.#pace = Math.min(this.#ceiling, next);
  }

  /** Bookkeeping of an answer; for a refusal, whether a cap in flight explains it. */
  #answered(ticket: ModelTicket, refused: boolean, now: number): boolean {
    this.#inFlight--;
    this.#levels.push({ level: ticket.level, refused, at: now });
    while ((this.#levels[0]?.at ?? now) < now - 10 * WINDOW_MS) this.#levels.shift();
    if (!refused) return false;
    if (ticket.level > this.#cap) return true;
    if (Number.isFinite(this.#cap)) {
      this.#cap = Number.POSITIVE_INFINITY; // a refusal under the cap: it was a rate's
      return false;
    }
    // Refusals follow concurrency: refused at this level or above, never accepted there (one
    // answer on its way back aside), and enough accepted below with none refused there. In
    // startup one refusal at a small level will do (at larger ones every limit refuses the
    // overshoot at the run's highest levels); a refusal under the cap drops it.
    const level = ticket.level;
    const below = this.#levels.filter((a) => a.level < level);
    const above = this.#levels.filter((a) => a.level >= level);
    const refusedAbove = above.filter((a) => a.refused).length;
    if (
      level >= 2 &&
      (refusedAbove >= 2 || (this.#startup && level <= 4)) &&
      below.length >= CAP_EVIDENCE &&
      below.every((a) => !a.refused) &&
      above.length - refusedAbove <= 1
    ) {
      this.#cap = ticket.level - 1;
      return true;
    }
    return false;
  }

  /** When one more start fits: the pace within any window (the estimate at the plateau). */
  #windowFreeAt(now: number): number {
    this.#forget(now);
    const perWindow = Math.max(
      1,
      Math.floor(Math.max(this.#pace, Math.min(this.#estimate, this.#pace / HEADROOM))),
    );
    const live = this.#starts.filter((s) => !s.refused);
    if (live.length < perWindow) return now;
    return (live[live.length - perWindow] as ModelTicket).startedAt + WINDOW_MS + 5;
  }

  /** Starts per second over the last `spanMs` (a quarter second at least). */
  #sentRate(now: number, spanMs: number): number {
    this.#forget(now);
    const first = this.#firstStart ?? now;
    const span = Math.min(spanMs, Math.max(now - first, WINDOW_MS / 4));
    return (this.#starts.filter((s) => s.startedAt > now - span).length * 1000) / span;
  }

  /** Accepted per second over the last window, counted (over the run so far, if shorter). */
  #acceptedOverWindow(now: number): number {
    this.#forget(now);
    const span = Math.min(WINDOW_MS, Math.max(now - (this.#firstStart ?? now), WINDOW_MS / 4));
    return (this.#accepted.length * 1000) / span;
  }

  #forget(now: number): void {
    while ((this.#starts[0]?.startedAt ?? now) <= now - WINDOW_MS - 5) this.#starts.shift();
    while ((this.#accepted[0] ?? now) <= now - WINDOW_MS) this.#accepted.shift();
  }

  #probeInterval(now: number): number {
    return Math.max(FIRST_PROBE_MS, 0.1 * (now - this.#blockFrom));
  }

  /**
   * A `Retry-After` in whole seconds is rounded up: a fixed window that opened at a first request
   * ends a whole number of seconds after `#windowFrom`; if one such time falls in the header's
   * last second, the first probe goes then.
   */
  #guessWindowEnd(
    ticket: ModelTicket,
    retryAfterMs: number,
    headers: { get(name: string): string | null } | undefined,
  ): void {
    const value = headers?.get("retry-after")?.trim();
    if (!value || !/^\d+$/.test(value) || this.#windowFrom === undefined) return;
    const endsAfter = ticket.startedAt + retryAfterMs - 1000;
    const seconds = Math.max(1, Math.floor((endsAfter - this.#windowFrom) / 1000) + 1);
    const guess = this.#windowFrom + seconds * 1000;
    if (guess <= this.#heldUntil - 100) this.#heldUntil = Math.max(guess, endsAfter);
  }
}
