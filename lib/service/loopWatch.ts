import { performance } from "node:perf_hooks";

/** How often the watch's timer is due, and the lag past which the loop counts as stuck. */
export const LOOP_TICK_MS = 1_000;
export const LOOP_STUCK_AFTER_MS = 10_000;

/** What `check` tells (`GET /livez`'s body). */
export interface LoopState {
  alive: boolean;
  /** How late the last tick ran, ms. */
  lagMs: number;
  /** Time since the last tick ran, ms. */
  sinceTickMs: number;
  /** Why the loop counts as stuck (only when it does). */
  reason?: string;
}

export interface LoopWatchOptions {
  /** Default LOOP_TICK_MS. */
  tickMs?: number;
  /** Default LOOP_STUCK_AFTER_MS. */
  stuckAfterMs?: number;
  /** A monotonic clock in ms; default `performance.now` (a wall clock step is no lag). */
  now?: () => number;
}

/**
 * Whether the process's event loop turns (`GET /livez`): a timer due every `tickMs` notes when it
 * ran and how late. Stuck while the last tick was late by `stuckAfterMs` or more, or the next one
 * is overdue by as much. A loop blocked outright answers no probe (the probe times out, which a
 * kubelet or HEALTHCHECK counts as a failure too); the first probe it answers after a block that
 * long, and every probe of a loop that keeps lagging that long between turns, gets 503. One tick
 * on time after the lag ends makes it alive again.
 */
export class LoopWatch {
  readonly #timer: NodeJS.Timeout;
  readonly #tickMs: number;
  readonly #stuckAfterMs: number;
  readonly #now: () => number;
  #lastTickAt: number;
  #lagMs = 0;

  constructor(options: LoopWatchOptions = {}) {
    this.#tickMs = options.tickMs ?? LOOP_TICK_MS;
    this.#stuckAfterMs = options.stuckAfterMs ?? LOOP_STUCK_AFTER_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#lastTickAt = this.#now();
    this.#timer = setInterval(() => {
      const now = this.#now();
      this.#lagMs = Math.max(0, Math.round(now - this.#lastTickAt - this.#tickMs));
      this.#lastTickAt = now;
    }, this.#tickMs);
    this.#timer.unref();
  }

  /** The loop's state now: alive, the last measured lag and the time since the last tick. */
  check(): LoopState {
    const sinceTickMs = Math.round(this.#now() - this.#lastTickAt);
    const lateMs = Math.max(this.#lagMs, sinceTickMs - this.#tickMs);
    if (lateMs < this.#stuckAfterMs) return { alive: true, lagMs: this.#lagMs, sinceTickMs };
    return {
      alive: false,
      lagMs: this.#lagMs,
      sinceTickMs,
      reason: `the event loop was ${lateMs} ms late on its ${this.#tickMs} ms timer (stuck at ${this.#stuckAfterMs} ms or more)`,
    };
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
