import { type HeaderSource, RateModel, type RateState, type Ticket, type Verdict } from "../rate";
import { abortableWait } from "./abortListeners";

export interface RateLimiterSettings {
  /** Requests in flight at once. */
  maxConcurrency: number;
  /**
   * The configured request rate (`RateModel`): unset, learned from the upstream's answers; 0,
   * not paced until the upstream answers 429; N, never more than N per second.
   */
  requestsPerSecond?: number | undefined;
}

/** How a request waits for its start. */
export interface AcquireOptions {
  signal?: AbortSignal | undefined;
  /**
   * Give up (resolve `undefined`) once this time has passed while held by the upstream's limit:
   * the request's own first 429, or the start of the block it waits behind, plus its wait budget.
   */
  budget?: { since: number | undefined; ms: number } | undefined;
  /**
   * Higher starts first (default 0); equals in arrival order. A list's pages are read one after
   * another, so its next page waiting behind a crowd of other requests delays the whole sync.
   */
  priority?: number | undefined;
}

/** A request waiting for its turn: its priority, and its place in arrival order. */
interface Waiter {
  priority: number;
  seq: number;
}

/**
 * The learned rate just after an answer that moved it (`RateLimiter.takeChange`): a trace of the
 * controller's decisions, for `--verbose` and the bench.
 */
export interface RateChange {
  /**
   * What moved, comma-joined: `pace cut`, `edge learned` (the model's estimate), `cap learned`
   * (or `cap dropped`: a 429 it cannot explain), `blocked`, `block over`.
   */
  moved: string;
  /**
   * Milliseconds since the limiter was made: with the upstream's client (the command line's start;
   * in the service, each sync's; in the cloud, since the worker's container first shared the rate).
   */
  atMs: number;
  /** The pace, requests per second (absent: not paced). */
  pace?: number;
  /** The edge, what the upstream was learned to sustain, requests per second. */
  edge?: number;
  /** The cap on requests in flight learned. */
  inFlightCap?: number;
}

/** What a model's state shows of its decisions: pace, edge and cap (`Infinity`: none), a block. */
export interface RateView {
  pace: number;
  edge: number;
  cap: number;
  blocked: boolean;
}

export function rateView(state: RateState): RateView {
  const rate = new RateModel(state);
  return { pace: rate.rate, edge: rate.maxRate, cap: rate.concurrency, blocked: rate.blocked };
}

/** What moved from `seen` to `state` (the pace's growth is no move), or `undefined`. */
export function rateChange(seen: RateView, state: RateView, atMs: number): RateChange | undefined {
  const moved = [
    state.pace < 0.99 * seen.pace && "pace cut",
    state.edge !== seen.edge && "edge learned",
    state.cap !== seen.cap && (Number.isFinite(state.cap) ? "cap learned" : "cap dropped"),
    state.blocked !== seen.blocked && (state.blocked ? "blocked" : "block over"),
  ].filter((what) => what !== false);
  if (moved.length === 0) return undefined;
  const rounded = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : undefined);
  return {
    moved: moved.join(", "),
    atMs,
    pace: rounded(state.pace),
    edge: rounded(state.edge),
    inFlightCap: rounded(state.cap),
  };
}

/** One request's place: report its answer exactly once, which frees its concurrency slot. */
export interface Permit {
  /** When it started (ms): a 429's wait ends once a request started later is accepted (`untilRetry`). */
  readonly startedAt: number;
  /** Any answer but 429: the upstream processed the request. */
  accepted(headers?: HeaderSource): void;
  /**
   * A 429: when this request may try again, and whether everyone is held (never if not `hold`);
   * `startedAt`, when it started, for `untilRetry`.
   */
  refused(
    retryAfterMs: number | undefined,
    headers?: HeaderSource,
    hold?: boolean,
  ): Verdict & { startedAt: number };
  /** No answer at all. */
  unanswered(): void;
}

/**
 * Bounds the requests to one upstream: at most `maxConcurrency` in flight (fewer when the
 * `RateModel` has learned that the upstream caps them), started no faster than it allows, and
 * none while a block holds them (one probe at a time after it).
 */
export class RateLimiter {
  readonly #maxConcurrency: number;
  readonly #rate: RateModel;
  #inFlight = 0;
  /** The latest start of a request the upstream accepted (`untilRetry`). */
  #admittedStart = Number.NEGATIVE_INFINITY;
  #arrivals = 0;
  readonly #slotQueue: Array<Waiter & { grant: () => void }> = [];
  /** Requests holding a slot and waiting for their start; only the first in line may take one. */
  readonly #starting = new Set<Waiter>();
  /** Waiters for a change of the rate's state (an answer, a block lifted). */
  readonly #listeners = new Set<() => void>();
  readonly #madeAt = Date.now();
  /** The rate's state when `takeChange` last looked. */
  #seen: RateView;

  constructor(settings: RateLimiterSettings) {
    if (settings.maxConcurrency < 1) throw new RangeError("maxConcurrency must be at least 1");
    this.#maxConcurrency = settings.maxConcurrency;
    this.#rate = new RateModel({ requestsPerSecond: settings.requestsPerSecond });
    this.#seen = rateView(this.#rate.state);
  }

  /**
   * The rate (requests per second) learned the upstream sustains, the `RateModel`'s edge; 0
   * until a 429 or a `RateLimit-Limit` taught one (a configured rate is a ceiling, not learned).
   */
  get learnedRate(): number {
    const edge = this.#rate.maxRate;
    return Number.isFinite(edge) ? edge : 0;
  }

  /**
   * What moved in the learned rate since the last call (a cut of the pace, a new edge or cap, a
   * block begun or over), or `undefined`; the pace's growth is not a move. Called after each
   * answer, so each decision is reported once, by the answer that caused it.
   */
  takeChange(now = Date.now()): RateChange | undefined {
    const seen = this.#seen;
    this.#seen = rateView(this.#rate.state);
    return rateChange(seen, this.#seen, now - this.#madeAt);
  }

  /**
   * Waits for the request's turn; `undefined` when its rate-limit budget ran out first. Rejects
   * with the signal's reason when it fires.
   */
  async acquire(options: AcquireOptions = {}): Promise<Permit | undefined> {
    const { signal, budget } = options;
    const deadline = () => {
      const since = budget?.since ?? (this.#rate.blocked ? this.#rate.blockStartedAt : undefined);
      return budget && since !== undefined ? since + budget.ms : Number.POSITIVE_INFINITY;
    };
    const waiter: Waiter = { priority: options.priority ?? 0, seq: this.#arrivals++ };
    await this.#takeSlot(waiter);
    this.#starting.add(waiter);
    try {
      for (;;) {
        signal?.throwIfAborted();
        const now = Date.now();
        const at = this.#rate.nextStartAt(now);
        const until = deadline();
        const first = this.#isFirst(waiter);
        if (first && at !== undefined && at <= now) break;
        if ((at ?? Number.POSITIVE_INFINITY) > until && now >= until) {
          this.#starting.delete(waiter);
          this.#release();
          return undefined;
        }
        // Behind another: woken when it starts (or gives up), or at this request's own deadline.
        const wakeAt = first ? Math.min(at ?? until, until) : until;
        await this.#waitForChange(wakeAt - now, signal);
      }
    } catch (error) {
      this.#starting.delete(waiter);
      this.#release();
      throw error;
    }
    this.#starting.delete(waiter);
    const permit = this.#permit(this.#rate.start(Date.now()));
    this.#notify();
    return permit;
  }

  /**
   * A refused request's wait for its `Retry-After` (`at`) when it held no one else: over at `at`,
   * or as soon as a request that started after it (at `startedAt`) is accepted. The header
   * cannot say less than a second, and a bucket that refills every 20 ms says 1: a request after
   * the refused one accepted shows the upstream admits again, and the retry then goes at the pace
   * like any other start. A log that refuses everything for a while after a refusal accepts
   * nothing meanwhile, and the header's wait stands.
   */
  async untilRetry(at: number, startedAt: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = Date.now();
      if (now >= at || this.#admittedStart > startedAt) return;
      await this.#waitForChange(at - now, signal);
    }
  }

  /** Whether no other waiting request goes before `waiter`. */
  #isFirst(waiter: Waiter): boolean {
    for (const other of this.#starting) {
      if (other !== waiter && goesBefore(other, waiter)) return false;
    }
    return true;
  }

  #permit(ticket: Ticket): Permit {
    let done = false;
    const finish = () => {
      if (done) throw new Error("a permit reports one answer");
      done = true;
    };
    return {
      startedAt: ticket.startedAt,
      accepted: (headers) => {
        finish();
        this.#rate.accepted(ticket, Date.now(), headers);
        this.#admittedStart = Math.max(this.#admittedStart, ticket.startedAt);
        this.#release();
      },
      refused: (retryAfterMs, headers, hold) => {
        finish();
        const verdict = this.#rate.refused(ticket, Date.now(), retryAfterMs, headers, hold);
        this.#release();
        return { ...verdict, startedAt: ticket.startedAt };
      },
      unanswered: () => {
        finish();
        this.#rate.unanswered(ticket);
        this.#release();
      },
    };
  }

  async #takeSlot(waiter: Waiter): Promise<void> {
    if (this.#inFlight < this.#maxConcurrency) {
      this.#inFlight++;
      return;
    }
    // The releasing request hands its slot over directly, so #inFlight stays the same.
    await new Promise<void>((grant) => this.#slotQueue.push({ ...waiter, grant }));
  }

  #release(): void {
    let next = 0;
    for (let i = 1; i < this.#slotQueue.length; i++) {
      if (goesBefore(this.#slotQueue[i] as Waiter, this.#slotQueue[next] as Waiter)) next = i;
    }
    const [waiting] = this.#slotQueue.splice(next, 1);
    if (waiting) waiting.grant();
    else this.#inFlight--;
    this.#notify();
  }

  /** Wakes every waiter to look again: an answer, a start or a departure changed the state. */
  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * Sleeps `ms` (forever when not finite), or until an answer changes the rate's state; rejects
   * when the signal fires (`abortableWait`).
   */
  async #waitForChange(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const { done, wake } = abortableWait(ms, signal);
    this.#listeners.add(wake);
    try {
      await done;
    } finally {
      this.#listeners.delete(wake);
    }
  }
}

function goesBefore(a: Waiter, b: Waiter): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
}
