/** How often the watch's timer is due, and the lag past which the loop counts as stuck. */
export const LOOP_TICK_MS = 1_000;
export const LOOP_STUCK_AFTER_MS = 10_000;

/**
 * Whether the process's event loop turns (`GET /livez`): a timer due every LOOP_TICK_MS notes when
 * it ran and how late. Alive while the last tick is recent and was not late by LOOP_STUCK_AFTER_MS
 * (a loop blocked that long answers no probe meanwhile, and says so on the first after).
 */
export class LoopWatch {
  readonly #timer: NodeJS.Timeout;
  #lastTickAt = Date.now();
  #lagMs = 0;

  constructor() {
    this.#timer = setInterval(() => {
      const now = Date.now();
      this.#lagMs = Math.max(0, now - this.#lastTickAt - LOOP_TICK_MS);
      this.#lastTickAt = now;
    }, LOOP_TICK_MS);
    this.#timer.unref();
  }

  /** The loop's state now: alive, and the last measured lag and the time since the last tick. */
  check(now = Date.now()): { alive: boolean; lagMs: number; sinceTickMs: number } {
    const sinceTickMs = now - this.#lastTickAt;
    const alive =
      this.#lagMs < LOOP_STUCK_AFTER_MS && sinceTickMs < LOOP_TICK_MS + LOOP_STUCK_AFTER_MS;
    return { alive, lagMs: this.#lagMs, sinceTickMs };
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
