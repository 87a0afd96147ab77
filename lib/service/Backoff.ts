export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
}

/**
 * Waits between attempts while something stays out of reach: doubling from `baseMs` up to
 * `maxMs`, each wait drawn between half and all of its step (so hosts that lost the platform
 * together do not come back together). `reset` after a success.
 */
export class Backoff {
  readonly #settings: BackoffSettings;
  readonly #random: () => number;
  #failures = 0;

  constructor(settings: BackoffSettings, random: () => number = Math.random) {
    this.#settings = settings;
    this.#random = random;
  }

  /** Failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Counts a failure and returns how long to wait before the next attempt. */
  next(): number {
    this.#failures++;
    const step = Math.min(
      this.#settings.maxMs,
      this.#settings.baseMs * 2 ** Math.min(this.#failures - 1, 30),
    );
    return Math.round(step / 2 + (this.#random() * step) / 2);
  }

  reset(): void {
    this.#failures = 0;
  }
}
